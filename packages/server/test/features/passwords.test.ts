import assert from 'node:assert/strict';
import { randomBytes, scryptSync } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { ConcurrencyLimit, LimitFullError } from '../../src/concurrency-limit.js';
import type { Database } from '../../src/db/database.js';
import { logIn } from '../../src/features/users/login.js';
import { PasswordHasher, verifyPassword } from '../../src/features/users/password.js';
import { admin, backends, testConfig } from '../helpers.js';

/** A hash as flags-server stored it before: scrypt at N=2^14, r=8, p=1. */
function oldHash(password: string): string {
  const salt = randomBytes(16);
  const key = scryptSync(password, salt, 32, { N: 16_384, r: 8, p: 1 });
  return `scrypt$16384$8$1$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

/** A promise and the function that settles it. */
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

for (const backend of backends) {
  describe(`passwords on ${backend.name}`, () => {
    let cleanup: () => Promise<void>;
    let db: Database;
    let app: FastifyInstance;
    const passwords = new PasswordHasher();

    before(async () => {
      const opened = await backend.open();
      db = opened.db;
      cleanup = opened.cleanup;
      app = await buildApp(testConfig({ signupsPerMinute: 1000 }), {
        db,
        logger: false,
        passwords,
      });
    });
    after(async () => {
      await app.close();
      await cleanup();
    });

    const storedHash = async (id: number) =>
      (
        await db.query<{ password_hash: string }>('SELECT password_hash FROM users WHERE id = $1', [
          id,
        ])
      )[0]!.password_hash;

    it('hashes new passwords with scrypt N=2^17, r=8, p=1', async () => {
      const created = await app.inject({
        method: 'POST',
        url: '/api/admin/user-admin',
        headers: admin,
        payload: { username: 'new-user', password: 'a long passphrase', rootRole: 3 },
      });
      assert.equal(created.statusCode, 201);
      const hash = await storedHash(created.json().id);
      assert.match(hash, /^scrypt\$131072\$8\$1\$[\w-]{22}\$[\w-]{43}$/);
      assert.ok(await verifyPassword('a long passphrase', hash));
      assert.ok(!(await verifyPassword('a long passphrasE', hash)));
    });

    it('verifies a hash with the old parameters and rewrites it with the new ones at login', async () => {
      const old = oldHash('correct horse');
      const [row] = await db.query<{ id: number }>(
        `INSERT INTO users (username, email, password_hash)
         VALUES ('Ada', 'ada@example.com', $1) RETURNING id`,
        [old],
      );
      const id = row!.id;
      assert.equal(await logIn(db, passwords, 'ada', 'wrong horse'), undefined);
      assert.equal(await storedHash(id), old, 'a failed login changes nothing');
      assert.equal(await logIn(db, passwords, 'nobody', 'correct horse'), undefined);

      const user = await logIn(db, passwords, 'ADA@example.com', 'correct horse');
      assert.equal(user?.id, id);
      const upgraded = await storedHash(id);
      assert.match(upgraded, /^scrypt\$131072\$8\$1\$/);
      assert.ok(await verifyPassword('correct horse', upgraded));
      assert.equal((await logIn(db, passwords, 'Ada', 'correct horse'))?.id, id);
      assert.equal(await storedHash(id), upgraded, 'a current hash is kept as it is');
    });
  });
}

describe('password hashing bound', () => {
  it('runs at most maxActive tasks, queues up to maxWaiting, refuses the rest', async () => {
    const limit = new ConcurrencyLimit(2, 1);
    const gates = [deferred(), deferred(), deferred()];
    const started: number[] = [];
    const run = (n: number) =>
      limit.run(async () => {
        started.push(n);
        await gates[n]!.promise;
        return n;
      });
    const first = run(0);
    const second = run(1);
    const third = run(2);
    await assert.rejects(run(3), LimitFullError);
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(started, [0, 1], 'the third waits for a free slot');
    gates[0]!.resolve();
    assert.equal(await first, 0);
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(started, [0, 1, 2]);
    gates[1]!.resolve();
    gates[2]!.resolve();
    assert.deepEqual(await Promise.all([second, third]), [1, 2]);
    // A failing task frees its slot too.
    await assert.rejects(
      limit.run(async () => {
        throw new Error('boom');
      }),
      /boom/,
    );
    assert.equal(await limit.run(async () => 'free'), 'free');
  });

  it('answers a public signup with a JSON 503 when the hashing queue is full, and creates nothing', async () => {
    const passwords = new PasswordHasher();
    const { db, cleanup } = await backends[0]!.open();
    const app = await buildApp(testConfig({ signupsPerMinute: 1000 }), {
      db,
      logger: false,
      passwords,
    });
    const gate = deferred();
    const held: Promise<unknown>[] = [];
    try {
      const link = await app.inject({
        method: 'POST',
        url: '/api/admin/invite-link/tokens',
        headers: admin,
        payload: { name: 'invite', expiresAt: new Date(Date.now() + 3_600_000).toISOString() },
      });
      const { secret } = link.json();
      const signup = (email: string) =>
        app.inject({
          method: 'POST',
          url: `/invite/${secret}/signup`,
          payload: { name: 'N', email, password: 'a long passphrase' },
        });
      // Fill every slot and the whole queue with work that waits for the gate.
      for (let i = 0; i < passwords.limit.maxActive + passwords.limit.maxWaiting; i++) {
        held.push(passwords.limit.run(() => gate.promise));
      }
      const busy = await signup('busy@example.com');
      assert.equal(busy.statusCode, 503);
      assert.equal(busy.json().name, 'ServiceUnavailableError');
      assert.deepEqual(await db.query('SELECT id FROM users'), []);
      gate.resolve();
      await Promise.all(held);
      assert.equal((await signup('later@example.com')).statusCode, 201);
    } finally {
      gate.resolve();
      await app.close();
      await cleanup();
    }
  });
});
