import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import type { ServerOptions } from '../../src/config/options.js';
import type { Database } from '../../src/db/database.js';
import { FakeOidcProvider, type IdTokenFault } from '../fake-oidc-provider.js';
import { admin, backends, testConfig } from '../helpers.js';
import { signInAtProvider, type TestAccount, TestOidcProvider } from '../oidc-provider.js';

const PUBLIC_URL = 'http://flags.test';
const CALLBACK = `${PUBLIC_URL}/auth/oidc/callback`;
const CLIENT_ID = 'flags-server';
const SECRET = 'the-client-secret-nobody-sees';

/** The body the Terraform provider's `unleash_oidc` resource sends (every field it knows). */
const terraformBody = (discoverUrl: string) => ({
  enabled: true,
  discoverUrl,
  clientId: CLIENT_ID,
  secret: SECRET,
  autoCreate: true,
  defaultRootRole: 'Viewer',
  emailDomains: 'example.com',
  enableSingleSignOut: true,
  enableGroupSyncing: true,
  groupJsonPath: 'groups',
  addGroupsScope: true,
  idTokenSigningAlgorithm: 'RS256',
});

/** A started sign-in: the provider's URL, its state and nonce, and the browser's login cookie. */
interface Started {
  readonly location: URL;
  readonly state: string;
  readonly nonce: string;
  readonly cookie: string;
}

async function startSignIn(app: FastifyInstance): Promise<Started> {
  const response = await app.inject({ method: 'GET', url: '/auth/oidc/login' });
  assert.equal(response.statusCode, 302, response.body);
  const location = new URL(String(response.headers.location));
  const cookie = String(response.headers['set-cookie']).split(';')[0]!;
  assert.match(cookie, /^flags-oidc-login=[\w-]{43}$/);
  assert.equal(location.searchParams.get('code_challenge_method'), 'S256');
  assert.equal(location.searchParams.get('redirect_uri'), CALLBACK);
  return {
    location,
    state: location.searchParams.get('state')!,
    nonce: location.searchParams.get('nonce')!,
    cookie,
  };
}

/** The callback as the browser calls it: `url` from the provider, with the login cookie. */
function callback(app: FastifyInstance, url: URL, cookie: string, accept = 'text/html') {
  return app.inject({
    method: 'GET',
    url: `${url.pathname}${url.search}`,
    headers: { cookie, accept },
  });
}

/** The session cookie a callback set, if any. */
function sessionOf(response: { headers: Record<string, unknown> }): string | undefined {
  const header = response.headers['set-cookie'];
  const lines = Array.isArray(header) ? header : header === undefined ? [] : [String(header)];
  const line = lines.find((entry: string) => /^unleash-session=[^;]+/.test(entry));
  return line?.split(';')[0];
}

async function roleOf(app: FastifyInstance, session: string): Promise<string> {
  const response = await app.inject({ url: '/api/admin/user', headers: { cookie: session } });
  assert.equal(response.statusCode, 200, response.body);
  const permissions = response.json<{ permissions: { permission: string }[] }>().permissions;
  const names = permissions.map((entry) => entry.permission);
  return names.includes('ADMIN') ? 'Admin' : names.includes('CREATE_FEATURE') ? 'Editor' : 'Viewer';
}

async function lastLogin(app: FastifyInstance) {
  const response = await app.inject({ url: '/api/admin/logins?limit=1', headers: admin });
  return response.json<{ events: Record<string, unknown>[] }>().events[0]!;
}

