import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { inviteSignupAnswerSchema, publicSignupTokenSchema } from '@flags/schemas';
import { Ajv } from 'ajv';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/load.js';
import type { ServerOptions } from '../../src/config/options.js';
import type { Database } from '../../src/db/database.js';
import { verifyPassword } from '../../src/features/users/password.js';
import { admin, backends, DEV_TOKEN, testConfig } from '../helpers.js';

const HOUR = 3_600_000;
const ajv = new Ajv({ strict: false, validateFormats: false });
const isToken = ajv.compile(publicSignupTokenSchema);
const isSignupAnswer = ajv.compile(inviteSignupAnswerSchema);
const DAY = 24 * HOUR;
const TOKEN_FIELDS = [
  'allowAdmin',
  'createdAt',
  'createdBy',
  'enabled',
  'expiresAt',
  'id',
  'name',
  'role',
  'secret',
  'url',
  'users',
];

for (const backend of backends) {
  describe(`public signup tokens on ${backend.name}`, () => {
    let cleanup: () => Promise<void>;
    let db: Database;
    let app: FastifyInstance;
    const start = new Date('2026-11-02T10:00:00.000Z');
    let now = start;

    before(async () => {
      const opened = await backend.open();
      db = opened.db;
      cleanup = opened.cleanup;
      app = await buildApp(
        // The signup rate limit has a suite of its own below.
        testConfig({
          publicUrl: new URL('https://flags.example.com/base/'),
          signupsPerMinute: 1000,
        }),
        {
          db,
          logger: false,
          now: () => now,
        },
      );
    });
    after(async () => {
      await app.close();
      await cleanup();
    });

    const inAnHour = () => new Date(now.getTime() + HOUR).toISOString();
    const create = (payload: object) =>
      app.inject({ method: 'POST', url: '/api/admin/invite-link/tokens', headers: admin, payload });
    const get = (secret: string) =>
      app.inject({ url: `/api/admin/invite-link/tokens/${secret}`, headers: admin });
    const put = (secret: string, payload: object) =>
      app.inject({
        method: 'PUT',
        url: `/api/admin/invite-link/tokens/${secret}`,
        headers: admin,
        payload,
      });
    const signup = (secret: string, payload: object, headers: Record<string, string> = {}) =>
      app.inject({ method: 'POST', url: `/invite/${secret}/signup`, payload, headers });
    /** The session cookie a signup's answer sets (name=value), if any. */
    const sessionOf = (response: { headers: Record<string, unknown> }) => {
      const header = response.headers['set-cookie'];
      return typeof header === 'string' ? header.split(';')[0] : undefined;
    };
    /** Who `cookie` signs in, as `GET /api/admin/user` says. */
    const signedIn = async (cookie: string) => {
      const response = await app.inject({ url: '/api/admin/user', headers: { cookie } });
      assert.equal(response.statusCode, 200, response.body);
      return response.json().user as { id: number; name: string; email: string; rootRole: number };
    };
    /** The answer every signup on a usable link gets, account created or not. */
    const assertSignedUp = (response: { statusCode: number; body: string; json(): unknown }) => {
      assert.equal(response.statusCode, 202, response.body);
      assert.equal(isSignupAnswer(response.json()), true, JSON.stringify(isSignupAnswer.errors));
      return response.json() as { message: string };
    };
    const validate = (secret: string) => app.inject({ url: `/invite/${secret}/validate` });
    const newToken = async (payload: object = {}) => {
      const response = await create({ name: 'invite', expiresAt: inAnHour(), ...payload });
      assert.equal(response.statusCode, 201, response.body);
      return response.json() as {
        id: number;
        secret: string;
        expiresAt: string;
        role: { id: number; name: string };
      };
    };
    const userState = async () => ({
      users: await db.query('SELECT * FROM users ORDER BY id'),
      roles: await db.query('SELECT role_id, user_id, project FROM role_user ORDER BY user_id'),
      joined: await db.query('SELECT * FROM public_signup_tokens_user ORDER BY user_id'),
    });
    const assertError = (response: { statusCode: number; json(): unknown }, status: number) => {
      assert.equal(response.statusCode, status);
      const body = response.json() as { name: string; message: string; details: unknown[] };
      assert.deepEqual(Object.keys(body), ['code', 'name', 'message', 'details']);
      assert.ok(body.details.length > 0);
      return body;
    };

    it('seeds the root roles Admin, Editor, Viewer as 1, 2, 3 and the project roles', async () => {
      const response = await app.inject({ url: '/api/admin/roles', headers: admin });
      assert.equal(response.statusCode, 200);
      const roles = response.json().roles as { id: number; name: string; type: string }[];
      assert.deepEqual(
        roles.map(({ id, name, type }) => [id, name, type]),
        [
          [1, 'Admin', 'root'],
          [2, 'Editor', 'root'],
          [3, 'Viewer', 'root'],
          [4, 'Owner', 'project'],
          [5, 'Member', 'project'],
        ],
      );
      const viewer = await app.inject({ url: '/api/admin/roles/3', headers: admin });
      assert.equal(viewer.json().name, 'Viewer');
      assertError(await app.inject({ url: '/api/admin/roles/99', headers: admin }), 404);
    });

    it('creates users with a root role through the admin API, never showing passwords', async () => {
      const createUser = (payload: object) =>
        app.inject({ method: 'POST', url: '/api/admin/user-admin', headers: admin, payload });
      const created = await createUser({
        name: 'Root',
        email: 'root@example.com',
        password: 'a long secret',
        rootRole: 'Admin',
      });
      assert.equal(created.statusCode, 201, created.body);
      const user = created.json();
      assert.equal(user.rootRole, 1);
      assert.equal(user.email, 'root@example.com');
      assert.match(user.imageUrl, /^https:\/\/gravatar\.com\/avatar\/[0-9a-f]{32}\?/);
      const byUsername = await createUser({ username: 'robot', rootRole: 3 });
      assert.equal(byUsername.statusCode, 201);
      assert.equal(byUsername.json().username, 'robot');
      assert.equal(byUsername.json().rootRole, 3);
      assertError(await createUser({ name: 'Nobody', rootRole: 3 }), 400);
      assertError(await createUser({ email: 'p@example.com', rootRole: 4 }), 400);
      assertError(await createUser({ email: 'p@example.com', rootRole: 'Owner' }), 400);
      assertError(await createUser({ email: 'p@example.com' }), 400);
      assertError(await createUser({ email: 'ROOT@example.com', rootRole: 2 }), 409);
      const listed = await app.inject({ url: '/api/admin/user-admin', headers: admin });
      assert.equal(listed.statusCode, 200);
      assert.deepEqual(
        listed.json().rootRoles.map((role: { name: string }) => role.name),
        ['Admin', 'Editor', 'Viewer'],
      );
      assert.ok(listed.json().users.some((u: { id: number }) => u.id === user.id));
      assert.ok(!/scrypt|secret|password/i.test(listed.body + created.body));
      assertError(await app.inject({ url: '/api/admin/user-admin/99999', headers: admin }), 404);
      assertError(await app.inject({ url: '/api/admin/user-admin/abc', headers: admin }), 400);
    });

    it('requires an admin token on the admin routes', async () => {
      for (const [method, url] of [
        ['GET', '/api/admin/invite-link/tokens'],
        ['POST', '/api/admin/invite-link/tokens'],
        ['GET', '/api/admin/invite-link/tokens/x'],
        ['PUT', '/api/admin/invite-link/tokens/x'],
        ['GET', '/api/admin/user-admin'],
        ['GET', '/api/admin/roles'],
      ] as const) {
        assertError(
          await app.inject({ method, url, payload: method === 'GET' ? undefined : {} }),
          401,
        );
        assertError(
          await app.inject({
            method,
            url,
            headers: { authorization: DEV_TOKEN },
            payload: method === 'GET' ? undefined : {},
          }),
          403,
        );
      }
    });

    it('creates a token with the document fields, a Viewer role by default and the invite URL', async () => {
      const expiresAt = new Date(start.getTime() + 7 * DAY).toISOString();
      const response = await create({ name: 'Invite public viewers', expiresAt });
      assert.equal(response.statusCode, 201);
      const token = response.json();
      assert.match(token.secret, /^[0-9a-f]{32}$/);
      assert.ok(Number.isInteger(token.id));
      assert.equal(response.headers.location, `tokens/${token.id}`);
      assert.deepEqual(token, {
        id: token.id,
        secret: token.secret,
        url: `https://flags.example.com/base/new-user?invite=${token.secret}`,
        name: 'Invite public viewers',
        enabled: true,
        expiresAt,
        createdAt: start.toISOString(),
        createdBy: 'admin (configured)',
        users: [],
        role: {
          id: 3,
          type: 'root',
          name: 'Viewer',
          description: 'Users with the root viewer role can only read configuration.',
          project: null,
        },
        allowAdmin: false,
      });
      assert.ok(isToken(token), JSON.stringify(isToken.errors));
      // After the create answer, the secret and the link are never shown again.
      const masked = { ...token, secret: `${token.secret.slice(0, 4)}…`, url: null };
      for (const key of [token.secret, String(token.id)]) {
        const fetched = await get(key);
        assert.equal(fetched.statusCode, 200);
        assert.deepEqual(Object.keys(fetched.json()).sort(), TOKEN_FIELDS);
        assert.ok(isToken(fetched.json()), JSON.stringify(isToken.errors));
        assert.deepEqual(fetched.json(), masked);
      }
      const second = await newToken();
      assert.notEqual(second.secret, token.secret);
      const listed = await app.inject({ url: '/api/admin/invite-link/tokens', headers: admin });
      assert.equal(listed.statusCode, 200);
      const secrets = listed.json().tokens.map((t: { secret: string }) => t.secret);
      assert.ok(
        secrets.includes(masked.secret) && secrets.includes(`${second.secret.slice(0, 4)}…`),
      );
      assert.ok(!listed.body.includes(token.secret) && !listed.body.includes(second.secret));
      // Only the secret opens the public routes: the id is no credential.
      assertError(await validate(String(token.id)), 404);
      assertError(await signup(String(token.id), { name: 'I', email: 'id@example.com' }), 404);
      assert.equal((await validate(token.secret)).statusCode, 200);
    });

    it('takes a root role by name or id and refuses project roles and unknown roles', async () => {
      assert.equal((await newToken({ role: 'Editor' })).role.name, 'Editor');
      assert.equal((await newToken({ role: 1, allowAdmin: true })).role.name, 'Admin');
      assert.equal((await newToken({ role: 'admin', allowAdmin: true })).role.id, 1);
      assertError(await create({ name: 'x', expiresAt: inAnHour(), role: 4 }), 400);
      assertError(await create({ name: 'x', expiresAt: inAnHour(), role: 'Superuser' }), 400);
    });

    it('grants the Admin role only through a token created with allowAdmin: true', async () => {
      const before = await db.query('SELECT id FROM public_signup_tokens');
      for (const role of ['Admin', 'admin', 1]) {
        for (const extra of [{}, { allowAdmin: false }]) {
          const body = assertError(
            await create({ name: 'x', expiresAt: inAnHour(), role, ...extra }),
            400,
          );
          assert.equal(body.name, 'BadDataError');
          assert.match(body.message, /allowAdmin/);
        }
      }
      assertError(await create({ name: 'x', expiresAt: inAnHour(), allowAdmin: 'yes' }), 400);
      assert.equal((await db.query('SELECT id FROM public_signup_tokens')).length, before.length);

      const allowed = await create({
        name: 'admins',
        expiresAt: inAnHour(),
        role: 'Admin',
        allowAdmin: true,
      });
      assert.equal(allowed.statusCode, 201);
      const token = allowed.json();
      assert.equal(token.allowAdmin, true);
      assert.equal((await get(token.secret)).json().allowAdmin, true);
      const admitted = await signup(token.secret, { name: 'Root', email: 'root2@example.com' });
      assertSignedUp(admitted);
      assert.equal((await signedIn(sessionOf(admitted)!)).rootRole, 1);

      // An Admin link without the flag (as stored before allowAdmin existed) admits nobody.
      await db.query('UPDATE public_signup_tokens SET allow_admin = false WHERE id = $1', [
        token.id,
      ]);
      const state = await userState();
      const refused = assertError(
        await signup(token.secret, { name: 'Sneaky', email: 'sneaky@example.com' }),
        400,
      );
      assert.match(refused.message, /allowAdmin/);
      assertError(await validate(token.secret), 400);
      assert.equal((await get(token.secret)).json().enabled, false);
      assert.deepEqual(await userState(), state);
    });

    it('rejects bad create bodies with a JSON 400 and caps the expiry at one month', async () => {
      const before = await db.query('SELECT id FROM public_signup_tokens');
      for (const payload of [
        {},
        { name: 'x' },
        { expiresAt: inAnHour() },
        { name: '', expiresAt: inAnHour() },
        { name: 'x', expiresAt: 'tomorrow' },
        { name: 'x', expiresAt: new Date(now.getTime() - HOUR).toISOString() },
        { name: 'x', expiresAt: inAnHour(), enabled: false },
      ]) {
        const body = assertError(await create(payload), 400);
        assert.equal(body.name, 'BadDataError', JSON.stringify(payload));
      }
      assert.equal((await db.query('SELECT id FROM public_signup_tokens')).length, before.length);
      const far = await newToken({ expiresAt: new Date(now.getTime() + 100 * DAY).toISOString() });
      assert.equal(far.expiresAt, '2026-12-02T10:00:00.000Z');
    });

    it('answers 404 with a JSON error for an unknown token on every route', async () => {
      const body = assertError(await get('unknown'), 404);
      assert.equal(body.message, 'Could not find public signup token.');
      assertError(await put('unknown', { enabled: false }), 404);
      assertError(await validate('unknown'), 404);
      const state = await userState();
      assertError(await signup('unknown', { name: 'A', email: 'a@example.com' }), 404);
      assert.deepEqual(await userState(), state);
    });

    it('updates enabled and expiresAt; an empty or unknown change is a 400', async () => {
      const token = await newToken();
      const disabled = await put(token.secret, { enabled: false });
      assert.equal(disabled.statusCode, 200);
      assert.equal(disabled.json().enabled, false);
      assert.deepEqual(Object.keys(disabled.json()).sort(), TOKEN_FIELDS);
      assertError(await validate(token.secret), 400);
      assert.equal((await put(token.secret, { enabled: true })).json().enabled, true);
      assert.equal((await validate(token.secret)).statusCode, 200);
      const later = new Date(now.getTime() + 60 * DAY).toISOString();
      const extended = await put(token.secret, { expiresAt: later });
      assert.equal(extended.json().expiresAt, later);
      assert.equal(extended.json().enabled, true);
      assertError(await put(token.secret, {}), 400);
      assertError(await put(token.secret, { name: 'renamed' }), 400);
      assertError(await put(token.secret, { enabled: 'no' }), 400);
      assert.equal((await get(token.secret)).json().name, 'invite');
    });

    it('reports enabled false once expired, whatever is stored, and flips back when extended', async () => {
      const token = await newToken();
      assert.equal((await get(token.secret)).json().enabled, true);
      assert.equal((await validate(token.secret)).statusCode, 200);
      now = new Date(now.getTime() + HOUR + 1);
      try {
        assert.equal((await get(token.secret)).json().enabled, false);
        const listed = await app.inject({ url: '/api/admin/invite-link/tokens', headers: admin });
        const entry = listed.json().tokens.find((t: { id: number }) => t.id === token.id);
        assert.equal(entry.enabled, false);
        const [stored] = await db.query<{ enabled: boolean }>(
          'SELECT enabled FROM public_signup_tokens WHERE id = $1',
          [token.id],
        );
        assert.equal(stored!.enabled, true);
        assertError(await validate(token.secret), 400);
        // Setting enabled on an expired token does not make it usable.
        assert.equal((await put(token.secret, { enabled: true })).json().enabled, false);
        const extended = await put(token.secret, { expiresAt: inAnHour() });
        assert.equal(extended.json().enabled, true);
      } finally {
        now = start;
      }
    });

    it('signs a user up with the token role, signed in by the answer, adds it to the token and never returns the password', async () => {
      const token = await newToken({ role: 'Editor' });
      const validated = await validate(token.secret);
      assert.equal(validated.statusCode, 200);
      const response = await signup(token.secret, {
        name: 'Ada Lovelace',
        email: 'ada@example.com',
        password: 'correct horse battery',
      });
      assertSignedUp(response);
      assert.equal(response.headers['cache-control'], 'no-store');
      assert.ok(!/password|correct horse|ada@/i.test(response.body));
      // The session cookie is a password login's: HttpOnly, SameSite, under the public URL's path.
      const setCookie = String(response.headers['set-cookie']);
      assert.match(
        setCookie,
        /^unleash-session=[\w-]{43}; Path=\/base; Max-Age=\d+; HttpOnly; SameSite=Lax$/,
      );
      const user = await signedIn(sessionOf(response)!);
      assert.ok(Number.isInteger(user.id));
      assert.equal(user.name, 'Ada Lovelace');
      assert.equal(user.email, 'ada@example.com');
      assert.equal(user.rootRole, 2);

      const fetched = (await get(token.secret)).json();
      assert.equal(isToken(fetched), true, JSON.stringify(isToken.errors));
      assert.deepEqual(
        fetched.users.map((u: { id: number; email: string }) => [u.id, u.email]),
        [[user.id, 'ada@example.com']],
      );
      const [row] = await db.query<{ password_hash: string }>(
        'SELECT password_hash FROM users WHERE id = $1',
        [user.id],
      );
      assert.match(row!.password_hash, /^scrypt\$/);
      assert.ok(await verifyPassword('correct horse battery', row!.password_hash));
      assert.ok(!(await verifyPassword('wrong horse battery', row!.password_hash)));
      const [role] = await db.query<{ role_id: number }>(
        'SELECT role_id FROM role_user WHERE user_id = $1',
        [user.id],
      );
      assert.equal(role!.role_id, 2);

      const listed = await app.inject({ url: '/api/admin/user-admin', headers: admin });
      const one = listed.json().users.find((u: { id: number }) => u.id === user.id);
      assert.equal(one.accountType, 'User');
      assert.equal(one.createdAt, start.toISOString());

      // The log says who joined by which link.
      const events = await db.query<{ type: string; created_by: string; data: unknown }>(
        'SELECT type, created_by, data FROM events WHERE created_by_user_id = $1 ORDER BY id',
        [user.id],
      );
      assert.deepEqual(
        events.map((event) => [event.type, event.created_by]),
        [
          ['user-created', 'ada@example.com'],
          ['public-signup-token-user-added', 'ada@example.com'],
        ],
      );
      assert.ok(!/scrypt|correct horse/.test(JSON.stringify(events)));

      const withoutPassword = await signup(token.secret, { name: 'Bo', email: 'bo@example.com' });
      assertSignedUp(withoutPassword);
      assert.ok(sessionOf(withoutPassword));
      assert.equal((await get(token.secret)).json().users.length, 2);
    });

    it('answers a taken e-mail or user name as a new one, with no session, and changes nothing', async () => {
      const token = await newToken();
      const first = await signup(token.secret, {
        name: 'Cy',
        email: 'cy@example.com',
        username: 'cyrus',
        password: 'cy-original-password',
      });
      const created = assertSignedUp(first);
      assert.ok(sessionOf(first));
      const [before] = await db.query<{ password_hash: string }>(
        "SELECT password_hash FROM users WHERE email = 'cy@example.com'",
      );
      const state = await userState();
      const events = await db.query('SELECT id FROM events');
      const sessions = await db.query('SELECT id_hash FROM user_sessions');
      for (const payload of [
        { name: 'C2', email: 'CY@example.com', password: 'attacker-password' },
        { name: 'C3', email: 'cy@example.com' },
        { name: 'C4', email: 'new-cy@example.com', username: 'CYRUS', password: 'another-one' },
      ]) {
        const response = await signup(token.secret, payload);
        // Status, body and headers as for a new account, less the session cookie.
        assert.deepEqual(assertSignedUp(response), created, JSON.stringify(payload));
        assert.equal(response.headers['set-cookie'], undefined);
        assert.equal(response.headers['cache-control'], 'no-store');
        assert.deepEqual(
          Object.keys(response.headers).sort(),
          Object.keys(first.headers)
            .filter((name) => name !== 'set-cookie')
            .sort(),
        );
      }
      assert.deepEqual(await userState(), state);
      assert.deepEqual(await db.query('SELECT id FROM events'), events);
      assert.deepEqual(await db.query('SELECT id_hash FROM user_sessions'), sessions);
      const [after] = await db.query<{ password_hash: string }>(
        "SELECT password_hash FROM users WHERE email = 'cy@example.com'",
      );
      assert.equal(after!.password_hash, before!.password_hash);
      const login = await app.inject({
        method: 'POST',
        url: '/auth/simple/login',
        payload: { username: 'cy@example.com', password: 'cy-original-password' },
      });
      assert.equal(login.statusCode, 200, login.body);
    });

    it('refuses a signup sent from another site, which would sign the browser in to an account that site made', async () => {
      const token = await newToken();
      const state = await userState();
      for (const headers of [
        { origin: 'https://evil.example' } as Record<string, string>,
        { 'sec-fetch-site': 'cross-site' },
        { origin: 'null' },
      ]) {
        const response = await signup(
          token.secret,
          { name: 'X', email: 'x@example.com', password: 'long enough password' },
          headers,
        );
        assertError(response, 403);
        assert.equal(response.headers['set-cookie'], undefined);
      }
      assert.deepEqual(await userState(), state);
      const same = await signup(
        token.secret,
        { name: 'X', email: 'x@example.com' },
        { origin: 'https://flags.example.com', 'sec-fetch-site': 'same-origin' },
      );
      assertSignedUp(same);
    });

    it('refuses a signup on an expired or disabled token and creates nothing', async () => {
      const expiring = await newToken();
      const disabled = await newToken();
      await put(disabled.secret, { enabled: false });
      const state = await userState();
      now = new Date(now.getTime() + 2 * HOUR);
      try {
        const body = assertError(
          await signup(expiring.secret, { name: 'Late', email: 'late@example.com' }),
          400,
        );
        assert.equal(body.message, 'This invite link has expired or has been disabled.');
      } finally {
        now = start;
      }
      assertError(await signup(disabled.secret, { name: 'Off', email: 'off@example.com' }), 400);
      assert.deepEqual(await userState(), state);
      assert.equal((await get(expiring.secret)).json().users.length, 0);
    });

    it('validates the signup body: required fields, email format, no role from the body', async () => {
      const token = await newToken();
      const state = await userState();
      for (const payload of [
        {},
        { name: 'N' },
        { email: 'n@example.com' },
        { name: 'N', email: 'not-an-email' },
        { name: 'N', email: 'n@example.com', password: 'short' },
        { name: 'N', email: 'n@example.com', rootRole: 1 },
      ]) {
        const body = assertError(await signup(token.secret, payload), 400);
        assert.equal(body.name, 'BadDataError', JSON.stringify(payload));
      }
      assert.deepEqual(await userState(), state);
    });
  });
}

