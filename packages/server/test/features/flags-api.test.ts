import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { waitFor } from '../../../../test/helpers/wait.js';
import type { Database } from '../../src/db/database.js';
import { admin, backends, createProject, DEV_TOKEN, dump, startApp } from '../helpers.js';
import { openSse } from '../sse-client.js';

const P = '/api/admin/projects/shop/features';
const S = (feature: string, environment = 'development') =>
  `${P}/${feature}/environments/${environment}/strategies`;

interface StoredEvent {
  id: number;
  type: string;
  createdBy: string;
  project: string | null;
  environment: string | null;
  featureName: string | null;
  data: Record<string, unknown> | null;
  preData: Record<string, unknown> | null;
}

for (const backend of backends) {
  describe(`single-flag admin API on ${backend.name}`, () => {
    let db: Database;
    let app: FastifyInstance;
    let cleanup: () => Promise<void>;
    const call = (options: InjectOptions) =>
      app.inject({ ...options, headers: { ...admin, ...(options.headers ?? {}) } });
    const json = (method: InjectOptions['method'], url: string, payload?: unknown) =>
      call({ method, url, ...(payload === undefined ? {} : { payload: payload as object }) });
    const events = async (query = '') =>
      (
        await call({
          url: `/api/admin/search/events?${query.includes('limit=') ? '' : 'limit=1000'}${query}`,
        })
      ).json() as {
        events: StoredEvent[];
        total: number;
      };
    /** Runs `request` and checks it is a 4xx in the error shape that changed nothing. */
    const refused = async (
      status: number,
      request: () => Promise<{ statusCode: number; body: string }>,
    ) => {
      const before = await dump(db);
      const response = await request();
      assert.equal(response.statusCode, status, response.body);
      const body = JSON.parse(response.body);
      assert.equal(typeof body.name, 'string');
      assert.equal(typeof body.message, 'string');
      assert.ok(Array.isArray(body.details));
      assert.deepEqual(await dump(db), before, 'nothing changed');
      return body as { name: string; message: string };
    };

    before(async () => {
      const opened = await backend.open();
      db = opened.db;
      cleanup = opened.cleanup;
      app = await startApp(db);
      await createProject(app, 'shop');
    });
    after(async () => {
      await app.close();
      await cleanup();
    });

    it('creates, reads (with an ETag), lists and searches a flag', async () => {
      const created = await json('POST', P, {
        name: 'cart',
        description: 'The cart',
        type: 'release',
      });
      assert.equal(created.statusCode, 201, created.body);
      assert.equal(created.json().name, 'cart');
      assert.equal(created.json().project, 'shop');
      const read = await call({ url: `${P}/cart` });
      assert.equal(read.statusCode, 200);
      assert.match(String(read.headers.etag), /^"\d+"$/);
      const flag = read.json();
      assert.equal(flag.description, 'The cart');
      assert.equal(flag.archived, false);
      assert.deepEqual(
        flag.environments.map((e: { name: string; enabled: boolean }) => [e.name, e.enabled]),
        [
          ['development', false],
          ['production', false],
        ],
      );
      const list = (await call({ url: P })).json();
      assert.equal(list.version, 2);
      assert.deepEqual(
        list.features.map((f: { name: string }) => f.name),
        ['cart'],
      );
      assert.deepEqual((await call({ url: `${P}?namePrefix=x` })).json().features, []);
      const search = (
        await call({ url: '/api/admin/search/features?query=car&project=IS:shop' })
      ).json();
      assert.equal(search.total, 1);
      assert.equal(search.features[0].name, 'cart');
      const [event] = (await events('&type=IS:feature-created&feature=IS:cart')).events;
      // Who wrote it: the admin token's actor (as the admin guard names it).
      assert.ok(event?.createdBy);
      assert.equal(event?.project, 'shop');
      assert.equal(event?.data?.description, 'The cart');
    });

    it('refuses a name in use (archived flags too), a bad name, an unknown type or project', async () => {
      await refused(409, () => json('POST', P, { name: 'cart' }));
      await refused(409, () => json('POST', '/api/admin/features/validate', { name: 'cart' }));
      assert.equal(
        (await json('POST', '/api/admin/features/validate', { name: 'free' })).statusCode,
        200,
      );
      await refused(400, () => json('POST', P, { name: 'has space' }));
      await refused(400, () => json('POST', P, { name: 'x', type: 'nonsense' }));
      await refused(404, () => json('POST', '/api/admin/projects/nope/features', { name: 'x' }));
      await refused(400, () => json('POST', P, { description: 'no name' }));
      await refused(404, () => call({ url: `${P}/missing` }));
    });

    it('updates metadata with PUT (unknown fields ignored, rename refused) and JSON Patch', async () => {
      const before = (await call({ url: `${P}/cart` })).json();
      const put = await json('PUT', `${P}/cart`, { ...before, description: 'New', stale: true });
      assert.equal(put.statusCode, 200, put.body);
      assert.equal(put.json().description, 'New');
      assert.equal(put.json().stale, true);
      await refused(400, () => json('PUT', `${P}/cart`, { name: 'renamed' }));
      const patched = await json('PATCH', `${P}/cart`, [
        { op: 'replace', path: '/stale', value: false },
        { op: 'replace', path: '/type', value: 'experiment' },
      ]);
      assert.equal(patched.statusCode, 200, patched.body);
      assert.equal(patched.json().type, 'experiment');
      assert.equal(patched.json().stale, false);
      await refused(400, () =>
        json('PATCH', `${P}/cart`, [{ op: 'replace', path: '/stale', value: 'yes' }]),
      );
      await refused(400, () =>
        json('PATCH', `${P}/cart`, [{ op: 'replace', path: '/name', value: 'x' }]),
      );
      await refused(400, () =>
        json('PATCH', `${P}/cart`, [{ op: 'remove', path: '/nothing/here' }]),
      );
      await refused(400, () => json('PATCH', `${P}/cart`, { op: 'replace' }));
      const [event] = (await events('&type=IS:feature-metadata-updated&limit=1')).events;
      assert.equal(event?.preData?.type, 'release');
      assert.equal(event?.data?.type, 'experiment');
    });

    it('answers 412 to a write whose If-Match names an old version; without it, last write wins', async () => {
      const etag = String((await call({ url: `${P}/cart` })).headers.etag);
      const ok = await call({
        method: 'PUT',
        url: `${P}/cart`,
        headers: { 'if-match': etag },
        payload: { description: 'v1' },
      });
      assert.equal(ok.statusCode, 200, ok.body);
      assert.notEqual(ok.headers.etag, etag);
      const stale = await refused(412, () =>
        call({
          method: 'PUT',
          url: `${P}/cart`,
          headers: { 'if-match': etag },
          payload: { description: 'v2' },
        }),
      );
      assert.equal(stale.name, 'PreconditionFailedError');
      await refused(412, () =>
        call({
          method: 'POST',
          url: `${P}/cart/environments/development/on`,
          headers: { 'if-match': etag },
        }),
      );
      // A refused write changed nothing, its version included.
      assert.equal((await call({ url: `${P}/cart` })).headers.etag, ok.headers.etag);
      const toggled = await call({
        method: 'POST',
        url: `${P}/cart/environments/development/on`,
        headers: { 'if-match': String(ok.headers.etag) },
      });
      assert.equal(toggled.statusCode, 200, toggled.body);
      assert.notEqual((await call({ url: `${P}/cart` })).headers.etag, ok.headers.etag);
      const blind = await json('PUT', `${P}/cart`, { description: 'v3' });
      assert.equal(blind.statusCode, 200);
    });

    it("answers a toggle of a missing flag with the flag's 404, whatever the environment", async () => {
      for (const environment of ['development', 'nowhere']) {
        const missing = await refused(404, () =>
          call({ method: 'POST', url: `${P}/absent/environments/${environment}/on` }),
        );
        assert.match(missing.message, /no active feature "absent"/);
      }
      const noEnvironment = await refused(404, () =>
        call({ method: 'POST', url: `${P}/cart/environments/nowhere/on` }),
      );
      assert.match(noEnvironment.message, /Environment "nowhere"/);
    });

    it('turns a flag on with a 100 % rollout when it has no strategy, and off; bodiless POSTs accepted', async () => {
      const on = await call({
        method: 'POST',
        url: `${P}/cart/environments/development/on`,
        headers: { 'content-type': 'application/json' },
        payload: '',
      });
      assert.equal(on.statusCode, 200, on.body);
      const environment = (await call({ url: `${P}/cart/environments/development` })).json();
      assert.equal(environment.enabled, true);
      assert.equal(environment.strategies.length, 1);
      assert.equal(environment.strategies[0].name, 'flexibleRollout');
      assert.deepEqual(environment.strategies[0].parameters, {
        rollout: '100',
        stickiness: 'default',
        groupId: 'cart',
      });
      const client = (
        await app.inject({ url: '/api/client/features', headers: { authorization: DEV_TOKEN } })
      ).json();
      const served = client.features.find((f: { name: string }) => f.name === 'cart');
      assert.equal(served.enabled, true);
      assert.equal(served.strategies[0].name, 'flexibleRollout');
      const off = await json('POST', `${P}/cart/environments/development/off`, {});
      assert.equal(off.statusCode, 200, off.body);
      const again = await json('POST', `${P}/cart/environments/development/off`, {});
      assert.equal(again.statusCode, 200);
      const toggles = (
        await events(
          '&feature=IS:cart&type=IS_ANY_OF:feature-environment-enabled,feature-environment-disabled',
        )
      ).events;
      assert.deepEqual(
        toggles.map((e) => [e.type, e.environment]),
        [
          ['feature-environment-disabled', 'development'],
          ['feature-environment-enabled', 'development'],
        ],
      );
      await refused(404, () => json('POST', `${P}/cart/environments/staging/on`, {}));
      await refused(400, () =>
        call({
          method: 'POST',
          url: `${P}/cart/environments/development/on`,
          headers: { 'content-type': 'application/json' },
          payload: '{',
        }),
      );
    });

    it('adds, reads, replaces, patches, reorders and removes strategies', async () => {
      const list = (await call({ url: S('cart') })).json();
      assert.equal(list.length, 1);
      const added = await json('POST', S('cart'), {
        name: 'userWithId',
        parameters: { userIds: 'a,b' },
        constraints: [{ contextName: 'appName', operator: 'IN', values: ['web'] }],
        variants: [
          { name: 'blue', weight: 0, weightType: 'variable', stickiness: 'default' },
          { name: 'red', weight: 0, weightType: 'variable', stickiness: 'default' },
          { name: 'green', weight: 0, weightType: 'variable', stickiness: 'default' },
        ],
      });
      assert.equal(added.statusCode, 200, added.body);
      const strategy = added.json();
      assert.equal(strategy.sortOrder, 1);
      assert.deepEqual(
        strategy.variants.map((v: { name: string; weight: number }) => [v.name, v.weight]),
        [
          ['blue', 334],
          ['green', 333],
          ['red', 333],
        ],
      );
      assert.equal((await call({ url: `${S('cart')}/${strategy.id}` })).json().name, 'userWithId');
      const replaced = await json('PUT', `${S('cart')}/${strategy.id}`, {
        name: 'default',
        title: 'All',
      });
      assert.equal(replaced.statusCode, 200, replaced.body);
      assert.equal(replaced.json().name, 'default');
      const patched = await json('PATCH', `${S('cart')}/${strategy.id}`, [
        { op: 'replace', path: '/disabled', value: true },
      ]);
      assert.equal(patched.statusCode, 200, patched.body);
      assert.equal(patched.json().disabled, true);
      await refused(400, () =>
        json('PATCH', `${S('cart')}/${strategy.id}`, [{ op: 'replace', path: '/name', value: 5 }]),
      );
      await refused(400, () => json('POST', S('cart'), { name: 'noSuchStrategy' }));
      // An unknown segment is a 404, as unleash-server answers it.
      await refused(404, () => json('POST', S('cart'), { name: 'default', segments: [999] }));
      await refused(400, () =>
        json('POST', S('cart'), {
          name: 'default',
          constraints: [{ contextName: 'x', operator: 'NOPE' }],
        }),
      );
      await refused(404, () => call({ url: `${S('cart')}/no-such-id` }));
      const ids = (await call({ url: S('cart') })).json().map((s: { id: string }) => s.id);
      const sorted = await json('POST', `${S('cart')}/set-sort-order`, [
        { id: ids[0], sortOrder: 5 },
        { id: ids[1], sortOrder: 0 },
      ]);
      assert.equal(sorted.statusCode, 200, sorted.body);
      assert.deepEqual(
        (await call({ url: S('cart') })).json().map((s: { id: string }) => s.id),
        [ids[1], ids[0]],
      );
      await refused(400, () =>
        json('POST', `${S('cart')}/set-sort-order`, [{ id: 'nope', sortOrder: 1 }]),
      );
      const removed = await call({ method: 'DELETE', url: `${S('cart')}/${strategy.id}` });
      assert.equal(removed.statusCode, 200);
      assert.equal((await call({ url: S('cart') })).json().length, 1);
      const types = (await events('&feature=IS:cart&limit=20')).events.map((e) => e.type);
      for (const type of [
        'feature-strategy-add',
        'feature-strategy-update',
        'strategy-order-changed',
        'feature-strategy-remove',
      ]) {
        assert.ok(types.includes(type), `${type} recorded`);
      }
      const [removal] = (await events('&type=IS:feature-strategy-remove')).events;
      assert.equal((removal?.preData as { id?: string } | null)?.id, strategy.id);
    });

    it('sets environment variants on the 1000 scale, by PUT and by JSON Patch', async () => {
      const url = `${P}/cart/environments/production/variants`;
      const put = await json('PUT', url, [
        { name: 'a', weight: 200, weightType: 'fix', stickiness: 'default' },
        { name: 'b', weight: 0, weightType: 'variable', stickiness: 'default' },
        { name: 'c', weight: 0, weightType: 'variable', stickiness: 'default' },
      ]);
      assert.equal(put.statusCode, 200, put.body);
      assert.deepEqual(
        put.json().variants.map((v: { name: string; weight: number }) => [v.name, v.weight]),
        [
          ['a', 200],
          ['b', 400],
          ['c', 400],
        ],
      );
      const patch = await json('PATCH', url, [{ op: 'remove', path: '/2' }]);
      assert.equal(patch.statusCode, 200, patch.body);
      assert.deepEqual(
        patch.json().variants.map((v: { weight: number }) => v.weight),
        [200, 800],
      );
      assert.equal((await call({ url })).json().variants.length, 2);
      await refused(400, () =>
        json('PUT', url, [{ name: 'only', weight: 1000, weightType: 'fix' }]),
      );
      await refused(400, () => json('PUT', url, [{ name: 'x', weight: 1001 }]));
      // No weight type: refused (unleash-server drops such a variant without a word).
      await refused(400, () =>
        json('PUT', url, [
          { name: 'x', weight: 100 },
          { name: 'y', weight: 0, weightType: 'variable' },
        ]),
      );
      await refused(400, () =>
        json('PATCH', url, [{ op: 'add', path: '/-', value: { name: 'bad' } }]),
      );
      const [event] = (await events('&type=IS:feature-environment-variants-updated&limit=1'))
        .events;
      assert.equal(event?.environment, 'production');
      assert.equal((event?.preData?.variants as unknown[]).length, 3);
      assert.equal((event?.data?.variants as unknown[]).length, 2);
    });

    it('links a parent; a parent not allowed, or archiving a parent in use, is a 403 naming its children', async () => {
      assert.equal((await json('POST', P, { name: 'checkout' })).statusCode, 201);
      const link = await json('POST', `${P}/checkout/dependencies`, {
        feature: 'cart',
        enabled: true,
      });
      assert.equal(link.statusCode, 200, link.body);
      assert.deepEqual((await call({ url: `${P}/cart` })).json().children, ['checkout']);
      assert.deepEqual((await call({ url: `${P}/checkout` })).json().dependencies, [
        { feature: 'cart', enabled: true, variants: [] },
      ]);
      // unleash-server's 403 InvalidOperationError for each.
      await refused(403, () => json('POST', `${P}/cart/dependencies`, { feature: 'checkout' }));
      await refused(403, () => json('POST', `${P}/checkout/dependencies`, { feature: 'missing' }));
      await refused(403, () => json('POST', `${P}/checkout/dependencies`, { feature: 'checkout' }));
      const conflict = await refused(403, () => call({ method: 'DELETE', url: `${P}/cart` }));
      assert.equal(conflict.name, 'InvalidOperationError');
      assert.match(conflict.message, /checkout/);
      for (const path of ['dependencies/possible-parents', 'parents']) {
        assert.deepEqual((await call({ url: `${P}/checkout/${path}` })).json(), ['cart']);
      }
      assert.deepEqual((await call({ url: `${P}/cart/parent-variants` })).json(), ['a', 'b']);
      const any = await call({ url: '/api/admin/projects/shop/dependencies' });
      assert.equal(any.body, 'true');
      const client = (
        await app.inject({ url: '/api/client/features', headers: { authorization: DEV_TOKEN } })
      ).json();
      assert.deepEqual(
        client.features.find((f: { name: string }) => f.name === 'checkout').dependencies,
        [{ feature: 'cart', enabled: true, variants: [] }],
      );
      assert.equal(
        (await call({ method: 'DELETE', url: `${P}/checkout/dependencies/cart` })).statusCode,
        200,
      );
      // Removing every parent of a flag that has none: 404, as unleash-server answers it.
      await refused(404, () => call({ method: 'DELETE', url: `${P}/checkout/dependencies` }));
      assert.equal((await call({ url: '/api/admin/projects/shop/dependencies' })).body, 'false');
      const types = (await events('&feature=IS:checkout')).events.map((e) => e.type);
      assert.deepEqual(types.slice(0, 2), [
        'feature-dependency-removed',
        'feature-dependency-added',
      ]);
    });

    it('archives (202), revives (bodiless) and deletes from the archive', async () => {
      assert.equal((await call({ method: 'DELETE', url: `${P}/checkout` })).statusCode, 202);
      await refused(404, () => call({ url: `${P}/checkout` }));
      await refused(409, () => json('POST', P, { name: 'checkout' }));
      const archived = (await call({ url: '/api/admin/search/features?archived=IS:true' })).json();
      assert.deepEqual(
        archived.features.map((f: { name: string }) => f.name),
        ['checkout'],
      );
      const revive = await call({
        method: 'POST',
        url: '/api/admin/archive/revive/checkout',
        headers: { 'content-type': 'application/json' },
        payload: '',
      });
      assert.equal(revive.statusCode, 200, revive.body);
      assert.equal((await call({ url: `${P}/checkout` })).statusCode, 200);
      // Deleting an active or unknown flag from the archive: 200, nothing changes (as unleash-server).
      const kept = await call({ method: 'DELETE', url: '/api/admin/archive/checkout' });
      assert.equal(kept.statusCode, 200, kept.body);
      assert.equal((await call({ url: `${P}/checkout` })).statusCode, 200);
      const unknown = await call({ method: 'DELETE', url: '/api/admin/archive/no-such-flag' });
      assert.equal(unknown.statusCode, 200, unknown.body);
      assert.equal((await call({ method: 'DELETE', url: `${P}/checkout` })).statusCode, 202);
      assert.equal(
        (await call({ method: 'DELETE', url: '/api/admin/archive/checkout' })).statusCode,
        200,
      );
      assert.equal((await db.query("SELECT 1 FROM features WHERE name = 'checkout'")).length, 0);
      const types = (await events('&feature=IS:checkout&limit=3')).events.map((e) => e.type);
      assert.deepEqual(types, ['feature-deleted', 'feature-archived', 'feature-revived']);
    });

    it('turns a flag off where no strategy is left enabled; a revived flag comes back off; PATCH records stale events', async () => {
      assert.equal((await json('POST', P, { name: 'lamp' })).statusCode, 201);
      const added = await json('POST', S('lamp'), { name: 'default' });
      const on = await call({ method: 'POST', url: `${P}/lamp/environments/development/on` });
      assert.equal(on.statusCode, 200, on.body);
      const enabledIn = async (environment: string) =>
        (await call({ url: `${P}/lamp/environments/${environment}` })).json().enabled;
      // Updating the only strategy to disabled turns the flag off there, as unleash-server does.
      const disabled = await json('PUT', `${S('lamp')}/${added.json().id}`, {
        name: 'default',
        disabled: true,
      });
      assert.equal(disabled.statusCode, 200, disabled.body);
      assert.equal(await enabledIn('development'), false);
      const afterUpdate = (await events('&feature=IS:lamp&limit=2')).events.map((e) => e.type);
      assert.deepEqual(afterUpdate, ['feature-environment-disabled', 'feature-strategy-update']);
      // Removing the last strategy of an enabled flag turns it off before the removal's event.
      await call({ method: 'POST', url: `${P}/lamp/environments/production/on` });
      const [only] = (await call({ url: S('lamp', 'production') })).json();
      const removed = await call({
        method: 'DELETE',
        url: `${S('lamp', 'production')}/${only.id}`,
      });
      assert.equal(removed.statusCode, 200, removed.body);
      assert.equal(await enabledIn('production'), false);
      const afterRemoval = (await events('&feature=IS:lamp&limit=2')).events.map((e) => e.type);
      assert.deepEqual(afterRemoval, ['feature-strategy-remove', 'feature-environment-disabled']);

      // A revived flag is off in every environment; reviving an active flag changes nothing.
      await json('PUT', `${S('lamp')}/${added.json().id}`, { name: 'default' });
      await call({ method: 'POST', url: `${P}/lamp/environments/development/on` });
      const revive = (name: string) =>
        call({
          method: 'POST',
          url: `/api/admin/archive/revive/${name}`,
          headers: { 'content-type': 'application/json' },
          payload: '',
        });
      // (The configuration revision may move: it says nothing about what changed.)
      const withoutRevision = async () => ({ ...(await dump(db)), revision: [] });
      const unchanged = await withoutRevision();
      assert.equal((await revive('lamp')).statusCode, 200);
      assert.deepEqual(
        await withoutRevision(),
        unchanged,
        'reviving an active flag changes nothing',
      );
      assert.equal((await call({ method: 'DELETE', url: `${P}/lamp` })).statusCode, 202);
      assert.equal((await revive('lamp')).statusCode, 200);
      assert.equal(await enabledIn('development'), false);
      await refused(404, () => revive('no-such-flag'));

      // PATCH: stale-on/-off after the metadata update; variants are not patched here (403).
      const stale = await json('PATCH', `${P}/lamp`, [
        { op: 'replace', path: '/stale', value: true },
      ]);
      assert.equal(stale.statusCode, 200, stale.body);
      const patched = (await events('&feature=IS:lamp&limit=2')).events.map((e) => e.type);
      assert.deepEqual(patched, ['feature-stale-on', 'feature-metadata-updated']);
      const denied = await refused(403, () =>
        json('PATCH', `${P}/lamp`, [{ op: 'add', path: '/variants', value: [] }]),
      );
      assert.equal(denied.name, 'OperationDeniedError');
    });

    it('searches events by filter, newest first, with paging', async () => {
      const all = await events();
      assert.ok(all.total >= 10);
      const ids = all.events.map((e) => e.id);
      assert.deepEqual(
        ids,
        [...ids].sort((a, b) => b - a),
      );
      const page = (await call({ url: '/api/admin/search/events?offset=2&limit=3' })).json();
      assert.equal(page.total, all.total);
      assert.deepEqual(
        page.events.map((e: StoredEvent) => e.id),
        ids.slice(2, 5),
      );
      const byProject = await events('&project=IS:shop');
      assert.equal(byProject.total, all.events.filter((e) => e.project === 'shop').length);
      const byActor = await events(`&createdBy=IS:${encodeURIComponent(all.events[0]!.createdBy)}`);
      assert.equal(byActor.total, all.total);
      assert.equal((await events('&createdBy=IS:someone else')).total, 0);
      const text = await events('&query=The cart');
      assert.ok(text.events.some((e) => e.type === 'feature-created' && e.featureName === 'cart'));
      const today = new Date().toISOString().slice(0, 10);
      assert.equal((await events(`&from=IS:${today}&to=IS:${today}`)).total, all.total);
      assert.equal((await events('&to=IS:2000-01-01')).total, 0);
      for (const bad of [
        'from=yesterday',
        'type=IS_NOT:x',
        'limit=0',
        'offset=-1',
        'from=IS:2024-13-45',
      ]) {
        const response = await call({ url: `/api/admin/search/events?${bad}` });
        assert.equal(response.statusCode, 400, `${bad}: ${response.body}`);
      }
    });

    it('records the events of an import', async () => {
      const response = await json('POST', '/api/admin/features-batch/import', {
        project: 'shop',
        environment: 'development',
        data: {
          features: [{ name: 'imported', project: 'shop' }],
          featureStrategies: [{ name: 'default', featureName: 'imported' }],
          featureEnvironments: [{ name: 'development', featureName: 'imported', enabled: true }],
          tagTypes: [],
        },
      });
      assert.equal(response.statusCode, 200, response.body);
      const types = (await events('&limit=3')).events.map((e) => [e.type, e.featureName]);
      assert.deepEqual(types, [
        ['features-imported', null],
        ['feature-environment-enabled', 'imported'],
        ['feature-created', 'imported'],
      ]);
    });

    it('streams a change made through these routes and serves it by delta', async () => {
      await app.listen({ port: 0, host: '127.0.0.1' });
      const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
      const stream = await openSse(`${base}/api/client/streaming`, {
        authorization: DEV_TOKEN,
        'unleash-client-spec': '5.2.0',
      });
      try {
        assert.equal(stream.status, 200);
        await waitFor(() => stream.events.length >= 1, 10_000, 'the connected event');
        const delta = await app.inject({
          url: '/api/client/delta',
          headers: { authorization: DEV_TOKEN },
        });
        const etag = String(delta.headers.etag);
        assert.equal(
          (await json('POST', `${P}/cart/environments/development/on`, {})).statusCode,
          200,
        );
        await waitFor(
          () =>
            stream.events.some(
              (event) => event.event === 'unleash-updated' && event.data.includes('"cart"'),
            ),
          10_000,
          'the update of cart',
        );
        const update = stream.events.find((event) => event.event === 'unleash-updated')!;
        const [change] = JSON.parse(update.data).events;
        assert.equal(change.type, 'feature-updated');
        assert.equal(change.feature.name, 'cart');
        assert.equal(change.feature.enabled, true);
        const next = await app.inject({
          url: '/api/client/delta',
          headers: { authorization: DEV_TOKEN, 'if-none-match': etag },
        });
        assert.equal(next.statusCode, 200, next.body);
        assert.deepEqual(
          next
            .json()
            .events.map((e: { type: string; feature?: { name: string } }) => [
              e.type,
              e.feature?.name,
            ]),
          [['feature-updated', 'cart']],
        );
      } finally {
        stream.close();
      }
    });
  });
}