for (const backend of backends) {
  describe(`single sign-on with OpenID Connect on ${backend.name}`, () => {
    let db: Database;
    let cleanup: () => Promise<void>;
    const apps: FastifyInstance[] = [];
    const accounts = new Map<string, TestAccount>();
    const provider = new TestOidcProvider({
      clientId: CLIENT_ID,
      secret: SECRET,
      redirectUri: CALLBACK,
      postLogoutRedirectUri: `${PUBLIC_URL}/signed-out`,
      accounts,
    });
    const fake = new FakeOidcProvider(CLIENT_ID, SECRET);

    const start = async (overrides: ServerOptions = {}) => {
      const app = await buildApp(
        testConfig({ publicUrl: PUBLIC_URL, loginsPerMinute: 10_000, ...overrides }),
        { db, logger: false },
      );
      apps.push(app);
      return app;
    };

    const configure = async (app: FastifyInstance, body: Record<string, unknown>) => {
      const response = await app.inject({
        method: 'POST',
        url: '/api/admin/auth/oidc/settings',
        headers: admin,
        payload: body,
      });
      assert.equal(response.statusCode, 200, response.body);
      return response;
    };

    const createGroup = async (app: FastifyInstance, name: string, role: string, sso: string[]) => {
      const roles = await app.inject({ url: '/api/admin/roles', headers: admin });
      const rootRole = roles
        .json<{ roles: { id: number; name: string }[] }>()
        .roles.find((entry) => entry.name === role)!.id;
      const response = await app.inject({
        method: 'POST',
        url: '/api/admin/groups',
        headers: admin,
        payload: { name, rootRole, mappingsSSO: sso },
      });
      assert.equal(response.statusCode, 201, response.body);
      return response.json<{ id: number }>();
    };

    /** A whole sign-in through the real provider as `login`; the callback's answer. */
    const signIn = async (app: FastifyInstance, login: string) => {
      const started = await startSignIn(app);
      const back = await signInAtProvider(started.location.href, login);
      return { started, back, response: await callback(app, back, started.cookie) };
    };

    before(async () => {
      ({ db, cleanup } = await backend.open());
      await provider.start();
      await fake.start();
    });
    after(async () => {
      for (const app of apps) await app.close();
      await provider.stop();
      await fake.stop();
      await cleanup();
    });

    it('takes the settings the Terraform provider sends, never answers the secret, and is Admin-only', async () => {
      const app = await start();
      const body = terraformBody(provider.discoverUrl);
      const saved = await configure(app, body);
      assert.ok(!saved.body.includes(SECRET));
      const { secret: _secret, ...expected } = body;
      assert.deepEqual(saved.json(), expected);
      const read = await app.inject({ url: '/api/admin/auth/oidc/settings', headers: admin });
      assert.deepEqual(read.json(), expected);
      assert.ok(!read.body.includes(SECRET));

      // A change without the secret keeps it; a role by id, as `default_root_role = 1` sends it.
      await configure(app, { ...expected, defaultRootRole: 3 });
      const events = await app.inject({
        url: '/api/admin/search/events?type=setting-updated',
        headers: admin,
      });
      assert.ok(events.body.includes('unleash.enterprise.auth.oidc'), events.body);
      assert.ok(!events.body.includes(SECRET), 'no event carries the secret');
      const stored = await db.query<{ content: { secret: string; defaultRootRole: string } }>(
        "SELECT content FROM settings WHERE name = 'oidc'",
      );
      assert.equal(stored[0]!.content.secret, SECRET);
      assert.equal(stored[0]!.content.defaultRootRole, 'Viewer');

      // Unusable settings are refused and change nothing.
      for (const bad of [
        { enabled: true, discoverUrl: 'http://idp.example.com/.well-known/openid-configuration' },
        { enabled: true, clientId: '' },
        { defaultRootRole: 'Owner' },
        { enabled: 'yes' },
      ]) {
        const refused = await app.inject({
          method: 'POST',
          url: '/api/admin/auth/oidc/settings',
          headers: admin,
          payload: bad,
        });
        assert.equal(refused.statusCode, 400, JSON.stringify(bad));
        assert.equal(refused.json().code, 'BAD_DATA');
      }
      assert.deepEqual(
        (await app.inject({ url: '/api/admin/auth/oidc/settings', headers: admin })).json(),
        expected,
      );

      // A signed-in Editor may neither read nor change them.
      await app.inject({
        method: 'POST',
        url: '/api/admin/user-admin',
        headers: admin,
        payload: {
          username: 'ed',
          email: 'ed@example.com',
          password: 'ed password 1!',
          rootRole: 'Editor',
        },
      });
      const login = await app.inject({
        method: 'POST',
        url: '/auth/simple/login',
        payload: { username: 'ed', password: 'ed password 1!' },
      });
      const editor = String(login.headers['set-cookie']).split(';')[0]!;
      for (const [method, url] of [
        ['GET', '/api/admin/auth/oidc/settings'],
        ['POST', '/api/admin/auth/oidc/settings'],
        ['GET', '/api/admin/groups'],
        ['POST', '/api/admin/groups'],
        ['POST', '/api/admin/auth/simple/settings'],
      ] as const) {
        const response = await app.inject({
          method,
          url,
          headers: { cookie: editor },
          ...(method === 'POST' ? { payload: { name: 'x', disabled: false } } : {}),
        });
        assert.equal(response.statusCode, 403, `${method} ${url}`);
      }
      const unauthenticated = await app.inject({ url: '/api/admin/auth/oidc/settings' });
      assert.equal(unauthenticated.statusCode, 401);
    });

    it('signs a new user in with the default role, then follows the provider’s groups at every sign-in', async () => {
      const app = await start();
      await configure(app, terraformBody(provider.discoverUrl));
      const options = await app.inject({ url: '/auth/login-options' });
      assert.deepEqual(options.json(), {
        passwordLogins: true,
        sso: [{ type: 'oidc', message: 'Sign in with OpenID Connect', path: '/auth/oidc/login' }],
      });

      accounts.set('nina', { email: 'nina@example.com', groups: [] });
      const first = await signIn(app, 'nina');
      assert.equal(first.response.statusCode, 302, first.response.body);
      assert.equal(first.response.headers.location, '/');
      const nina = sessionOf(first.response)!;
      assert.ok(nina);
      assert.equal(await roleOf(app, nina), 'Viewer');
      const users = await db.query<{ email: string }>(
        "SELECT email FROM users WHERE email = 'nina@example.com'",
      );
      assert.equal(users.length, 1);
      assert.deepEqual(
        { ...(await lastLogin(app)), id: 0, created_at: '', ip: '', user_agent: '' },
        {
          id: 0,
          username: 'nina@example.com',
          auth_type: 'oidc',
          created_at: '',
          successful: true,
          ip: '',
          user_agent: '',
          failure_reason: null,
        },
      );

      await createGroup(app, 'Flag admins', 'Admin', ['flags-admins']);
      await createGroup(app, 'Flag editors', 'Editor', ['flags-editors']);
      accounts.set('olaf', {
        email: 'Olaf@Example.com',
        groups: ['flags-editors', 'flags-admins'],
      });
      const asAdmin = await signIn(app, 'olaf');
      assert.equal(await roleOf(app, sessionOf(asAdmin.response)!), 'Admin');

      accounts.set('olaf', { email: 'olaf@example.com', groups: ['flags-editors', 'other'] });
      const asEditor = await signIn(app, 'olaf');
      assert.equal(await roleOf(app, sessionOf(asEditor.response)!), 'Editor');

      accounts.set('olaf', { email: 'olaf@example.com', groups: [] });
      const asNothing = await signIn(app, 'olaf');
      assert.equal(await roleOf(app, sessionOf(asNothing.response)!), 'Viewer');
      const olafs = await db.query("SELECT 1 FROM users WHERE lower(email) = 'olaf@example.com'");
      assert.equal(olafs.length, 1, 'one user, signed in three times');
      const updates = await app.inject({
        url: '/api/admin/search/events?type=user-updated',
        headers: admin,
      });
      assert.equal(updates.json<{ events: unknown[] }>().events.length, 2);
    });

    it('refuses an e-mail outside emailDomains, or an unknown one without autoCreate, with a page and no session', async () => {
      const app = await start();
      await configure(app, terraformBody(provider.discoverUrl));
      accounts.set('mallory', { email: 'mallory@elsewhere.org', groups: ['flags-admins'] });
      const outside = await signIn(app, 'mallory');
      assert.equal(outside.response.statusCode, 403);
      assert.match(String(outside.response.headers['content-type']), /^text\/html/);
      assert.match(outside.response.body, /e-mail domain elsewhere\.org is not in emailDomains/);
      assert.equal(sessionOf(outside.response), undefined);
      const refused = await lastLogin(app);
      assert.equal(refused.successful, false);
      assert.equal(refused.username, 'mallory@elsewhere.org');
      assert.equal(refused.failure_reason, 'e-mail domain elsewhere.org is not in emailDomains');
      const mallory = await db.query("SELECT 1 FROM users WHERE email = 'mallory@elsewhere.org'");
      assert.equal(mallory.length, 0);

      // A user kept as disabled here (`deleted_at`) is not signed in, nor created again.
      await app.inject({
        method: 'POST',
        url: '/api/admin/user-admin',
        headers: admin,
        payload: { email: 'gone@example.com', rootRole: 'Viewer' },
      });
      await db.query("UPDATE users SET deleted_at = now() WHERE email = 'gone@example.com'");
      accounts.set('gone', { email: 'gone@example.com', groups: [] });
      const disabled = await signIn(app, 'gone');
      assert.equal(disabled.response.statusCode, 403);
      assert.equal(sessionOf(disabled.response), undefined);
      assert.equal(
        (await lastLogin(app)).failure_reason,
        'the user with this e-mail was disabled here',
      );

      // Someone the provider no longer knows is stopped there: no way back here, no session.
      accounts.delete('gone');
      const started = await startSignIn(app);
      await assert.rejects(
        signInAtProvider(started.location.href, 'gone'),
        /the provider answered/,
      );

      await configure(app, { autoCreate: false });
      accounts.set('newcomer', { email: 'newcomer@example.com', groups: [] });
      const unknown = await signIn(app, 'newcomer');
      assert.equal(unknown.response.statusCode, 403);
      assert.equal(sessionOf(unknown.response), undefined);
      assert.equal(
        (await lastLogin(app)).failure_reason,
        'no user has this e-mail and autoCreate is off',
      );
      await configure(app, { autoCreate: true });
    });

    it('refuses a user an Admin disabled, with autoCreate on: no session, not created again, the refusal in the login history', async () => {
      const app = await start();
      await configure(app, { ...terraformBody(provider.discoverUrl), autoCreate: true });
      accounts.set('dora', { email: 'dora@example.com', groups: [] });
      const first = await signIn(app, 'dora');
      assert.equal(first.response.statusCode, 302, first.response.body);
      const session = sessionOf(first.response)!;
      assert.equal(await roleOf(app, session), 'Viewer');
      const [dora] = await db.query<{ id: number }>(
        "SELECT id FROM users WHERE email = 'dora@example.com'",
      );
      const disabled = await app.inject({
        method: 'PUT',
        url: `/api/admin/user-admin/${dora!.id}`,
        headers: admin,
        payload: { disabled: true },
      });
      assert.equal(disabled.statusCode, 200, disabled.body);
      const me = await app.inject({ url: '/api/admin/user', headers: { cookie: session } });
      assert.equal(me.statusCode, 401);

      const again = await signIn(app, 'dora');
      assert.equal(again.response.statusCode, 403);
      assert.equal(sessionOf(again.response), undefined);
      const refused = await lastLogin(app);
      assert.equal(refused.successful, false);
      assert.equal(refused.username, 'dora@example.com');
      assert.equal(refused.failure_reason, 'the user with this e-mail is disabled');
      const rows = await db.query("SELECT 1 FROM users WHERE lower(email) = 'dora@example.com'");
      assert.equal(rows.length, 1);
    });

    it('refuses a changed state, a replayed callback and a replayed code, with no session', async () => {
      const app = await start();
      await configure(app, terraformBody(provider.discoverUrl));
      accounts.set('rita', { email: 'rita@example.com', groups: [] });

      const started = await startSignIn(app);
      const back = await signInAtProvider(started.location.href, 'rita');
      const changed = new URL(back);
      changed.searchParams.set('state', `${started.state}x`);
      const wrongState = await callback(app, changed, started.cookie, 'application/json');
      assert.equal(wrongState.statusCode, 401);
      assert.equal(wrongState.json().code, 'SSO_FAILED');
      assert.equal(sessionOf(wrongState), undefined);
      assert.match(
        (await lastLogin(app)).failure_reason as string,
        /unknown or already used state/,
      );

      // Another browser (no login cookie, or another's) cannot finish it either.
      const foreign = await callback(app, back, 'flags-oidc-login=someone-else');
      assert.equal(foreign.statusCode, 401);
      assert.equal(sessionOf(foreign), undefined);
      assert.match((await lastLogin(app)).failure_reason as string, /another browser/);

      // The state was taken by that try: the right browser comes too late with it.
      const late = await callback(app, back, started.cookie);
      assert.equal(late.statusCode, 401);
      assert.equal(sessionOf(late), undefined);

      // A good sign-in, then its callback again: refused.
      const good = await signIn(app, 'rita');
      assert.equal(good.response.statusCode, 302, good.response.body);
      assert.ok(sessionOf(good.response));
      const replayed = await callback(app, good.back, good.started.cookie);
      assert.equal(replayed.statusCode, 401);
      assert.equal(sessionOf(replayed), undefined);

      // Its code under a fresh state of this browser: the provider refuses the used code.
      const fresh = await startSignIn(app);
      const reused = new URL(good.back);
      reused.searchParams.set('state', fresh.state);
      const replayedCode = await callback(app, reused, fresh.cookie);
      assert.equal(replayedCode.statusCode, 401, replayedCode.body);
      assert.equal(sessionOf(replayedCode), undefined);
      assert.match((await lastLogin(app)).failure_reason as string, /invalid_grant/);
    });

    it('still signs in after the provider rotated its signing key', async () => {
      const app = await start();
      await configure(app, terraformBody(provider.discoverUrl));
      accounts.set('kim', { email: 'kim@example.com', groups: [] });
      const before = await signIn(app, 'kim');
      assert.equal(before.response.statusCode, 302, before.response.body);
      await provider.rotate();
      await configure(app, { discoverUrl: provider.discoverUrl });
      const afterRotation = await signIn(app, 'kim');
      assert.equal(afterRotation.response.statusCode, 302, afterRotation.response.body);
      assert.ok(sessionOf(afterRotation.response));
    });

    it('ends the provider’s session too at logout with enableSingleSignOut', async () => {
      const app = await start();
      await configure(app, terraformBody(provider.discoverUrl));
      accounts.set('sam', { email: 'sam@example.com', groups: [] });
      const signedIn = await signIn(app, 'sam');
      const session = sessionOf(signedIn.response)!;
      const logout = await app.inject({
        method: 'POST',
        url: '/logout',
        headers: { cookie: session },
      });
      assert.equal(logout.statusCode, 302);
      assert.equal(logout.headers.location, '/auth/oidc/signed-out');
      assert.equal(
        (await app.inject({ url: '/api/admin/user', headers: { cookie: session } })).statusCode,
        401,
      );
      const page = await app.inject({ url: '/auth/oidc/signed-out' });
      assert.equal(page.statusCode, 200);
      const target = /content="0;url=([^"]+)"/.exec(page.body)![1]!.replaceAll('&amp;', '&');
      const endSession = new URL(target);
      assert.equal(endSession.origin, provider.issuer);
      assert.equal(endSession.searchParams.get('client_id'), CLIENT_ID);
      assert.equal(
        endSession.searchParams.get('post_logout_redirect_uri'),
        `${PUBLIC_URL}/signed-out`,
      );

      // Off: the logout ends here only.
      await configure(app, { enableSingleSignOut: false });
      const again = sessionOf((await signIn(app, 'sam')).response)!;
      const plain = await app.inject({
        method: 'POST',
        url: '/logout',
        headers: { cookie: again },
      });
      assert.equal(plain.headers.location, '/signed-out');
    });

    for (const fault of ['wrong-nonce', 'other-key', 'other-audience', 'expired'] as const) {
      it(`refuses an ID token with ${fault}, with no session`, async () => {
        const app = await start();
        await configure(app, { ...terraformBody(fake.discoverUrl), enableGroupSyncing: false });
        const signInWith = async (withFault: IdTokenFault, code: string) => {
          fake.fault = withFault;
          const started = await startSignIn(app);
          fake.prepare({ code, nonce: started.nonce, email: 'faye@example.com' });
          const url = new URL(CALLBACK);
          url.search = new URLSearchParams({ code, state: started.state }).toString();
          return callback(app, url, started.cookie, 'application/json');
        };
        // The same sign-in without the fault succeeds: the refusal is the fault's.
        const good = await signInWith('none', `good-${fault}`);
        assert.equal(good.statusCode, 302, good.body);
        assert.ok(sessionOf(good));
        const bad = await signInWith(fault, `bad-${fault}`);
        assert.equal(bad.statusCode, 401, bad.body);
        assert.equal(bad.json().code, 'SSO_FAILED');
        assert.equal(sessionOf(bad), undefined);
        const reason = (await lastLogin(app)).failure_reason as string;
        assert.match(reason, /^the code or the ID token was refused: /);
        fake.fault = 'none';
      });
    }

    it('checks ID tokens against the key set read at each sign-in: a rotated key works at once', async () => {
      const app = await start();
      await configure(app, { ...terraformBody(fake.discoverUrl), enableGroupSyncing: false });
      const signInOnce = async (code: string) => {
        const started = await startSignIn(app);
        fake.prepare({ code, nonce: started.nonce, email: 'rot@example.com' });
        const url = new URL(CALLBACK);
        url.search = new URLSearchParams({ code, state: started.state }).toString();
        return callback(app, url, started.cookie);
      };
      assert.equal((await signInOnce('rotation-1')).statusCode, 302);
      const reads = fake.jwksReads;
      await fake.rotate();
      const rotated = await signInOnce('rotation-2');
      assert.equal(rotated.statusCode, 302, rotated.body);
      assert.ok(fake.jwksReads > reads);
    });

    it('turns password logins off for everyone but the break-glass Admin', async () => {
      const app = await start({ breakGlassAdmin: 'Root@Example.com' });
      const add = async (username: string, rootRole: string) => {
        const response = await app.inject({
          method: 'POST',
          url: '/api/admin/user-admin',
          headers: admin,
          payload: {
            username,
            email: `${username}@example.com`,
            password: `${username} pass 1!`,
            rootRole,
          },
        });
        assert.equal(response.statusCode, 201, response.body);
      };
      await add('root', 'Admin');
      await add('other', 'Admin');
      const logIn = (username: string, password = `${username} pass 1!`) =>
        app.inject({ method: 'POST', url: '/auth/simple/login', payload: { username, password } });

      await configure(app, { enabled: false });
      const early = await app.inject({
        method: 'POST',
        url: '/api/admin/auth/simple/settings',
        headers: admin,
        payload: { disabled: true },
      });
      assert.equal(early.statusCode, 400, 'not without single sign-on');

      await configure(app, terraformBody(provider.discoverUrl));
      const off = await app.inject({
        method: 'POST',
        url: '/api/admin/auth/simple/settings',
        headers: admin,
        payload: { disabled: true },
      });
      assert.equal(off.statusCode, 200, off.body);
      assert.deepEqual(
        (await app.inject({ url: '/auth/login-options' })).json().passwordLogins,
        false,
      );

      const other = await logIn('other');
      assert.equal(other.statusCode, 403);
      assert.equal(other.json().code, 'PASSWORD_LOGINS_DISABLED');
      assert.equal(other.headers['set-cookie'], undefined);
      assert.equal((await lastLogin(app)).failure_reason, 'password logins are off');
      assert.equal((await logIn('nobody', 'x')).statusCode, 403);
      assert.equal((await logIn('root', 'wrong')).statusCode, 401, 'its password is checked');
      const root = await logIn('root');
      assert.equal(root.statusCode, 200, root.body);

      // Only while an Admin.
      const users = await app.inject({ url: '/api/admin/user-admin', headers: admin });
      const rootId = users
        .json<{ users: { id: number; username: string }[] }>()
        .users.find((user) => user.username === 'root')!.id;
      await app.inject({
        method: 'PUT',
        url: `/api/admin/user-admin/${rootId}`,
        headers: admin,
        payload: { rootRole: 'Editor' },
      });
      assert.equal((await logIn('root')).statusCode, 403);

      const on = await app.inject({
        method: 'POST',
        url: '/api/admin/auth/simple/settings',
        headers: admin,
        payload: { disabled: false },
      });
      assert.equal(on.statusCode, 200);
      assert.equal((await logIn('other')).statusCode, 200);
    });

    it('keeps groups in Unleash’s shape, Admin-only, each change an event', async () => {
      const app = await start();
      const created = await createGroup(app, 'Platform', 'Editor', ['platform', 'platform']);
      const read = await app.inject({ url: `/api/admin/groups/${created.id}`, headers: admin });
      assert.equal(read.statusCode, 200);
      const group = read.json();
      assert.equal(group.name, 'Platform');
      assert.deepEqual(group.mappingsSSO, ['platform']);
      assert.deepEqual(group.users, []);
      assert.equal(group.createdBy, 'admin (configured)');

      const clash = await app.inject({
        method: 'POST',
        url: '/api/admin/groups',
        headers: admin,
        payload: { name: 'platform' },
      });
      assert.equal(clash.statusCode, 409);
      const badRole = await app.inject({
        method: 'POST',
        url: '/api/admin/groups',
        headers: admin,
        payload: { name: 'Nope', rootRole: 999 },
      });
      assert.equal(badRole.statusCode, 400);
      const updated = await app.inject({
        method: 'PUT',
        url: `/api/admin/groups/${created.id}`,
        headers: admin,
        payload: { name: 'Platform team', mappingsSSO: ['platform-team'], rootRole: null },
      });
      assert.equal(updated.statusCode, 200, updated.body);
      assert.equal(updated.json().rootRole, null);
      const list = await app.inject({ url: '/api/admin/groups', headers: admin });
      assert.ok(
        list.json().groups.some((entry: { name: string }) => entry.name === 'Platform team'),
      );
      const deleted = await app.inject({
        method: 'DELETE',
        url: `/api/admin/groups/${created.id}`,
        headers: admin,
      });
      assert.equal(deleted.statusCode, 200);
      const gone = await app.inject({ url: `/api/admin/groups/${created.id}`, headers: admin });
      assert.equal(gone.statusCode, 404);
      for (const type of ['group-created', 'group-updated', 'group-deleted']) {
        const events = await app.inject({
          url: `/api/admin/search/events?type=${type}`,
          headers: admin,
        });
        assert.ok(events.json().events.length >= 1, type);
      }
    });

    it('stops the start when the OIDC_* options leave single sign-on unusable, naming each variable', async () => {
      const fresh = await backend.open();
      try {
        await assert.rejects(
          buildApp(testConfig({ publicUrl: PUBLIC_URL, oidc: { enabled: true, clientId: 'x' } }), {
            db: fresh.db,
            logger: false,
          }),
          (error: Error) => {
            assert.equal(error.name, 'ConfigError');
            assert.match(error.message, /OIDC_DISCOVER_URL must be the provider’s discovery URL/);
            assert.match(error.message, /OIDC_SECRET is required/);
            assert.doesNotMatch(error.message, /OIDC_CLIENT_ID/);
            return true;
          },
        );
      } finally {
        await fresh.cleanup();
      }
    });

    it('writes the OIDC_* startup options over the stored settings', async () => {
      const app = await start({
        oidc: {
          enabled: true,
          discoverUrl: provider.discoverUrl,
          clientId: 'from-env',
          secret: 'env-secret-value',
          emailDomains: 'example.com',
        },
      });
      const read = await app.inject({ url: '/api/admin/auth/oidc/settings', headers: admin });
      assert.equal(read.json().clientId, 'from-env');
      assert.ok(!read.body.includes('env-secret-value'));
      const events = await app.inject({ url: '/api/admin/search/events', headers: admin });
      assert.ok(!events.body.includes('env-secret-value'));
      await configure(app, { clientId: CLIENT_ID, secret: SECRET });
    });
  });
}
