import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { waitFor } from '../../../../test/helpers/wait.js';
import type { Database } from '../../src/db/database.js';
import { admin, backends, startApp } from '../helpers.js';
import { openSse, type SseConnection } from '../sse-client.js';

const ORIGIN = 'http://localhost:4242';

/** `unleash-session=<secret>` from a login answer. */
const cookieOf = (response: { headers: Record<string, unknown> }) =>
  String(response.headers['set-cookie']).split(';')[0]!;

for (const backend of backends) {
  describe(`user administration on ${backend.name}`, () => {
    let cleanup: () => Promise<void>;
    let db: Database;
    let app: FastifyInstance;
    let base: string;
    const streams: SseConnection[] = [];
    let serial = 0;

    before(async () => {
      const opened = await backend.open();
      db = opened.db;
      cleanup = opened.cleanup;
      app = await startApp(db, { loginsPerMinute: 10_000 });
      base = await app.listen({ port: 0, host: '127.0.0.1' });
    });
    after(async () => {
      for (const stream of streams) stream.close();
      await app.close();
      await cleanup();
    });

    const inject = (
      method: 'GET' | 'POST' | 'PUT' | 'DELETE',
      url: string,
      headers: Record<string, string>,
      payload?: unknown,
    ) =>
      app.inject({
        method,
        url,
        headers: { origin: ORIGIN, ...headers },
        ...(payload === undefined ? {} : { payload: payload as object }),
      });

    /** A new user of `rootRole`, signed in: their id, name, password and session cookie. */
    const newUser = async (rootRole: 'Admin' | 'Editor' | 'Viewer') => {
      const username = `${rootRole.toLowerCase()}-${++serial}`;
      const password = `${username} password`;
      const created = await inject('POST', '/api/admin/user-admin', admin, {
        username,
        email: `${username}@example.com`,
        password,
        rootRole,
      });
      assert.equal(created.statusCode, 201, created.body);
      const cookie = cookieOf(await logIn(username, password));
      return { id: created.json<{ id: number }>().id, username, password, cookie };
    };

    const logIn = async (username: string, password: string) => {
      const response = await inject('POST', '/auth/simple/login', {}, { username, password });
      assert.equal(response.statusCode, 200, response.body);
      return response;
    };

    const me = async (headers: Record<string, string>) =>
      (await inject('GET', '/api/admin/user', headers)).statusCode;

    /** A write any Editor may do: a new flag. */
    const write = async (headers: Record<string, string>) =>
      (
        await inject('POST', '/api/admin/projects/default/features', headers, {
          name: `flag-${++serial}`,
        })
      ).statusCode;

    const newPat = async (cookie: string) => {
      const response = await inject(
        'POST',
        '/api/admin/user/tokens',
        { cookie },
        { description: `script ${++serial}`, expiresAt: '2099-01-01T00:00:00Z' },
      );
      assert.equal(response.statusCode, 201, response.body);
      return response.json<{ secret: string }>().secret;
    };

    const eventTypes = async () =>
      (await db.query<{ type: string }>('SELECT type FROM events ORDER BY id')).map(
        (row) => row.type,
      );

    const openStream = async (headers: Record<string, string>) => {
      const stream = await openSse(`${base}/api/admin/events/stream`, headers);
      streams.push(stream);
      assert.equal(stream.status, 200);
      await waitFor(() => stream.events.length >= 1, 10_000, 'the connected event');
      return stream;
    };

    describe('logout', () => {
      it('ends the session from the UI’s form post, and closes its open admin stream', async () => {
        const user = await newUser('Admin');
        const stream = await openStream({ cookie: user.cookie });
        const logout = await app.inject({
          method: 'POST',
          url: '/logout',
          headers: {
            cookie: user.cookie,
            origin: ORIGIN,
            'content-type': 'application/x-www-form-urlencoded',
          },
          payload: '',
        });
        assert.equal(logout.statusCode, 302, logout.body);
        assert.equal(logout.headers.location, '/signed-out');
        assert.match(String(logout.headers['set-cookie']), /Max-Age=0/);
        assert.equal(await me({ cookie: user.cookie }), 401);
        await stream.ended;
      });

      it('takes JSON and no body alike', async () => {
        for (const extra of [{ 'content-type': 'application/json' }, {}]) {
          const user = await newUser('Viewer');
          const logout = await app.inject({
            method: 'POST',
            url: '/logout',
            headers: { cookie: user.cookie, origin: ORIGIN, ...extra },
            ...(extra['content-type'] ? { payload: '{}' } : {}),
          });
          assert.equal(logout.statusCode, 302, logout.body);
          assert.equal(await me({ cookie: user.cookie }), 401);
        }
      });

      it('refuses another kind of body, and leaves the session', async () => {
        const user = await newUser('Viewer');
        const logout = await app.inject({
          method: 'POST',
          url: '/logout',
          headers: { cookie: user.cookie, origin: ORIGIN, 'content-type': 'text/xml' },
          payload: '<logout/>',
        });
        assert.equal(logout.statusCode, 415);
        assert.equal(await me({ cookie: user.cookie }), 200);
      });
    });

    describe('offboarding', () => {
      it('deleting a user ends their session and personal access token at once', async () => {
        const user = await newUser('Editor');
        const pat = await newPat(user.cookie);
        const stream = await openStream({ authorization: pat });
        assert.equal(await me({ cookie: user.cookie }), 200);
        assert.equal(await me({ authorization: pat }), 200);
        const deleted = await inject('DELETE', `/api/admin/user-admin/${user.id}`, admin);
        assert.equal(deleted.statusCode, 200, deleted.body);
        assert.equal(await me({ cookie: user.cookie }), 401);
        assert.equal(await me({ authorization: pat }), 401);
        assert.equal(await write({ authorization: pat }), 401);
        await stream.ended;
        const gone = await inject('GET', `/api/admin/user-admin/${user.id}`, admin);
        assert.equal(gone.statusCode, 404);
      });

      it('disabling a user ends their session, refuses their password and token; enabling lets them back', async () => {
        const user = await newUser('Editor');
        const pat = await newPat(user.cookie);
        const stream = await openStream({ authorization: pat });
        const disabled = await inject('PUT', `/api/admin/user-admin/${user.id}`, admin, {
          disabled: true,
        });
        assert.equal(disabled.statusCode, 200, disabled.body);
        assert.equal(disabled.json().disabled, true);
        assert.equal(await me({ cookie: user.cookie }), 401);
        assert.equal(await me({ authorization: pat }), 401);
        assert.equal(await write({ authorization: pat }), 401);
        await stream.ended;
        const login = await inject(
          'POST',
          '/auth/simple/login',
          {},
          { username: user.username, password: user.password },
        );
        assert.equal(login.statusCode, 401, login.body);
        assert.equal(login.headers['set-cookie'], undefined);
        // Still listed, and shown disabled.
        const read = await inject('GET', `/api/admin/user-admin/${user.id}`, admin);
        assert.equal(read.json().disabled, true);
        const [event] = await db.query<{
          pre_data: { disabled: boolean };
          data: { disabled: boolean };
        }>(
          "SELECT pre_data, data FROM events WHERE type = 'user-updated' ORDER BY id DESC LIMIT 1",
        );
        assert.equal(event!.pre_data.disabled, false);
        assert.equal(event!.data.disabled, true);

        const enabled = await inject('PUT', `/api/admin/user-admin/${user.id}`, admin, {
          disabled: false,
        });
        assert.equal(enabled.statusCode, 200, enabled.body);
        assert.equal(enabled.json().disabled, false);
        assert.equal(await me({ authorization: pat }), 200);
        assert.equal(await me({ cookie: user.cookie }), 401);
        const again = cookieOf(await logIn(user.username, user.password));
        assert.equal(await me({ cookie: again }), 200);

        const bad = await inject('PUT', `/api/admin/user-admin/${user.id}`, admin, {
          disabled: 'yes',
        });
        assert.equal(bad.statusCode, 400, bad.body);
      });

      it('never disables the last active Admin', async () => {
        const others = await db.query<{ id: number }>(
          `SELECT ru.user_id AS id FROM role_user ru JOIN roles r ON r.id = ru.role_id
            WHERE r.name = 'Admin' AND r.type = 'root'`,
        );
        const last = await newUser('Admin');
        const spare = await newUser('Admin');
        for (const { id } of [...others, { id: spare.id }]) {
          const response = await inject('PUT', `/api/admin/user-admin/${id}`, admin, {
            disabled: true,
          });
          assert.equal(response.statusCode, 200, response.body);
        }
        const refused = await inject('PUT', `/api/admin/user-admin/${last.id}`, admin, {
          disabled: true,
        });
        assert.equal(refused.statusCode, 409, refused.body);
        assert.equal(refused.json().name, 'ConflictError');
        assert.match(refused.json().message, /last Admin/);
        assert.equal(await write({ cookie: last.cookie }), 201);
        // A disabled Admin is no Admin to keep: deleting one is allowed.
        const removed = await inject('DELETE', `/api/admin/user-admin/${spare.id}`, admin);
        assert.equal(removed.statusCode, 200, removed.body);
        for (const { id } of others) {
          const response = await inject('PUT', `/api/admin/user-admin/${id}`, admin, {
            disabled: false,
          });
          assert.equal(response.statusCode, 200, response.body);
        }
      });

      it('demoting an Admin to Viewer makes their next write 403, and closes their streams', async () => {
        const user = await newUser('Admin');
        const pat = await newPat(user.cookie);
        assert.equal(await write({ cookie: user.cookie }), 201);
        const stream = await openStream({ cookie: user.cookie });
        const demoted = await inject('PUT', `/api/admin/user-admin/${user.id}`, admin, {
          rootRole: 'Viewer',
        });
        assert.equal(demoted.statusCode, 200, demoted.body);
        assert.equal(await write({ cookie: user.cookie }), 403);
        assert.equal(await write({ authorization: pat }), 403);
        await stream.ended;
        // What a Viewer may do still works: the page reopens its stream with the new role.
        const reopened = await openStream({ cookie: user.cookie });
        assert.equal(reopened.isEnded(), false);
      });

      it('never removes or demotes the last Admin', async () => {
        const rows = await db.query<{ id: number }>(
          `SELECT ru.user_id AS id FROM role_user ru JOIN roles r ON r.id = ru.role_id
            WHERE r.name = 'Admin' AND r.type = 'root'`,
        );
        // Leave exactly one Admin.
        const last = await newUser('Admin');
        for (const { id } of rows) {
          const response = await inject('DELETE', `/api/admin/user-admin/${id}`, admin);
          assert.equal(response.statusCode, 200, response.body);
        }
        const demote = await inject('PUT', `/api/admin/user-admin/${last.id}`, admin, {
          rootRole: 'Editor',
        });
        assert.equal(demote.statusCode, 409, demote.body);
        assert.match(demote.json().message, /last Admin/);
        const remove = await inject('DELETE', `/api/admin/user-admin/${last.id}`, admin);
        assert.equal(remove.statusCode, 409, remove.body);
        assert.equal(await write({ cookie: last.cookie }), 201);
        // With a second Admin, the first may go.
        const second = await newUser('Admin');
        const now = await inject('PUT', `/api/admin/user-admin/${last.id}`, admin, {
          rootRole: 'Editor',
        });
        assert.equal(now.statusCode, 200, now.body);
        assert.equal(await write({ cookie: second.cookie }), 201);
      });

      it('updates name and email, and refuses an email another user has', async () => {
        const user = await newUser('Viewer');
        const other = await newUser('Viewer');
        const updated = await inject('PUT', `/api/admin/user-admin/${user.id}`, admin, {
          name: 'Renamed',
          email: 'renamed@example.com',
        });
        assert.equal(updated.statusCode, 200, updated.body);
        assert.equal(updated.json().name, 'Renamed');
        assert.equal(updated.json().email, 'renamed@example.com');
        const clash = await inject('PUT', `/api/admin/user-admin/${user.id}`, admin, {
          email: `${other.username}@example.com`,
        });
        assert.equal(clash.statusCode, 409, clash.body);
        const unchanged = await inject('GET', `/api/admin/user-admin/${user.id}`, admin);
        assert.equal(unchanged.json().email, 'renamed@example.com');
        const unknown = await inject('PUT', '/api/admin/user-admin/999999', admin, { name: 'x' });
        assert.equal(unknown.statusCode, 404);
      });
    });

    describe('passwords', () => {
      it('an Admin sets a user’s password: their sessions end, the new password works', async () => {
        const user = await newUser('Editor');
        const changed = await inject(
          'POST',
          `/api/admin/user-admin/${user.id}/change-password`,
          admin,
          { password: 'a brand new password' },
        );
        assert.equal(changed.statusCode, 200, changed.body);
        assert.equal(await me({ cookie: user.cookie }), 401);
        const old = await inject(
          'POST',
          '/auth/simple/login',
          {},
          { username: user.username, password: user.password },
        );
        assert.equal(old.statusCode, 401);
        await logIn(user.username, 'a brand new password');
      });

      it('a reset link sets the password once, and ends the user’s sessions', async () => {
        const user = await newUser('Viewer');
        const made = await inject('POST', '/api/admin/user-admin/reset-password', admin, {
          id: `${user.username}@example.com`,
        });
        assert.equal(made.statusCode, 200, made.body);
        const url = new URL(made.json<{ resetPasswordUrl: string }>().resetPasswordUrl);
        assert.equal(url.pathname, '/reset-password');
        const token = url.searchParams.get('token')!;
        const valid = await inject('GET', `/auth/reset/validate?token=${token}`, {});
        assert.equal(valid.statusCode, 200, valid.body);
        assert.equal(valid.json().id, user.id);
        assert.equal(valid.json().email, `${user.username}@example.com`);
        assert.equal(valid.json().role.name, 'Viewer');

        const tooShort = await inject('POST', '/auth/reset/password', {}, { token, password: 'x' });
        assert.equal(tooShort.statusCode, 400);
        const set = await inject(
          'POST',
          '/auth/reset/password',
          {},
          { token, password: 'set by a link' },
        );
        assert.equal(set.statusCode, 200, set.body);
        assert.equal(await me({ cookie: user.cookie }), 401);
        await logIn(user.username, 'set by a link');
        const again = await inject(
          'POST',
          '/auth/reset/password',
          {},
          { token, password: 'set twice by a link' },
        );
        assert.equal(again.statusCode, 400);
        assert.equal(
          (await inject('GET', `/auth/reset/validate?token=${token}`, {})).statusCode,
          400,
        );
        const nobody = await inject('POST', '/api/admin/user-admin/reset-password', admin, {
          id: 'nobody@example.com',
        });
        assert.equal(nobody.statusCode, 404);
      });

      it('a user created without a password gets a welcome link', async () => {
        const created = await inject('POST', '/api/admin/user-admin', admin, {
          email: 'welcome@example.com',
          rootRole: 'Editor',
        });
        assert.equal(created.statusCode, 201, created.body);
        const link = new URL(created.json<{ inviteLink: string }>().inviteLink);
        assert.equal(link.pathname, '/new-user');
        const set = await inject(
          'POST',
          '/auth/reset/password',
          {},
          { token: link.searchParams.get('token'), password: 'my first password' },
        );
        assert.equal(set.statusCode, 200, set.body);
        await logIn('welcome@example.com', 'my first password');
      });

      it('a user changes their own password: the current one asked, other sessions end', async () => {
        const user = await newUser('Viewer');
        const elsewhere = cookieOf(await logIn(user.username, user.password));
        const change = (body: object) =>
          inject('POST', '/api/admin/user/change-password', { cookie: user.cookie }, body);
        const wrongOld = await change({
          oldPassword: 'not it at all',
          password: 'my new password',
          confirmPassword: 'my new password',
        });
        assert.equal(wrongOld.statusCode, 401);
        const differ = await change({
          oldPassword: user.password,
          password: 'my new password',
          confirmPassword: 'my other password',
        });
        assert.equal(differ.statusCode, 400);
        const done = await change({
          oldPassword: user.password,
          password: 'my new password',
          confirmPassword: 'my new password',
        });
        assert.equal(done.statusCode, 200, done.body);
        assert.equal(await me({ cookie: user.cookie }), 200, 'the session that changed it');
        assert.equal(await me({ cookie: elsewhere }), 401, 'another session');
        await logIn(user.username, 'my new password');
      });

      it('only Admins administer users', async () => {
        const editor = await newUser('Editor');
        const victim = await newUser('Viewer');
        for (const [method, url, body] of [
          ['GET', '/api/admin/user-admin', undefined],
          ['PUT', `/api/admin/user-admin/${victim.id}`, { rootRole: 'Admin' }],
          ['DELETE', `/api/admin/user-admin/${victim.id}`, undefined],
          [
            'POST',
            `/api/admin/user-admin/${victim.id}/change-password`,
            { password: 'x'.repeat(9) },
          ],
          ['POST', '/api/admin/user-admin/reset-password', { id: victim.username }],
          ['GET', '/api/admin/logins', undefined],
        ] as const) {
          const response = await inject(method, url, { cookie: editor.cookie }, body);
          assert.equal(response.statusCode, 403, `${method} ${url}: ${response.body}`);
        }
        assert.equal(await me({ cookie: victim.cookie }), 200);
      });
    });

    describe('personal access tokens', () => {
      it('a personal access token cannot list, create or delete personal access tokens', async () => {
        const user = await newUser('Admin');
        const pat = await newPat(user.cookie);
        for (const [method, url, body] of [
          ['GET', '/api/admin/user/tokens', undefined],
          [
            'POST',
            '/api/admin/user/tokens',
            { description: 'forever', expiresAt: '9999-12-31T00:00:00Z' },
          ],
          ['DELETE', '/api/admin/user/tokens/1', undefined],
        ] as const) {
          const response = await inject(method, url, { authorization: pat }, body);
          assert.equal(response.statusCode, 403, `${method} ${url}: ${response.body}`);
          assert.match(response.json().message, /signed-in session/);
        }
        const listed = await inject('GET', '/api/admin/user/tokens', { cookie: user.cookie });
        assert.equal(listed.json().pats.length, 1);
      });

      it('an Admin-set maximum lifetime applies to every new token', async () => {
        const user = await newUser('Editor');
        const set = await inject('PUT', '/api/admin/settings/personal-access-tokens', admin, {
          maxLifetimeDays: 30,
        });
        assert.equal(set.statusCode, 200, set.body);
        const editorSets = await inject(
          'PUT',
          '/api/admin/settings/personal-access-tokens',
          { cookie: user.cookie },
          { maxLifetimeDays: null },
        );
        assert.equal(editorSets.statusCode, 403);
        const inDays = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString();
        const tooLong = await inject(
          'POST',
          '/api/admin/user/tokens',
          { cookie: user.cookie },
          { description: 'too long', expiresAt: inDays(31) },
        );
        assert.equal(tooLong.statusCode, 400, tooLong.body);
        assert.match(tooLong.json().message, /30 days at most/);
        const fine = await inject(
          'POST',
          '/api/admin/user/tokens',
          { cookie: user.cookie },
          { description: 'fine', expiresAt: inDays(29) },
        );
        assert.equal(fine.statusCode, 201, fine.body);
        const read = await inject('GET', '/api/admin/settings/personal-access-tokens', admin);
        assert.deepEqual(read.json(), { maxLifetimeDays: 30 });
        await inject('PUT', '/api/admin/settings/personal-access-tokens', admin, {
          maxLifetimeDays: null,
        });
      });
    });

    it('lists every login, right or wrong, with its address and user agent, for Admins', async () => {
      const user = await newUser('Viewer');
      const wrong = await app.inject({
        method: 'POST',
        url: '/auth/simple/login',
        headers: { origin: ORIGIN, 'user-agent': 'history-test/1.0' },
        remoteAddress: '10.1.2.3',
        payload: { username: user.username.toUpperCase(), password: 'not the password' },
      });
      assert.equal(wrong.statusCode, 401);
      const nobody = await inject(
        'POST',
        '/auth/simple/login',
        {},
        { username: 'nobody-at-all', password: 'whatever it is' },
      );
      assert.equal(nobody.statusCode, 401);
      const history = await inject('GET', '/api/admin/logins?limit=4', admin);
      assert.equal(history.statusCode, 200, history.body);
      const events = history.json<{ events: Record<string, unknown>[] }>().events;
      const pick = ({
        username,
        successful,
        failure_reason,
        auth_type,
      }: Record<string, unknown>) => ({
        username,
        successful,
        failure_reason,
        auth_type,
      });
      assert.deepEqual(events.slice(0, 3).map(pick), [
        {
          username: 'nobody-at-all',
          successful: false,
          failure_reason: 'unknown user',
          auth_type: 'password',
        },
        {
          username: user.username.toUpperCase(),
          successful: false,
          failure_reason: 'wrong password',
          auth_type: 'password',
        },
        { username: user.username, successful: true, failure_reason: null, auth_type: 'password' },
      ]);
      assert.equal(events[1]?.ip, '10.1.2.3');
      assert.equal(events[1]?.user_agent, 'history-test/1.0');
      const viewer = await inject('GET', '/api/admin/logins', { cookie: user.cookie });
      assert.equal(viewer.statusCode, 403);
    });

    it('records every admin change above with Unleash’s event types', async () => {
      const token = await inject('POST', '/api/admin/api-tokens', admin, {
        tokenName: 'recorded',
        type: 'client',
        environment: 'development',
      });
      assert.equal(token.statusCode, 201, token.body);
      const secret = token.json<{ secret: string }>().secret;
      const removed = await inject('DELETE', `/api/admin/api-tokens/${secret}`, admin);
      assert.equal(removed.statusCode, 200);
      const link = await inject('POST', '/api/admin/invite-link/tokens', admin, {
        name: 'recorded link',
        expiresAt: '2099-01-01T00:00:00Z',
      });
      assert.equal(link.statusCode, 201, link.body);
      const invite = link.json<{ secret: string }>().secret;
      const signup = await inject(
        'POST',
        `/invite/${invite}/signup`,
        {},
        {
          name: 'Invited',
          email: 'invited@example.com',
          password: 'invited password',
        },
      );
      assert.equal(signup.statusCode, 202, signup.body);
      const disabled = await inject('PUT', `/api/admin/invite-link/tokens/${invite}`, admin, {
        enabled: false,
      });
      assert.equal(disabled.statusCode, 200, disabled.body);
      const types = new Set(await eventTypes());
      for (const type of [
        'api-token-created',
        'api-token-deleted',
        'user-created',
        'user-updated',
        'user-deleted',
        'pat-created',
        'setting-updated',
        'user-password-changed',
        'user-password-link-created',
        'public-signup-token-created',
        'public-signup-token-user-added',
        'public-signup-token-updated',
      ]) {
        assert.ok(types.has(type), `${type} in ${[...types].join(', ')}`);
      }
      const [created] = await db.query<{ data: { secret: string } }>(
        "SELECT data FROM events WHERE type = 'api-token-created' ORDER BY id DESC LIMIT 1",
      );
      assert.notEqual(created?.data.secret, secret, 'the event never holds the secret');
      const linkEvents = await db.query<{ data: unknown }>(
        "SELECT data FROM events WHERE type LIKE 'public-signup-token-%'",
      );
      assert.ok(
        linkEvents.every((row) => !JSON.stringify(row.data).includes(invite)),
        'no event holds the link’s secret',
      );
    });
  });
}
