import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { Database } from '../../src/db/database.js';
import { migrate } from '../../src/db/migrate.js';
import { migrations } from '../../src/db/migrations/index.js';
import { createUser as insertUser, userClash } from '../../src/features/users/user-store.js';
import { admin, backends, dump, startApp } from '../helpers.js';

const TAKEN = {
  code: 'USERNAME_EXISTS',
  name: 'NameExistsError',
  message: 'A user with this username already exists.',
};

for (const backend of backends) {
  describe(`usernames on ${backend.name}`, () => {
    let cleanup: () => Promise<void>;
    let db: Database;
    let app: FastifyInstance;

    before(async () => {
      const opened = await backend.open();
      db = opened.db;
      cleanup = opened.cleanup;
      app = await startApp(db, { signupsPerMinute: 1000 });
    });
    after(async () => {
      await app.close();
      await cleanup();
    });

    const createUser = (payload: object) =>
      app.inject({ method: 'POST', url: '/api/admin/user-admin', headers: admin, payload });
    const users = () => db.query('SELECT id, username, email FROM users ORDER BY id');

    it('are unique whatever their case: a taken one is a 409 on the admin API; a signup creates nothing and says nothing', async () => {
      assert.equal((await createUser({ username: 'Grace', rootRole: 'Viewer' })).statusCode, 201);
      const state = await users();
      for (const username of ['Grace', 'grace', 'GRACE']) {
        const taken = await createUser({ username, email: `${username}@example.com`, rootRole: 3 });
        assert.equal(taken.statusCode, 409, username);
        assert.deepEqual(taken.json(), { ...TAKEN, details: [{ message: TAKEN.message }] });
      }
      const link = await app.inject({
        method: 'POST',
        url: '/api/admin/invite-link/tokens',
        headers: admin,
        payload: { name: 'invite', expiresAt: new Date(Date.now() + 3_600_000).toISOString() },
      });
      const { secret } = link.json();
      const signup = await app.inject({
        method: 'POST',
        url: `/invite/${secret}/signup`,
        payload: { name: 'G', email: 'g@example.com', username: 'gRaCe' },
      });
      // A signup does not reveal that the name is taken (see signup-tokens.test.ts).
      assert.equal(signup.statusCode, 202);
      assert.equal(signup.headers['set-cookie'], undefined);
      assert.deepEqual(await users(), state, 'nothing was created');
      // Users without a username do not clash with each other.
      assert.equal((await createUser({ email: 'a@example.com', rootRole: 3 })).statusCode, 201);
      assert.equal((await createUser({ email: 'b@example.com', rootRole: 3 })).statusCode, 201);
    });

    it('turns a clash the checks missed (a concurrent insert) into the same 409s', async () => {
      const insert = (user: { username?: string; email?: string }) =>
        db.transaction((tx) => insertUser(tx, { ...user, rootRoleId: 3 })).catch((e) => e);
      assert.equal(userClash(await insert({ username: 'GRACE' }))?.code, 'USERNAME_EXISTS');
      assert.equal(userClash(await insert({ email: 'A@example.com' }))?.code, 'USER_EXISTS');
      assert.equal(userClash(new Error('other')), undefined);
    });
  });

  describe(`migration 12 on duplicate usernames (${backend.name})`, () => {
    it('stops with a message naming them and changes nothing', async () => {
      const { db, cleanup } = await backend.open();
      try {
        await migrate(
          db,
          migrations.filter((migration) => migration.version <= 11),
        );
        await db.query(
          "INSERT INTO users (username, email) VALUES ('Bob', 'b1@example.com'), ('bob', 'b2@example.com'), ('alice', null), ('ALICE', null), ('carol', null)",
        );
        const state = await dump(db);
        await assert.rejects(migrate(db), (error: Error) => {
          assert.match(error.message, /usernames must be unique/);
          assert.match(error.message, /"bob" \(users \d+, \d+\)/);
          assert.match(error.message, /"alice" \(users \d+, \d+\)/);
          assert.doesNotMatch(error.message, /carol/);
          return true;
        });
        assert.deepEqual(await dump(db), state);
      } finally {
        await cleanup();
      }
    });
  });
}