describe('public signup rate limit', () => {
  /** An app with an invite token, its database, and the token's secret; closed after `use`. */
  async function withInvite(
    config: ServerOptions,
    use: (run: { app: FastifyInstance; db: Database; secret: string }) => Promise<void>,
  ): Promise<void> {
    const opened = await backends[0]!.open();
    const app = await buildApp(testConfig(config), { db: opened.db, logger: false });
    try {
      const created = await app.inject({
        method: 'POST',
        url: '/api/admin/invite-link/tokens',
        headers: admin,
        payload: { name: 'invite', expiresAt: new Date(Date.now() + 3_600_000).toISOString() },
      });
      const { secret } = created.json() as { secret: string };
      await use({ app, db: opened.db, secret });
    } finally {
      await app.close();
      await opened.cleanup();
    }
  }

  it('accepts SIGNUP_RATE_LIMIT_PER_MINUTE signups per address and minute, then 429 without creating users', async () => {
    await withInvite({ signupsPerMinute: 3 }, async ({ app, db, secret }) => {
      const signup = (email: string, remoteAddress = '203.0.113.7') =>
        app.inject({
          method: 'POST',
          url: `/invite/${secret}/signup`,
          payload: { name: 'N', email },
          remoteAddress,
        });
      const statuses = [];
      for (let i = 0; i < 3; i++) statuses.push((await signup(`u${i}@example.com`)).statusCode);
      // A refused body counts too: the limit is on attempts.
      statuses.push((await signup('not-an-email')).statusCode);
      assert.deepEqual(statuses, [202, 202, 202, 429]);
      const users = await db.query('SELECT email FROM users ORDER BY id');
      const limited = await signup('late@example.com');
      assert.equal(limited.statusCode, 429);
      assert.ok(Number(limited.headers['retry-after']) > 0, 'Retry-After in seconds');
      assert.deepEqual(limited.json(), {
        code: 'RATE_LIMITED',
        name: 'RateLimitError',
        message: 'Too many requests from this address; try again in a minute.',
        details: [{ message: 'Too many requests from this address; try again in a minute.' }],
      });
      assert.deepEqual(await db.query('SELECT email FROM users ORDER BY id'), users);
      // Another address has its own allowance; the admin routes have no limit.
      assert.equal((await signup('other@example.com', '198.51.100.9')).statusCode, 202);
      for (let i = 0; i < 5; i++) {
        const listed = await app.inject({ url: '/api/admin/invite-link/tokens', headers: admin });
        assert.equal(listed.statusCode, 200);
      }
    });
  });

  it('counts each client behind a trusted load balancer (TRUST_PROXY) apart, and ignores forwarded-for from others', async () => {
    const { trustProxy } = loadConfig({ TRUST_PROXY: '10.0.0.0/8' });
    await withInvite({ trustProxy, signupsPerMinute: 2 }, async ({ app, secret }) => {
      let made = 0;
      const signup = (remoteAddress: string, forwardedFor: string) =>
        app
          .inject({
            method: 'POST',
            url: `/invite/${secret}/signup`,
            payload: { name: 'N', email: `u${made++}@example.com` },
            headers: { 'x-forwarded-for': forwardedFor },
            remoteAddress,
          })
          .then((response) => response.statusCode);
      // Two clients behind the balancer at 10.0.0.1: two signups each.
      const balanced = [];
      for (const client of ['203.0.113.7', '203.0.113.7', '198.51.100.9', '198.51.100.9'])
        balanced.push(await signup('10.0.0.1', client));
      assert.deepEqual(balanced, [202, 202, 202, 202]);
      assert.equal(await signup('10.0.0.1', '203.0.113.7'), 429);
      // A caller outside the trusted range is counted by its own address, whatever it forwards.
      const direct = [];
      for (const forged of ['192.0.2.1', '192.0.2.2', '192.0.2.3'])
        direct.push(await signup('192.0.2.200', forged));
      assert.deepEqual(direct, [202, 202, 429]);
    });
  });
});
