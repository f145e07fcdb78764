import assert from 'node:assert/strict';
import { randomBytes, scryptSync } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import bcrypt from 'bcryptjs';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { FairLimit, type LimitFullError } from '../../src/concurrency-limit.js';
import type { Database } from '../../src/db/database.js';
import { checkLogin, findLoginCandidate } from '../../src/features/users/login.js';
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

/** Waits until every callback queued so far has run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

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

    const logIn = async (login: string, password: string) =>
      checkLogin(db, passwords, await findLoginCandidate(db, login), password, '10.0.0.1');

    it('verifies a hash with the old parameters and rewrites it with the new ones at login', async () => {
      const old = oldHash('correct horse');
      const [row] = await db.query<{ id: number }>(
        `INSERT INTO users (username, email, password_hash)
         VALUES ('Ada', 'ada@example.com', $1) RETURNING id`,
        [old],
      );
      const id = row!.id;
      assert.equal(await logIn('ada', 'wrong horse'), undefined);
      assert.equal(await storedHash(id), old, 'a failed login changes nothing');
      assert.equal(await logIn('nobody', 'correct horse'), undefined);

      const user = await logIn('ADA@example.com', 'correct horse');
      assert.equal(user?.id, id);
      const upgraded = await storedHash(id);
      assert.match(upgraded, /^scrypt\$131072\$8\$1\$/);
      assert.ok(await verifyPassword('correct horse', upgraded));
      assert.equal((await logIn('Ada', 'correct horse'))?.id, id);
      assert.equal(await storedHash(id), upgraded, 'a current hash is kept as it is');
    });

    for (const prefix of ['$2a$', '$2b$', '$2y$'])
      it(`verifies a bcrypt hash copied from unleash-server (${prefix}) and rewrites it with scrypt at login`, async () => {
        const copied = bcrypt.hashSync('unleashed passphrase', 4).replace(/^\$2[aby]\$/, prefix);
        const [row] = await db.query<{ id: number }>(
          'INSERT INTO users (username, password_hash) VALUES ($1, $2) RETURNING id',
          [`bcrypt-user-${prefix[2]}`, copied],
        );
        const id = row!.id;
        assert.equal(await logIn(`bcrypt-user-${prefix[2]}`, 'unleashed passphrasE'), undefined);
        assert.equal(await storedHash(id), copied, 'a failed login changes nothing');
        assert.equal((await logIn(`bcrypt-user-${prefix[2]}`, 'unleashed passphrase'))?.id, id);
        const upgraded = await storedHash(id);
        assert.match(upgraded, /^scrypt\$131072\$8\$1\$/);
        assert.ok(await verifyPassword('unleashed passphrase', upgraded));
      });

    it('refuses a damaged bcrypt hash rather than throwing', async () => {
      const hash = bcrypt.hashSync('x', 4);
      assert.equal(await verifyPassword('x', hash), true);
      // A character inside the checksum: the last one carries padding bits bcrypt ignores.
      const at = hash.length - 10;
      const damaged = `${hash.slice(0, at)}${hash[at] === 'A' ? 'B' : 'A'}${hash.slice(at + 1)}`;
      assert.equal(await verifyPassword('x', damaged), false);
      assert.equal(await verifyPassword('x', hash.slice(0, -1)), false);
    });
  });
}

describe('password hashing queue', () => {
  /** Tasks that wait for the test to let them finish, recording when each starts. */
  function gatedTasks(limit: FairLimit) {
    const started: string[] = [];
    const gates = new Map<string, () => void>();
    const run = (key: string, name: string) =>
      limit.run(key, async () => {
        started.push(name);
        const gate = deferred();
        gates.set(name, gate.resolve);
        await gate.promise;
        return name;
      });
    const finish = async (name: string) => {
      gates.get(name)!();
      await settle();
    };
    return { started, run, finish };
  }

  it('runs at most maxActive tasks and refuses a key’s task beyond its share of the queue', async () => {
    const limit = new FairLimit({ maxActive: 2, maxWaiting: 10, maxWaitingPerKey: 2 });
    const { started, run, finish } = gatedTasks(limit);
    const tasks = ['a1', 'a2', 'a3', 'a4'].map((name) => run('a', name));
    await assert.rejects(run('a', 'a5'), (error: LimitFullError) => error.scope === 'key');
    await settle();
    assert.deepEqual(started, ['a1', 'a2'], 'two run, two wait');
    assert.equal(limit.waiting('a'), 2);
    // Another key still gets in line.
    const other = run('b', 'b1');
    await finish('a1');
    assert.deepEqual(started, ['a1', 'a2', 'b1'], 'the key not yet served goes first');
    for (const name of ['a2', 'b1', 'a3', 'a4']) await finish(name);
    assert.deepEqual(await Promise.all([...tasks, other]), ['a1', 'a2', 'a3', 'a4', 'b1']);
    assert.equal(limit.running, 0);
    // A failing task frees its slot too.
    await assert.rejects(
      limit.run('a', async () => {
        throw new Error('boom');
      }),
      /boom/,
    );
    assert.equal(await limit.run('a', async () => 'free'), 'free');
    assert.equal(limit.running, 0);
  });

  it('serves keys in turns, a newcomer and a key with less waiting first within a turn', async () => {
    const limit = new FairLimit({ maxActive: 1, maxWaiting: 20, maxWaitingPerKey: 5 });
    const { started, run, finish } = gatedTasks(limit);
    const all = [
      run('flood-1', 'f1-1'),
      ...['f1-2', 'f1-3', 'f1-4'].map((name) => run('flood-1', name)),
      ...['f2-1', 'f2-2', 'f2-3'].map((name) => run('flood-2', name)),
    ];
    await settle();
    await finish('f1-1');
    // flood-2 has not had a turn: it goes before flood-1's second task.
    assert.deepEqual(started, ['f1-1', 'f2-1']);
    all.push(run('lone', 'lone'));
    await finish('f2-1');
    assert.deepEqual(started.at(-1), 'lone', 'a newcomer does not wait for the flood');
    // Then turn by turn; in a turn, the key with fewer waiting first.
    for (const name of ['lone', 'f2-2', 'f1-2', 'f2-3', 'f1-3', 'f1-4']) {
      assert.equal(started.at(-1), name);
      await finish(name);
    }
    assert.equal((await Promise.all(all)).length, 8);
  });

  it('bounds the whole queue: a newcomer takes the place of the newest task of the longest line, or is refused', async () => {
    const limit = new FairLimit({ maxActive: 1, maxWaiting: 4, maxWaitingPerKey: 3 });
    const { started, run, finish } = gatedTasks(limit);
    const first = run('a', 'a1');
    const a = ['a2', 'a3', 'a4'].map((name) => run('a', name));
    const b1 = run('b', 'b1');
    assert.equal(limit.waiting(), 4);
    // The queue is full: c's task takes the place of a's newest (a has 3 waiting, c none).
    const c1 = run('c', 'c1');
    await assert.rejects(a[2]!, (error: LimitFullError) => error.scope === 'key');
    assert.equal(limit.waiting(), 4);
    assert.equal(limit.waiting('a'), 2);
    // a has 2 waiting, d none: d's task takes the place of a's newest again.
    const d1 = run('d', 'd1');
    await assert.rejects(a[1]!, (error: LimitFullError) => error.scope === 'key');
    // Every line has one waiting now: b's second would make the longest; it is refused.
    await assert.rejects(run('b', 'b2'), (error: LimitFullError) => error.scope === 'all');
    for (const name of ['a1', 'b1', 'c1', 'd1', 'a2']) await finish(name);
    assert.deepEqual(await Promise.all([first, a[0], b1, c1, d1]), ['a1', 'a2', 'b1', 'c1', 'd1']);
    assert.deepEqual(started, ['a1', 'b1', 'c1', 'd1', 'a2']);
    assert.equal(limit.waiting(), 0);
  });

  it('answers a public signup with a JSON 503 when its address has too much waiting, and creates nothing; other addresses are served', async () => {
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
      const signup = (email: string, remoteAddress: string) =>
        app.inject({
          method: 'POST',
          url: `/invite/${secret}/signup`,
          payload: { name: 'N', email, password: 'a long passphrase' },
          remoteAddress,
        });
      // Fill every slot, and the queue of one address (its /64), with work that waits for the gate.
      const { maxActive, maxWaitingPerKey } = passwords.limit.options;
      for (let i = 0; i < maxActive + maxWaitingPerKey; i++) {
        held.push(passwords.limit.run('2001:db8:7:7::/64', () => gate.promise));
      }
      const busy = await signup('busy@example.com', '2001:db8:7:7::99');
      assert.equal(busy.statusCode, 503);
      assert.equal(busy.json().name, 'ServiceUnavailableError');
      assert.match(busy.json().message, /from this address/);
      assert.deepEqual(await db.query('SELECT id FROM users'), []);
      const elsewhere = signup('elsewhere@example.com', '2001:db8:7:8::1');
      gate.resolve();
      await Promise.all(held);
      assert.ok((await elsewhere).statusCode < 300);
      assert.ok((await signup('later@example.com', '2001:db8:7:7::99')).statusCode < 300);
      const emails = await db.query<{ email: string }>('SELECT email FROM users ORDER BY email');
      assert.deepEqual(
        emails.map((row) => row.email),
        ['elsewhere@example.com', 'later@example.com'],
      );
    } finally {
      gate.resolve();
      await app.close();
      await cleanup();
    }
  });
});
