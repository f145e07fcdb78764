import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { Database } from '../../src/db/database.js';
import { adminContract } from '../admin-contract.js';
import { backends, createProject, startApp } from '../helpers.js';

/**
 * The admin API of environments, projects, feature types, strategy definitions, an API token's
 * expiry and personal access tokens: answers, bad input refused with nothing changed, 409 for
 * what is still used, the events, and who may.
 */
for (const backend of backends) {
  describe(`environments, projects, feature types, strategies and tokens on ${backend.name}`, () => {
    let db: Database;
    let app: FastifyInstance;
    let cleanup: () => Promise<void>;
    const { call, events, refused } = adminContract(
      () => app,
      () => db,
    );
    const F = '/api/admin/projects/shop/features';

    before(async () => {
      ({ db, cleanup } = await backend.open());
      app = await startApp(db);
      await createProject(app, 'shop');
      assert.equal((await call('POST', F, { name: 'cart' })).statusCode, 201);
    });
    after(async () => {
      await app.close();
      await cleanup();
    });

    it('reads, updates, disables and deletes an environment; refuses one still used, naming it', async () => {
      const created = await call('POST', '/api/admin/environments', { name: 'qa', type: 'test' });
      assert.equal(created.statusCode, 201, created.body);
      assert.deepEqual((await call('GET', '/api/admin/environments/qa')).json(), {
        name: 'qa',
        type: 'test',
        sortOrder: 0,
        enabled: true,
        protected: false,
      });
      await refused(404, () => call('GET', '/api/admin/environments/nope'));
      const updated = await call('PUT', '/api/admin/environments/update/qa', {
        type: 'staging',
        sortOrder: 5,
      });
      assert.equal(updated.statusCode, 200, updated.body);
      assert.equal(updated.json().type, 'staging');
      await refused(400, () =>
        call('PUT', '/api/admin/environments/update/qa', { sortOrder: 'x' }),
      );
      await refused(404, () => call('PUT', '/api/admin/environments/update/nope', {}));
      assert.equal((await call('POST', '/api/admin/environments/qa/off')).statusCode, 204);
      assert.equal((await call('GET', '/api/admin/environments/qa')).json().enabled, false);
      assert.equal((await call('POST', '/api/admin/environments/qa/on')).statusCode, 204);
      await refused(404, () => call('POST', '/api/admin/environments/nope/on'));

      // In use: a flag enabled there, and a token scoped to it.
      assert.equal((await call('POST', `${F}/cart/environments/qa/on`)).statusCode, 200);
      const token = await call('POST', '/api/admin/api-tokens', {
        tokenName: 'qa-sdk',
        type: 'client',
        environment: 'qa',
      });
      assert.equal(token.statusCode, 201, token.body);
      const inUse = await refused(409, () => call('DELETE', '/api/admin/environments/qa'));
      assert.equal(inUse.name, 'ConflictError');
      assert.deepEqual(
        inUse.details.map((d) => d.message),
        ['flag "cart" (project "shop")', `API token "qa-sdk" (id ${token.json().id})`],
      );
      await call('DELETE', `/api/admin/api-tokens/${token.json().id}`);
      await call('POST', `${F}/cart/environments/qa/off`);
      await call(
        'DELETE',
        `${F}/cart/environments/qa/strategies/${(await call('GET', `${F}/cart/environments/qa/strategies`)).json()[0].id}`,
      );
      const deleted = await call('DELETE', '/api/admin/environments/qa');
      assert.equal(deleted.statusCode, 200, deleted.body);
      await refused(404, () => call('DELETE', '/api/admin/environments/qa'));

      assert.equal((await events('environment-created'))[0]!.environment, 'qa');
      assert.equal((await events('environment-updated')).length, 3);
      assert.equal((await events('environment-deleted'))[0]!.preData?.name, 'qa');
    });

    it('reads, updates and deletes a project, links and unlinks its environments', async () => {
      assert.deepEqual((await call('GET', '/api/admin/projects/shop')).json(), {
        id: 'shop',
        name: 'shop',
        description: null,
        environments: ['development', 'production'],
      });
      await refused(404, () => call('GET', '/api/admin/projects/nope'));
      const updated = await call('PUT', '/api/admin/projects/shop', { name: 'Shop' });
      assert.equal(updated.statusCode, 200, updated.body);
      assert.deepEqual(updated.json(), { id: 'shop', name: 'Shop', description: null });
      await refused(400, () => call('PUT', '/api/admin/projects/shop', { name: '' }));

      await refused(409, () =>
        call('POST', '/api/admin/projects/shop/environments', { environment: 'development' }),
      );
      await refused(400, () =>
        call('POST', '/api/admin/projects/shop/environments', { environment: 'nope' }),
      );
      assert.equal((await call('POST', `${F}/cart/environments/production/on`)).statusCode, 200);
      const used = await refused(409, () =>
        call('DELETE', '/api/admin/projects/shop/environments/production'),
      );
      assert.match(used.message, /flag "cart"/);
      const unlinked = await call('DELETE', '/api/admin/projects/shop/environments/development');
      assert.equal(unlinked.statusCode, 200, unlinked.body);
      assert.deepEqual((await call('GET', '/api/admin/projects/shop')).json().environments, [
        'production',
      ]);
      await refused(404, () => call('GET', `${F}/cart/environments/development`));
      const linked = await call('POST', '/api/admin/projects/shop/environments', {
        environment: 'development',
      });
      assert.equal(linked.statusCode, 200, linked.body);
      assert.equal((await call('GET', `${F}/cart/environments/development`)).json().enabled, false);

      const inUse = await refused(409, () => call('DELETE', '/api/admin/projects/shop'));
      assert.deepEqual(inUse.details, [{ message: 'flag "cart"' }]);
      await refused(400, () => call('DELETE', '/api/admin/projects/default'));
      await createProject(app, 'empty');
      assert.equal((await call('DELETE', '/api/admin/projects/empty')).statusCode, 200);
      await refused(404, () => call('DELETE', '/api/admin/projects/empty'));

      assert.deepEqual(
        (await events('project-environment-removed')).map((e) => [e.project, e.environment]),
        [['shop', 'development']],
      );
      assert.equal((await events('project-environment-added')).length, 1);
      assert.equal((await events('project-updated'))[0]!.preData?.name, 'shop');
      assert.equal((await events('project-deleted'))[0]!.project, 'empty');
    });

    it('lists feature types and changes a lifetime', async () => {
      const types = (await call('GET', '/api/admin/feature-types')).json();
      assert.equal(types.version, 1);
      assert.deepEqual(
        types.types.map((t: { id: string; lifetimeDays: number | null }) => [t.id, t.lifetimeDays]),
        [
          ['release', 40],
          ['experiment', 40],
          ['operational', 7],
          ['kill-switch', null],
          ['permission', null],
          ['sunset', 90],
        ],
      );
      const set = await call('PUT', '/api/admin/feature-types/release/lifetime', {
        lifetimeDays: 10,
      });
      assert.equal(set.statusCode, 200, set.body);
      assert.equal(set.json().lifetimeDays, 10);
      const permanent = await call('PUT', '/api/admin/feature-types/release/lifetime', {
        lifetimeDays: 0,
      });
      assert.equal(permanent.json().lifetimeDays, null);
      await refused(400, () =>
        call('PUT', '/api/admin/feature-types/release/lifetime', { lifetimeDays: -1 }),
      );
      await refused(404, () =>
        call('PUT', '/api/admin/feature-types/nope/lifetime', { lifetimeDays: 1 }),
      );
      const [event] = await events('feature-type-updated');
      assert.equal(event!.preData?.lifetimeDays, 10);
      assert.equal(event!.data?.lifetimeDays, null);
    });

    it('reads, updates, deprecates and deletes strategy definitions; refuses used and built-in ones', async () => {
      assert.equal(
        (await call('POST', '/api/admin/strategies', { name: 'region', parameters: [] }))
          .statusCode,
        201,
      );
      const updated = await call('PUT', '/api/admin/strategies/region', {
        name: 'region',
        description: 'By region',
        parameters: [{ name: 'regions', type: 'list' }],
      });
      assert.equal(updated.statusCode, 200, updated.body);
      assert.deepEqual((await call('GET', '/api/admin/strategies/region')).json(), {
        name: 'region',
        displayName: null,
        title: null,
        description: 'By region',
        parameters: [{ name: 'regions', type: 'list' }],
        editable: true,
        deprecated: false,
      });
      await refused(404, () => call('GET', '/api/admin/strategies/nope'));
      await refused(404, () => call('PUT', '/api/admin/strategies/nope', {}));
      await refused(400, () => call('PUT', '/api/admin/strategies/default', {}));
      await refused(400, () => call('DELETE', '/api/admin/strategies/default'));

      assert.equal((await call('POST', '/api/admin/strategies/region/deprecate')).statusCode, 200);
      assert.equal((await call('GET', '/api/admin/strategies/region')).json().deprecated, true);
      assert.equal((await call('POST', '/api/admin/strategies/region/reactivate')).statusCode, 200);
      await refused(404, () => call('POST', '/api/admin/strategies/nope/deprecate'));

      const strategy = await call('POST', `${F}/cart/environments/production/strategies`, {
        name: 'region',
        parameters: { regions: 'eu' },
      });
      assert.equal(strategy.statusCode, 200, strategy.body);
      const inUse = await refused(409, () => call('DELETE', '/api/admin/strategies/region'));
      assert.deepEqual(inUse.details, [{ message: 'flag "cart" in production' }]);
      await call('DELETE', `${F}/cart/environments/production/strategies/${strategy.json().id}`);
      assert.equal((await call('DELETE', '/api/admin/strategies/region')).statusCode, 200);

      for (const type of ['created', 'updated', 'deprecated', 'reactivated', 'deleted']) {
        assert.equal((await events(`strategy-${type}`)).length, 1, type);
      }
    });

    it("sets an API token's expiry; an expired token is refused at once", async () => {
      const created = await call('POST', '/api/admin/api-tokens', {
        tokenName: 'sdk',
        type: 'client',
        environment: 'development',
      });
      const { secret, id } = created.json();
      const sdk = () =>
        app.inject({ url: '/api/client/features', headers: { authorization: secret } });
      assert.equal((await sdk()).statusCode, 200);
      const future = await call('PUT', `/api/admin/api-tokens/${id}`, {
        expiresAt: '2999-01-01T00:00:00.000Z',
      });
      assert.equal(future.statusCode, 200, future.body);
      const listed = (await call('GET', '/api/admin/api-tokens')).json().tokens;
      assert.equal(
        listed.find((t: { id: number }) => t.id === id).expiresAt,
        '2999-01-01T00:00:00.000Z',
      );
      await refused(400, () => call('PUT', `/api/admin/api-tokens/${id}`, { expiresAt: 'junk' }));
      await refused(400, () => call('PUT', `/api/admin/api-tokens/${id}`, {}));
      await refused(404, () =>
        call('PUT', '/api/admin/api-tokens/nope', { expiresAt: '2999-01-01T00:00:00.000Z' }),
      );
      const past = await call('PUT', `/api/admin/api-tokens/${secret}`, {
        expiresAt: '2001-01-01T00:00:00.000Z',
      });
      assert.equal(past.statusCode, 200);
      assert.equal((await sdk()).statusCode, 401);
      const [event] = await events('api-token-updated');
      assert.equal(event!.preData?.expiresAt, '2999-01-01T00:00:00.000Z');
      assert.ok(!JSON.stringify(event).includes(secret), 'no secret in the event log');
    });

    it('gives users personal access tokens that act with their role; admin tokens get none', async () => {
      const user = await call('POST', '/api/admin/user-admin', {
        username: 'ed',
        email: 'ed@example.com',
        password: 'ed password 123',
        rootRole: 'Editor',
      });
      assert.equal(user.statusCode, 201, user.body);
      const login = await app.inject({
        method: 'POST',
        url: '/auth/simple/login',
        payload: { username: 'ed', password: 'ed password 123' },
      });
      assert.equal(login.statusCode, 200, login.body);
      const cookie = String(login.headers['set-cookie']).split(';')[0]!;
      const asEd = (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: object) =>
        app.inject({ method, url, headers: { cookie }, ...(payload ? { payload } : {}) });

      const forbidden = await refused(403, () => call('GET', '/api/admin/user/tokens'));
      assert.equal(forbidden.name, 'ForbiddenError');
      await refused(400, () =>
        asEd('POST', '/api/admin/user/tokens', {
          description: 'old',
          expiresAt: '2001-01-01T00:00:00.000Z',
        }),
      );
      const created = await asEd('POST', '/api/admin/user/tokens', {
        description: 'scripts',
        expiresAt: '2999-01-01T00:00:00.000Z',
      });
      assert.equal(created.statusCode, 201, created.body);
      const pat = created.json();
      assert.match(pat.secret, /^user:[0-9a-f]{56}$/);
      assert.equal(pat.userId, user.json().id);
      await refused(409, () =>
        asEd('POST', '/api/admin/user/tokens', {
          description: 'scripts',
          expiresAt: '2999-01-01T00:00:00.000Z',
        }),
      );
      const stored = await db.query<{ secret_hash: string }>(
        'SELECT secret_hash FROM personal_access_tokens',
      );
      assert.equal(stored.length, 1);
      assert.notEqual(stored[0]!.secret_hash, pat.secret);
      const listed = (await asEd('GET', '/api/admin/user/tokens')).json();
      assert.deepEqual(Object.keys(listed.pats[0]).sort(), [
        'createdAt',
        'description',
        'expiresAt',
        'id',
        'seenAt',
        'userId',
      ]);

      // The token acts as ed, an Editor: tags a flag, may not delete an environment.
      const byPat = { authorization: pat.secret };
      await call('POST', '/api/admin/tag-types', { name: 'team' });
      const tagged = await app.inject({
        method: 'POST',
        url: '/api/admin/features/cart/tags',
        headers: byPat,
        payload: { type: 'team', value: 'payments' },
      });
      assert.equal(tagged.statusCode, 201, tagged.body);
      assert.equal((await events('feature-tagged'))[0]!.createdBy, 'ed');
      const denied = await app.inject({
        method: 'DELETE',
        url: '/api/admin/environments/production',
        headers: byPat,
      });
      assert.equal(denied.statusCode, 403);
      const seen = (await asEd('GET', '/api/admin/user/tokens')).json().pats[0].seenAt;
      assert.equal(typeof seen, 'string');

      await refused(404, () => asEd('DELETE', '/api/admin/user/tokens/999'));
      assert.equal((await asEd('DELETE', `/api/admin/user/tokens/${pat.id}`)).statusCode, 200);
      const gone = await app.inject({ url: '/api/admin/features/cart/tags', headers: byPat });
      assert.equal(gone.statusCode, 401);
      assert.equal((await events('pat-created')).length, 1);
      assert.equal((await events('pat-deleted'))[0]!.preData?.description, 'scripts');
      assert.ok(!JSON.stringify(await events('pat-created')).includes(pat.secret));
    });
  });
}
