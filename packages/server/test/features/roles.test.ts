import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { Database } from '../../src/db/database.js';
import { ADMIN_TOKEN, admin, backends, DEV_TOKEN, startApp } from '../helpers.js';

type Who = 'Admin' | 'Editor' | 'Viewer' | 'admin token' | 'client token' | 'nobody';

/**
 * Representative admin routes: a read, a write Editors may do (`permission: 'edit'`), and one only
 * admins may do. Each request gets a fresh name so repeated writes do not clash.
 */
const ROUTES = {
  read: () => ({ method: 'GET' as const, url: '/api/admin/projects/default/features' }),
  edit: (n: number) => ({
    method: 'POST' as const,
    url: '/api/admin/projects/default/features',
    payload: { name: `flag-${n}` },
  }),
  admin: (n: number) => ({
    method: 'POST' as const,
    url: '/api/admin/api-tokens',
    payload: { tokenName: `token-${n}`, type: 'client', environment: 'development' },
  }),
};

/** The expected status per caller: read, editor write, admin write. */
const MATRIX: Readonly<Record<Who, readonly [number, number, number]>> = {
  Admin: [200, 201, 201],
  Editor: [200, 201, 403],
  Viewer: [200, 403, 403],
  'admin token': [200, 201, 201],
  'client token': [403, 403, 403],
  nobody: [401, 401, 401],
};

