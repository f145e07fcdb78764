// Failed-login throttling that no stranger can turn against a user (issue #46, build 2 and
// acceptance 2): counters per user and address, per address (IPv6 by /64) and per user (which
// only slows), kept in the database so every server on it honours them, and password hashing
// queued fairly per address so a flood cannot make another address's login fail.
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { buildApp } from '../../src/app.js';
import type { ServerOptions } from '../../src/config/options.js';
import { type Database, openPostgres } from '../../src/db/database.js';
import { PasswordHasher } from '../../src/features/users/password.js';
import { admin, backends, postgresUrl, testConfig } from '../helpers.js';

/** A clock the test moves. */
function movableClock(start = Date.parse('2030-01-01T08:00:00Z')) {
  let nowMs = start;
  return {
    now: () => new Date(nowMs),
    advance(ms: number) {
      nowMs += ms;
    },
  };
}

const SECOND = 1000;

/**
 * Small thresholds, so each rule shows in a few logins; no per-minute limit in the way, and the
 * per-address and per-user counts out of the way but where they are the subject.
 */
const THROTTLE: ServerOptions = {
  loginsPerMinute: 1000,
  loginFailuresBeforeDelay: 2,
  loginAddressFailuresBeforeDelay: 100,
  loginUserFailuresBeforeSlowing: 100,
  loginDelayMs: SECOND,
  loginMaxDelayMs: 8 * SECOND,
};

