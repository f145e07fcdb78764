import assert from 'node:assert/strict';
import { createHash, randomBytes, scryptSync } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import type { ServerOptions } from '../../src/config/options.js';
import type { Database } from '../../src/db/database.js';
import { PasswordHasher } from '../../src/features/users/password.js';
import { admin, backends, testConfig } from '../helpers.js';

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

/** Counts what reaches the real hasher: an unknown user must cost a verification too. */
class CountingHasher extends PasswordHasher {
  verified: (string | null)[] = [];
  override verify(password: string, stored: string | null, address?: string): Promise<boolean> {
    this.verified.push(stored);
    return super.verify(password, stored, address);
  }
}

const MINUTE = 60_000;

for (const backend of backends) {
  describe(`logins on ${backend.name}`, () => {
    let cleanup: () => Promise<void>;
    let db: Database;
    const apps: FastifyInstance[] = [];
    const clock = movableClock();
    const passwords = new CountingHasher();

    const start = async (overrides: ServerOptions = {}) => {
      const app = await buildApp(testConfig(overrides), {
        db,
        logger: false,
        passwords,
        now: clock.now,
      });
      apps.push(app);
      return app;
    };

    before(async () => {
      const opened = await backend.open();
      db = opened.db;
      cleanup = opened.cleanup;
    });
    after(async () => {
      for (const app of apps) await app.close();
      await cleanup();
    });

    const createUser = async (app: FastifyInstance, username: string, rootRole: string) => {
      const response = await app.inject({
        method: 'POST',
        url: '/api/admin/user-admin',
        headers: admin,
        payload: {
          username,
          email: `${username}@example.com`,
          password: `${username} password`,
          rootRole,
        },
      });
      assert.equal(response.statusCode, 201, response.body);
      return response.json<{ id: number }>().id;
    };

    const logIn = (
      app: FastifyInstance,
      username: string,
      password: string,
      address = '10.0.0.1',
    ) =>
      app.inject({
        method: 'POST',
        url: '/auth/simple/login',
        payload: { username, password },
        remoteAddress: address,
      });

    /** `unleash-session=<secret>` from a login answer. */
    const cookieOf = (response: { headers: Record<string, unknown> }) =>
      String(response.headers['set-cookie']).split(';')[0]!;

    const me = (app: FastifyInstance, cookie: string) =>
      app.inject({ method: 'GET', url: '/api/admin/user', headers: { cookie } });

    it('logs in, says who is signed in, and logs out', async () => {
      const app = await start({ loginsPerMinute: 1000 });
      const id = await createUser(app, 'ada', 'Editor');

      const login = await logIn(app, 'ADA', 'ada password');
      assert.equal(login.statusCode, 200, login.body);
      const user = login.json();
      assert.equal(user.id, id);
      assert.equal(user.username, 'ada');
      assert.equal(user.email, 'ada@example.com');
      assert.equal(user.seenAt, clock.now().toISOString());
      assert.equal(user.rootRole, 2);
      const cookie = cookieOf(login);
      assert.match(cookie, /^unleash-session=[\w-]{43}$/);

      const current = await me(app, cookie);
      assert.equal(current.statusCode, 200, current.body);
      assert.equal(current.headers['cache-control'], 'no-store');
      const body = current.json();
      assert.equal(body.user.id, id);
      assert.equal(body.user.username, 'ada');
      assert.ok(
        body.permissions.some((p: { permission: string }) => p.permission === 'CREATE_FEATURE'),
      );
      assert.ok(!body.permissions.some((p: { permission: string }) => p.permission === 'ADMIN'));
      assert.deepEqual(body.feedback, []);
      assert.deepEqual(body.splash, {});

      // Only the hash of the session id is stored.
      const secret = cookie.slice('unleash-session='.length);
      const rows = await db.query<{ id_hash: string; user_id: number }>(
        'SELECT id_hash, user_id FROM user_sessions',
      );
      assert.deepEqual(rows, [
        { id_hash: createHash('sha256').update(secret).digest('hex'), user_id: id },
      ]);

      const logout = await app.inject({ method: 'POST', url: '/logout', headers: { cookie } });
      assert.equal(logout.statusCode, 302);
      assert.equal(logout.headers.location, '/signed-out');
      assert.match(
        String(logout.headers['set-cookie']),
        /^unleash-session=; Path=\/; Max-Age=0; HttpOnly/,
      );
      assert.equal((await db.query('SELECT 1 FROM user_sessions')).length, 0);

      const afterLogout = await me(app, cookie);
      assert.equal(afterLogout.statusCode, 401);
      assert.equal(afterLogout.json().name, 'AuthenticationRequired');
      const nobody = await app.inject({ method: 'GET', url: '/api/admin/user' });
      assert.equal(nobody.statusCode, 401);
    });

    it('logs in by email too, and answers an admin token with its name and ADMIN', async () => {
      const app = apps[0]!;
      const login = await logIn(app, 'Ada@Example.com', 'ada password');
      assert.equal(login.statusCode, 200, login.body);
      const token = await app.inject({ method: 'GET', url: '/api/admin/user', headers: admin });
      assert.equal(token.statusCode, 200);
      assert.deepEqual(token.json().permissions, [{ permission: 'ADMIN' }]);
    });

    it('sets the cookie HttpOnly, SameSite=Lax, for the session lifetime, Secure over HTTPS', async () => {
      const plain = await logIn(apps[0]!, 'ada', 'ada password');
      assert.equal(
        String(plain.headers['set-cookie']).replace(/=[\w-]{43};/, '=…;'),
        'unleash-session=…; Path=/; Max-Age=172800; HttpOnly; SameSite=Lax',
      );
      // X-Forwarded-Proto is believed from a trusted proxy only.
      const forwarded = { 'x-forwarded-proto': 'https' };
      const untrusted = await apps[0]!.inject({
        method: 'POST',
        url: '/auth/simple/login',
        headers: forwarded,
        payload: { username: 'ada', password: 'ada password' },
      });
      assert.doesNotMatch(String(untrusted.headers['set-cookie']), /Secure/);
      const behindProxy = await start({
        trustProxy: ['127.0.0.1'],
        publicUrl: 'https://flags.example.com/flags/',
        sessionMaxAgeMs: 3_600_000,
      });
      const secure = await behindProxy.inject({
        method: 'POST',
        url: '/auth/simple/login',
        headers: forwarded,
        payload: { username: 'ada', password: 'ada password' },
      });
      assert.equal(secure.statusCode, 200);
      assert.equal(
        String(secure.headers['set-cookie']).replace(/=[\w-]{43};/, '=…;'),
        'unleash-session=…; Path=/flags; Max-Age=3600; HttpOnly; SameSite=Lax; Secure',
      );
      const logout = await behindProxy.inject({
        method: 'POST',
        url: '/logout',
        headers: { ...forwarded, cookie: cookieOf(secure) },
      });
      assert.equal(logout.headers.location, '/flags/signed-out');
    });

    it('keeps sessions in the database: a restarted server and a second one honour them', async () => {
      const first = await start();
      const cookie = cookieOf(await logIn(first, 'ada', 'ada password'));
      const second = await start();
      assert.equal((await me(second, cookie)).statusCode, 200);
      await first.close();
      const restarted = await start();
      assert.equal((await me(restarted, cookie)).statusCode, 200);
      // Logging out on one ends the session on the other.
      await second.inject({ method: 'POST', url: '/logout', headers: { cookie } });
      assert.equal((await me(restarted, cookie)).statusCode, 401);
    });

    it('ends a session when unused for the idle timeout, and at its maximum age however used', async () => {
      const app = await start({ sessionIdleTimeoutMs: 10 * MINUTE, sessionMaxAgeMs: 30 * MINUTE });
      const idle = cookieOf(await logIn(app, 'ada', 'ada password'));
      clock.advance(9 * MINUTE);
      assert.equal((await me(app, idle)).statusCode, 200);
      clock.advance(9 * MINUTE);
      assert.equal((await me(app, idle)).statusCode, 200, 'used within the idle timeout');
      clock.advance(10 * MINUTE);
      assert.equal((await me(app, idle)).statusCode, 401, 'unused for the idle timeout');

      const busy = cookieOf(await logIn(app, 'ada', 'ada password'));
      for (let step = 0; step < 3; step++) {
        clock.advance(9 * MINUTE);
        assert.equal((await me(app, busy)).statusCode, 200);
      }
      clock.advance(3 * MINUTE);
      assert.equal((await me(app, busy)).statusCode, 401, 'past the maximum age');
      // Ended sessions are deleted at the next login.
      await logIn(app, 'ada', 'ada password');
      assert.equal((await db.query('SELECT 1 FROM user_sessions')).length, 1);
    });

    it('answers an unknown user and a wrong password alike, each after a password check', async () => {
      const app = await start({ loginsPerMinute: 1000 });
      const [row] = await db.query<{ id: number }>(
        "INSERT INTO users (username, email) VALUES ('nopass', 'nopass@example.com') RETURNING id",
      );
      await db.query('INSERT INTO role_user (role_id, user_id) VALUES (3, $1)', [row!.id]);
      passwords.verified = [];
      const wrong = await logIn(app, 'ada', 'not the password');
      const unknown = await logIn(app, 'nobody', 'not the password');
      const withoutPassword = await logIn(app, 'nopass', 'not the password');
      for (const response of [wrong, unknown, withoutPassword]) {
        assert.equal(response.statusCode, 401);
        assert.equal(response.headers['set-cookie'], undefined);
        assert.equal(response.body, wrong.body);
        assert.equal(response.headers['content-type'], wrong.headers['content-type']);
      }
      assert.equal(wrong.json().name, 'PasswordMismatch');
      assert.equal(passwords.verified.length, 3, 'each answer waited for a password check');
      assert.match(passwords.verified[0]!, /^scrypt\$/);
      assert.deepEqual(passwords.verified.slice(1), [null, null]);
    });

    it('limits logins per client address, IPv6 by /64', async () => {
      const app = await start({ loginsPerMinute: 3 });
      for (let attempt = 0; attempt < 3; attempt++) {
        assert.equal((await logIn(app, `guess${attempt}`, 'x', '10.1.1.1')).statusCode, 401);
      }
      const limited = await logIn(app, 'ada', 'ada password', '10.1.1.1');
      assert.equal(limited.statusCode, 429);
      assert.equal(limited.json().name, 'RateLimitError');
      assert.equal((await logIn(app, 'ada', 'ada password', '10.1.1.2')).statusCode, 200);

      // Every address of a /64 is one subscriber's.
      for (const address of ['2001:db8:9:9::1', '2001:db8:9:9::2', '2001:db8:9:9:1:2:3:4']) {
        assert.equal((await logIn(app, 'guess', 'x', address)).statusCode, 401);
      }
      assert.equal((await logIn(app, 'ada', 'ada password', '2001:db8:9:9::ffff')).statusCode, 429);
      assert.equal((await logIn(app, 'ada', 'ada password', '2001:db8:9:a::1')).statusCode, 200);
    });

    it('lets nobody lock a user out: failures from one address do not refuse the right password from another', async () => {
      const app = await start({ loginsPerMinute: 1000 });
      for (let attempt = 0; attempt < 12; attempt++) {
        assert.ok([401, 429].includes((await logIn(app, 'ADA', 'wrong', '10.2.0.1')).statusCode));
      }
      const refused = await logIn(app, 'ada', 'ada password', '10.2.0.1');
      assert.equal(refused.statusCode, 429);
      assert.equal(refused.json().name, 'RateLimitError');
      assert.ok(Number(refused.headers['retry-after']) > 0);
      assert.equal(
        (await logIn(app, 'ada@example.com', 'ada password', '10.2.0.2')).statusCode,
        200,
      );
    });

    it('rewrites a hash of older parameters at a successful login', async () => {
      const app = apps.at(-1)!;
      const salt = randomBytes(16);
      const key = scryptSync('old secret', salt, 32, { N: 16_384, r: 8, p: 1 });
      const old = `scrypt$16384$8$1$${salt.toString('base64url')}$${key.toString('base64url')}`;
      const [row] = await db.query<{ id: number }>(
        `INSERT INTO users (username, email, password_hash) VALUES ('grace', 'grace@example.com', $1)
         RETURNING id`,
        [old],
      );
      await db.query('INSERT INTO role_user (role_id, user_id) VALUES (3, $1)', [row!.id]);
      const login = await logIn(app, 'grace', 'old secret');
      assert.equal(login.statusCode, 200, login.body);
      const [stored] = await db.query<{ password_hash: string }>(
        'SELECT password_hash FROM users WHERE id = $1',
        [row!.id],
      );
      assert.match(stored!.password_hash, /^scrypt\$131072\$8\$1\$/);
      assert.equal((await logIn(app, 'grace', 'old secret')).statusCode, 200);
    });

    it('refuses a login a page of another site sends', async () => {
      const app = apps.at(-1)!;
      const crossSite = await app.inject({
        method: 'POST',
        url: '/auth/simple/login',
        headers: { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' },
        payload: { username: 'ada', password: 'ada password' },
      });
      assert.equal(crossSite.statusCode, 403);
      assert.equal(crossSite.json().name, 'ForbiddenError');
      const own = await app.inject({
        method: 'POST',
        url: '/auth/simple/login',
        headers: { origin: 'http://localhost:4242', 'sec-fetch-site': 'same-origin' },
        payload: { username: 'ada', password: 'ada password' },
      });
      assert.equal(own.statusCode, 200);
    });

    it('refuses a login body that is not one', async () => {
      const app = apps.at(-1)!;
      for (const payload of [
        { username: 'ada' },
        { username: 'ada', password: { a: 1 } },
        { user: 'a', password: 'b' },
      ]) {
        const response = await app.inject({ method: 'POST', url: '/auth/simple/login', payload });
        assert.equal(response.statusCode, 400, JSON.stringify(payload));
        assert.equal(response.json().name, 'BadDataError');
      }
    });
  });
}