for (const backend of backends) {
  describe(`roles on ${backend.name}`, () => {
    let cleanup: () => Promise<void>;
    let db: Database;
    let app: FastifyInstance;
    const credentials = new Map<Who, Record<string, string>>();

    before(async () => {
      const opened = await backend.open();
      db = opened.db;
      cleanup = opened.cleanup;
      app = await startApp(db, { loginsPerMinute: 1000 });
      for (const role of ['Admin', 'Editor', 'Viewer'] as const) {
        const username = role.toLowerCase();
        const created = await app.inject({
          method: 'POST',
          url: '/api/admin/user-admin',
          headers: admin,
          payload: { username, password: `${username} password`, rootRole: role },
        });
        assert.equal(created.statusCode, 201, created.body);
        const login = await app.inject({
          method: 'POST',
          url: '/auth/simple/login',
          payload: { username, password: `${username} password` },
        });
        assert.equal(login.statusCode, 200, login.body);
        credentials.set(role, { cookie: String(login.headers['set-cookie']).split(';')[0]! });
      }
      credentials.set('admin token', { authorization: ADMIN_TOKEN });
      credentials.set('client token', { authorization: DEV_TOKEN });
      credentials.set('nobody', {});
    });
    after(async () => {
      await app.close();
      await cleanup();
    });

    let serial = 0;
    for (const [who, [read, edit, adminOnly]] of Object.entries(MATRIX) as [
      Who,
      readonly number[],
    ][]) {
      it(`${who}: read ${read}, editor write ${edit}, admin write ${adminOnly}`, async () => {
        const headers = credentials.get(who)!;
        const answers = [];
        for (const route of [ROUTES.read(), ROUTES.edit(++serial), ROUTES.admin(serial)]) {
          const response = await app.inject({ ...route, headers });
          answers.push(response.statusCode);
          if (response.statusCode >= 400) {
            assert.equal(
              response.json().name,
              response.statusCode === 401 ? 'AuthenticationRequired' : 'ForbiddenError',
            );
          }
        }
        assert.deepEqual(answers, [read, edit, adminOnly]);
      });
    }

    // Issue 46: these answered every role. unleash-server refuses them to all but Admins;
    // test/e2e/role-matrix.test.ts compares every admin route with it.
    it('answers user administration, API tokens, invite links and roles to Admins only', async () => {
      const reads = [
        '/api/admin/user-admin',
        '/api/admin/api-tokens',
        '/api/admin/invite-link/tokens',
        '/api/admin/roles',
      ];
      const answers: Record<string, number[]> = {};
      for (const url of reads) {
        answers[url] = [];
        for (const who of ['Admin', 'Editor', 'Viewer'] as const) {
          const response = await app.inject({ url, headers: credentials.get(who)! });
          answers[url].push(response.statusCode);
        }
      }
      assert.deepEqual(answers, Object.fromEntries(reads.map((url) => [url, [200, 403, 403]])));
    });

    it('records the user name of a session as who made a change', async () => {
      const response = await app.inject({
        ...ROUTES.edit(1000),
        headers: credentials.get('Editor')!,
      });
      assert.equal(response.statusCode, 201, response.body);
      const [event] = await db.query<{ created_by: string }>(
        "SELECT created_by FROM events WHERE feature_name = 'flag-1000' ORDER BY id LIMIT 1",
      );
      assert.equal(event?.created_by, 'editor');
    });

    it('gives a user who signs up by a link the link’s role, and names its creator', async () => {
      const created = await app.inject({
        method: 'POST',
        url: '/api/admin/invite-link/tokens',
        headers: { ...credentials.get('Admin')!, origin: 'http://localhost:4242' },
        payload: { name: 'editors', role: 'Editor', expiresAt: '2099-01-01T00:00:00Z' },
      });
      assert.equal(created.statusCode, 201, created.body);
      assert.equal(created.json().createdBy, 'admin');
      const secret = created.json().secret as string;
      const signup = await app.inject({
        method: 'POST',
        url: `/invite/${secret}/signup`,
        payload: {
          name: 'Linus',
          email: 'linus@example.com',
          username: 'linus',
          password: 'linus password',
        },
      });
      assert.equal(signup.statusCode, 202, signup.body);
      const login = await app.inject({
        method: 'POST',
        url: '/auth/simple/login',
        payload: { username: 'linus@example.com', password: 'linus password' },
      });
      assert.equal(login.statusCode, 200, login.body);
      const cookie = String(login.headers['set-cookie']).split(';')[0]!;
      const answers = [];
      for (const route of [ROUTES.read(), ROUTES.edit(3000), ROUTES.admin(3000)]) {
        answers.push((await app.inject({ ...route, headers: { cookie } })).statusCode);
      }
      assert.deepEqual(answers, MATRIX.Editor);
    });

    it('names the role in a refusal', async () => {
      const response = await app.inject({
        ...ROUTES.admin(2000),
        headers: credentials.get('Editor')!,
      });
      assert.equal(response.statusCode, 403);
      assert.equal(
        response.json().message,
        'This needs the Admin role; editor has the Editor role.',
      );
    });

    describe('cookie-authenticated writes from another site', () => {
      const write = (headers: Record<string, string>, n: number) =>
        app.inject({ ...ROUTES.edit(n), headers });

      it('are refused by Origin or Sec-Fetch-Site', async () => {
        const cookie = credentials.get('Admin')!;
        for (const extra of <Record<string, string>[]>[
          { origin: 'https://evil.example' },
          { origin: 'null' },
          { 'sec-fetch-site': 'cross-site' },
          { origin: 'http://localhost:4242', 'sec-fetch-site': 'cross-site' },
        ]) {
          const response = await write({ ...cookie, ...extra }, ++serial);
          assert.equal(response.statusCode, 403, JSON.stringify(extra));
          assert.match(response.json().message, /another site/);
        }
      });

      it('are allowed from the server’s own origin (PUBLIC_URL or the request’s host)', async () => {
        const cookie = credentials.get('Admin')!;
        for (const extra of <Record<string, string>[]>[
          { origin: 'http://localhost:4242', 'sec-fetch-site': 'same-origin' },
          { origin: 'http://flags.internal:8080', host: 'flags.internal:8080' },
          {},
        ]) {
          const response = await write({ ...cookie, ...extra }, ++serial);
          assert.equal(response.statusCode, 201, `${JSON.stringify(extra)} ${response.body}`);
        }
      });

      it('reads from another site still work with a cookie', async () => {
        const response = await app.inject({
          ...ROUTES.read(),
          headers: {
            ...credentials.get('Viewer')!,
            origin: 'https://evil.example',
            'sec-fetch-site': 'cross-site',
          },
        });
        assert.equal(response.statusCode, 200);
      });

      it('token writes are allowed from any origin', async () => {
        const response = await write(
          {
            authorization: ADMIN_TOKEN,
            origin: 'https://elsewhere.example',
            'sec-fetch-site': 'cross-site',
          },
          ++serial,
        );
        assert.equal(response.statusCode, 201, response.body);
      });

      it('a cross-site logout is refused and leaves the session', async () => {
        const cookie = credentials.get('Viewer')!;
        const logout = await app.inject({
          method: 'POST',
          url: '/logout',
          headers: { ...cookie, origin: 'https://evil.example' },
        });
        assert.equal(logout.statusCode, 403);
        const still = await app.inject({ method: 'GET', url: '/api/admin/user', headers: cookie });
        assert.equal(still.statusCode, 200);
      });
    });
  });
}