for (const backend of backends) {
  describe(`login throttling on ${backend.name}`, () => {
    let cleanup: () => Promise<void>;
    let db: Database;
    /** The same database through a pool of its own, as another server process has. */
    let otherDb: Database;
    const apps: FastifyInstance[] = [];

    const start = async (
      overrides: ServerOptions,
      deps: { db?: Database; now?: () => Date; passwords?: PasswordHasher } = {},
    ) => {
      const app = await buildApp(testConfig(overrides), { db, logger: false, ...deps });
      apps.push(app);
      return app;
    };

    before(async () => {
      const opened = await backend.open();
      db = opened.db;
      cleanup = opened.cleanup;
      if (backend.name === 'postgres') {
        const [row] = await db.query<{ schema: string }>('SELECT current_schema() AS schema');
        otherDb = openPostgres(postgresUrl!, { schema: row!.schema, maxConnections: 2 });
      } else {
        // PGlite is one process's database: a second app on it is the closest there is.
        otherDb = db;
      }
    });
    after(async () => {
      for (const app of apps) await app.close();
      if (otherDb !== db) await otherDb.close();
      await cleanup();
    });

    const createUser = async (app: FastifyInstance, username: string) => {
      const response = await app.inject({
        method: 'POST',
        url: '/api/admin/user-admin',
        headers: admin,
        payload: {
          username,
          email: `${username}@example.com`,
          password: `${username} password`,
          rootRole: 'Editor',
        },
      });
      assert.equal(response.statusCode, 201, response.body);
    };

    const logIn = (app: FastifyInstance, username: string, password: string, address: string) =>
      app.inject({
        method: 'POST',
        url: '/auth/simple/login',
        payload: { username, password },
        remoteAddress: address,
      });

    /** A refusal by the throttle: 429 with the seconds to wait, in the header and the details. */
    const assertWait = (response: LightMyRequestResponse, seconds: number) => {
      assert.equal(response.statusCode, 429, response.body);
      assert.equal(response.headers['retry-after'], String(seconds));
      assert.equal(response.headers['set-cookie'], undefined);
      const body = response.json();
      assert.equal(body.name, 'RateLimitError');
      assert.match(body.message, /Retry-After/);
      assert.deepEqual(body.details, [{ message: `Try again in ${seconds} s.` }]);
    };

    it('counts every alias of a user as one (username or email, any case), and unknown names alike', async () => {
      const clock = movableClock();
      const app = await start(THROTTLE, { now: clock.now });
      await createUser(app, 'ada');
      assert.equal((await logIn(app, 'Ada', 'wrong', '10.1.0.1')).statusCode, 401);
      assert.equal((await logIn(app, ' ADA@example.com', 'wrong', '10.1.0.1')).statusCode, 401);
      const known = await logIn(app, 'ada@EXAMPLE.com', 'ada password', '10.1.0.1');
      assertWait(known, 1);

      assert.equal((await logIn(app, 'Ghost', 'wrong', '10.1.0.2')).statusCode, 401);
      assert.equal((await logIn(app, ' ghost ', 'wrong', '10.1.0.2')).statusCode, 401);
      const unknown = await logIn(app, 'GHOST', 'wrong', '10.1.0.2');
      assertWait(unknown, 1);
      assert.equal(unknown.body, known.body, 'the throttle does not tell who exists');

      const rows = await db.query<{ user_key: string; address: string; failures: number }>(
        `SELECT user_key, address, failures FROM login_failures
          WHERE address IN ('', '10.1.0.1', '10.1.0.2') ORDER BY user_key, address`,
      );
      const [ada] = await db.query<{ id: number }>("SELECT id FROM users WHERE username = 'ada'");
      assert.deepEqual(rows, [
        { user_key: '', address: '10.1.0.1', failures: 2 },
        { user_key: '', address: '10.1.0.2', failures: 2 },
        { user_key: `id:${ada!.id}`, address: '', failures: 2 },
        { user_key: `id:${ada!.id}`, address: '10.1.0.1', failures: 2 },
        { user_key: 'name:ghost', address: '', failures: 2 },
        { user_key: 'name:ghost', address: '10.1.0.2', failures: 2 },
      ]);
    });

    it('counts an IPv6 /64 as one address, and IPv4-mapped IPv6 as the IPv4 address', async () => {
      const clock = movableClock();
      const app = await start(
        { ...THROTTLE, loginAddressFailuresBeforeDelay: 3 },
        { now: clock.now },
      );
      await createUser(app, 'bob');
      // Three users' worth of guesses from three addresses of one /64: the address's allowance.
      for (const [name, address] of [
        ['nobody-1', '2001:db8:1:2::1'],
        ['nobody-2', '2001:db8:1:2:ffff:ffff:ffff:ffff'],
        ['nobody-3', '2001:0db8:0001:0002:0:0:0:3'],
      ] as const) {
        assert.equal((await logIn(app, name, 'wrong', address)).statusCode, 401);
      }
      assertWait(await logIn(app, 'bob', 'bob password', '2001:db8:1:2::abcd'), 1);
      assert.equal((await logIn(app, 'bob', 'bob password', '2001:db8:1:3::1')).statusCode, 200);

      for (let guess = 1; guess <= 3; guess++) {
        const address = guess % 2 === 0 ? '10.2.0.7' : '::ffff:10.2.0.7';
        assert.equal((await logIn(app, `nobody-${guess}`, 'wrong', address)).statusCode, 401);
      }
      assertWait(await logIn(app, 'bob', 'bob password', '10.2.0.7'), 1);
      assertWait(await logIn(app, 'bob', 'bob password', '::ffff:10.2.0.7'), 1);
      clock.advance(SECOND);
      assert.equal((await logIn(app, 'bob', 'bob password', '::ffff:10.2.0.7')).statusCode, 200);
    });

    it('makes the wait of a user at an address grow with each failure, up to the longest, and ends it at a success', async () => {
      const clock = movableClock();
      const app = await start(THROTTLE, { now: clock.now });
      await createUser(app, 'cyd');
      const address = '10.3.0.1';
      assert.equal((await logIn(app, 'cyd', 'wrong', address)).statusCode, 401);
      assert.equal((await logIn(app, 'cyd', 'wrong', address)).statusCode, 401);
      // Refused tries are not failures: the wait does not grow while the caller waits.
      for (const seconds of [1, 2, 4, 8, 8]) {
        assertWait(await logIn(app, 'cyd', 'cyd password', address), seconds);
        clock.advance(seconds * SECOND - 1);
        assertWait(await logIn(app, 'cyd', 'wrong', address), 1);
        clock.advance(1);
        assert.equal((await logIn(app, 'cyd', 'wrong', address)).statusCode, 401);
      }
      assertWait(await logIn(app, 'cyd', 'cyd password', address), 8);
      clock.advance(8 * SECOND);
      assert.equal((await logIn(app, 'cyd', 'cyd password', address)).statusCode, 200);
      // The success cleared this user's counter at this address.
      assert.equal((await logIn(app, 'cyd', 'wrong', address)).statusCode, 401);
      assert.equal((await logIn(app, 'cyd', 'wrong', address)).statusCode, 401);
      assertWait(await logIn(app, 'cyd', 'cyd password', address), 1);
    });

    it('lets a right password in from an address without failures while the account is under attack', async () => {
      const clock = movableClock();
      const app = await start(
        { ...THROTTLE, loginUserFailuresBeforeSlowing: 3 },
        { now: clock.now },
      );
      await createUser(app, 'dee');
      // Guesses from many addresses, one each: no address is held up by its own count.
      for (const address of ['10.4.0.1', '10.4.0.2', '10.4.0.3']) {
        assert.equal((await logIn(app, 'dee', 'wrong', address)).statusCode, 401);
      }
      // The user is under attack now: an address that failed for them waits after each failure…
      assertWait(await logIn(app, 'dee', 'dee password', '10.4.0.1'), 1);
      assert.equal((await logIn(app, 'dee', 'wrong', '10.4.0.4')).statusCode, 401);
      assertWait(await logIn(app, 'dee', 'wrong', '10.4.0.4'), 1);
      // …while an address without failures for them is never held up, however many there were.
      const clean = await logIn(app, 'dee', 'dee password', '10.4.0.9');
      assert.equal(clean.statusCode, 200, clean.body);
      assert.equal(clean.json().username, 'dee');
    });

    it('shares the counters with a second server on the same database', async () => {
      const clock = movableClock();
      const first = await start(THROTTLE, { now: clock.now });
      const second = await start(THROTTLE, { db: otherDb, now: clock.now });
      await createUser(first, 'eve');
      assert.equal((await logIn(first, 'eve', 'wrong', '10.5.0.1')).statusCode, 401);
      assert.equal((await logIn(first, 'EVE', 'wrong', '10.5.0.1')).statusCode, 401);
      assertWait(await logIn(second, 'eve@example.com', 'eve password', '10.5.0.1'), 1);
      clock.advance(SECOND);
      // A failure counted by the second server lengthens the first's wait.
      assert.equal((await logIn(second, 'eve', 'wrong', '10.5.0.1')).statusCode, 401);
      assertWait(await logIn(first, 'eve', 'eve password', '10.5.0.1'), 2);
      clock.advance(2 * SECOND);
      // A success on the first clears the counter for the second.
      assert.equal((await logIn(first, 'eve', 'eve password', '10.5.0.1')).statusCode, 200);
      assert.equal((await logIn(second, 'eve', 'wrong', '10.5.0.1')).statusCode, 401);
      assert.equal((await logIn(second, 'eve', 'eve password', '10.5.0.1')).statusCode, 200);
    });

    it('forgets a quiet counter, deleting old rows at the next failure', async () => {
      const clock = movableClock();
      const app = await start(
        { ...THROTTLE, loginFailuresForgottenAfterMs: 60 * 60 * SECOND },
        { now: clock.now },
      );
      await createUser(app, 'fay');
      assert.equal((await logIn(app, 'fay', 'wrong', '10.6.0.1')).statusCode, 401);
      assert.equal((await logIn(app, 'fay', 'wrong', '10.6.0.1')).statusCode, 401);
      assertWait(await logIn(app, 'fay', 'fay password', '10.6.0.1'), 1);
      clock.advance(60 * 60 * SECOND);
      const [{ rows } = { rows: 0 }] = await db.query<{ rows: number }>(
        "SELECT count(*)::int AS rows FROM login_failures WHERE address = '10.6.0.1'",
      );
      assert.ok(rows > 0, 'kept until a failure writes');
      // One failure after an hour's quiet: the counter starts again at one, so no wait yet.
      assert.equal((await logIn(app, 'ghost', 'wrong', '10.6.0.2')).statusCode, 401);
      assert.deepEqual(
        await db.query("SELECT user_key FROM login_failures WHERE address = '10.6.0.1'"),
        [],
      );
      assert.equal((await logIn(app, 'fay', 'wrong', '10.6.0.1')).statusCode, 401);
      assert.equal((await logIn(app, 'fay', 'fay password', '10.6.0.1')).statusCode, 200);
    });

    it('leaves every counter as it was when counting a failure fails', async () => {
      const clock = movableClock();
      const app = await start(THROTTLE, { now: clock.now });
      await createUser(app, 'gus');
      assert.equal((await logIn(app, 'gus', 'wrong', '10.7.0.1')).statusCode, 401);
      const before = await db.query(
        'SELECT * FROM login_failures ORDER BY user_key, address, failures',
      );
      // The database refuses the row of this user at this address: the statement that counts all
      // three counters fails whole.
      await db.query(
        "ALTER TABLE login_failures ADD CONSTRAINT refuse_test_address CHECK (address <> '10.7.0.2')",
      );
      try {
        const refused = await logIn(app, 'gus', 'wrong', '10.7.0.2');
        assert.notEqual(refused.statusCode, 401);
        assert.ok(refused.statusCode >= 400, refused.body);
        assert.equal(refused.headers['set-cookie'], undefined);
        assert.deepEqual(
          await db.query('SELECT * FROM login_failures ORDER BY user_key, address, failures'),
          before,
        );
      } finally {
        await db.query('ALTER TABLE login_failures DROP CONSTRAINT refuse_test_address');
      }
    });

    it('acceptance: under 25 concurrent bogus logins from 5 addresses and 12 wrong passwords for victim from one of them, victim logs in from another address; a second server sees the same counters', async (t) => {
      // The real clock and the default thresholds; a long first wait so the counters still hold
      // when the second server looks.
      const options: ServerOptions = { loginsPerMinute: 1000, loginDelayMs: 10 * 60 * SECOND };
      const passwords = new PasswordHasher();
      const app = await start(options, { passwords });
      await createUser(app, 'victim');
      const floodAddresses = ['127.0.0.40', '127.0.0.41', '127.0.0.42', '127.0.0.43', '127.0.0.44'];

      const wrong: number[] = [];
      for (let guess = 0; guess < 12; guess++) {
        wrong.push((await logIn(app, 'victim', `guess ${guess}`, floodAddresses[0]!)).statusCode);
      }
      assert.deepEqual(wrong, [401, 401, 401, 401, 401, ...Array(7).fill(429)]);

      const startedAt = performance.now();
      let answered = 0;
      const flood = Array.from({ length: 25 }, (_, n) =>
        logIn(app, `bot-${n}`, 'bogus', floodAddresses[n % 5]!).then((response) => {
          answered++;
          return { status: response.statusCode, ms: performance.now() - startedAt };
        }),
      );
      // The flood is queued for hashing before the victim arrives.
      while (passwords.limit.waiting() < 15) await new Promise((resolve) => setImmediate(resolve));
      const victimAt = performance.now();
      const victim = await logIn(app, 'VICTIM@example.com', 'victim password', '127.0.0.9');
      const victimMs = performance.now() - victimAt;
      const answeredBeforeVictim = answered;
      const floodAnswers = await Promise.all(flood);

      assert.equal(victim.statusCode, 200, victim.body);
      assert.equal(victim.json().username, 'victim');
      assert.ok(
        answeredBeforeVictim < floodAnswers.length / 2,
        `the victim waited behind the flood: ${answeredBeforeVictim} of 25 were answered first`,
      );
      // Refusals from a full queue go to the flooding addresses only, and never as a success.
      for (const { status } of floodAnswers) assert.ok([401, 503].includes(status), String(status));
      const slowestFloodMs = Math.max(...floodAnswers.map((answer) => answer.ms));
      const statuses = floodAnswers.reduce<Record<number, number>>((counts, { status }) => {
        counts[status] = (counts[status] ?? 0) + 1;
        return counts;
      }, {});
      t.diagnostic(
        `victim answered in ${Math.round(victimMs)} ms, after ${answeredBeforeVictim} of 25 flood logins; the flood's last answer came at ${Math.round(slowestFloodMs)} ms; flood answers: ${JSON.stringify(statuses)}`,
      );

      // A second server on the same database: the victim's counter at the guessing address
      // holds there too, with its right password, while the clean address is still let in.
      const second = await start(options, { db: otherDb });
      const held = await logIn(second, 'victim', 'victim password', floodAddresses[0]!);
      assert.equal(held.statusCode, 429, held.body);
      assert.ok(Number(held.headers['retry-after']) > 0);
      assert.equal((await logIn(second, 'victim', 'victim password', '127.0.0.9')).statusCode, 200);
    });
  });
}
