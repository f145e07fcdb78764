import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { gunzipSync } from 'node:zlib';
import type { ImportRequest } from '@flags/schemas';
import type { FastifyInstance } from 'fastify';
import type { Database } from '../../src/db/database.js';
import { admin, backends, DEV_TOKEN, PROD_TOKEN, startApp } from '../helpers.js';

const fixture = (): ImportRequest =>
  JSON.parse(readFileSync(new URL('../fixtures/import-basic.json', import.meta.url), 'utf8'));

const names = (body: { features: { name: string }[] }) => body.features.map((f) => f.name);

for (const backend of backends) {
  describe(`client API on ${backend.name}`, () => {
    let db: Database;
    let cleanup: () => Promise<void>;
    let app: FastifyInstance;
    const get = (url: string, headers: Record<string, string> = { authorization: DEV_TOKEN }) =>
      app.inject({ url, headers });
    const importInto = async (payload: object) => {
      const response = await app.inject({
        method: 'POST',
        url: '/api/admin/features-batch/import',
        headers: admin,
        payload,
      });
      assert.equal(response.statusCode, 200, response.body);
    };

    before(async () => {
      ({ db, cleanup } = await backend.open());
      app = await startApp(db);
      await app.inject({
        method: 'POST',
        url: '/api/admin/segments',
        headers: admin,
        payload: {
          name: 'beta-testers',
          constraints: [{ contextName: 'userId', operator: 'IN', values: ['t1'] }],
        },
      });
      await importInto(fixture());
      await app.inject({
        method: 'POST',
        url: '/api/admin/projects',
        headers: admin,
        payload: { id: 'mobile' },
      });
      await importInto({
        project: 'mobile',
        environment: 'development',
        data: {
          features: [{ name: 'app-rating' }],
          featureStrategies: [{ name: 'default', featureName: 'app-rating' }],
          featureEnvironments: [{ name: 'app-rating', enabled: true }],
          tagTypes: [],
        },
      });
    });
    after(async () => {
      await app.close();
      await cleanup();
    });

    it('serves version 2 with features, query and meta, and a strong ETag', async () => {
      const response = await get('/api/client/features');
      assert.equal(response.statusCode, 200);
      assert.match(String(response.headers['content-type']), /application\/json/);
      const etag = String(response.headers.etag);
      assert.match(etag, /^"[^"]+"$/);
      const body = response.json();
      assert.equal(body.version, 2);
      assert.deepEqual(names(body), [
        'app-rating',
        'beta-search',
        'checkout-v2',
        'dark-mode',
        'dark-mode-banner',
      ]);
      assert.deepEqual(body.query, { environment: 'development', inlineSegmentConstraints: true });
      assert.equal(body.meta.etag, etag);
      assert.equal(typeof body.meta.revisionId, 'number');
      // Without a spec header ≥ 4.2.0 segment constraints are inlined and no segments are listed.
      const checkout = body.features.find((f: { name: string }) => f.name === 'checkout-v2');
      assert.deepEqual(
        checkout.strategies[0].constraints.map((c: { contextName: string }) => c.contextName),
        ['region', 'userId'],
      );
      assert.equal(checkout.strategies[0].segments, undefined);
      assert.equal(body.segments, undefined);
    });

    it('serves one flag by name, 404 JSON for an unknown one', async () => {
      const one = await get('/api/client/features/dark-mode');
      assert.equal(one.statusCode, 200);
      const all = (await get('/api/client/features')).json();
      assert.deepEqual(
        one.json(),
        all.features.find((f: { name: string }) => f.name === 'dark-mode'),
      );
      const missing = await get('/api/client/features/nope');
      assert.equal(missing.statusCode, 404);
      assert.equal(missing.json().message, 'Could not find feature flag nope');
    });

    it('answers 304 on a matching If-None-Match and 200 otherwise', async () => {
      const first = await get('/api/client/features');
      const etag = String(first.headers.etag);
      const again = await get('/api/client/features', {
        authorization: DEV_TOKEN,
        'if-none-match': etag,
      });
      assert.equal(again.statusCode, 304);
      assert.equal(again.body, '');
      const weak = await get('/api/client/features', {
        authorization: DEV_TOKEN,
        'if-none-match': `W/${etag}`,
      });
      assert.equal(weak.statusCode, 304);
      const stale = await get('/api/client/features', {
        authorization: DEV_TOKEN,
        'if-none-match': '"old"',
      });
      assert.equal(stale.statusCode, 200);
    });

    it('keeps its answers out of shared caches: private, revalidated, varying by token', async () => {
      // A shared cache (CDN) storing a keyed answer could serve one token's flags, strategies and
      // user lists to callers with another token or none; the browser's own cache may keep them.
      const first = await get('/api/client/features');
      const etag = String(first.headers.etag);
      const answers = {
        full: first,
        gzip: await get('/api/client/features', {
          authorization: DEV_TOKEN,
          'accept-encoding': 'gzip',
        }),
        notModified: await get('/api/client/features', {
          authorization: DEV_TOKEN,
          'if-none-match': etag,
        }),
        oneFlag: await get('/api/client/features/dark-mode'),
      };
      assert.equal(answers.notModified.statusCode, 304);
      for (const [name, response] of Object.entries(answers)) {
        const directives = String(response.headers['cache-control'])
          .split(',')
          .map((directive) => directive.trim().toLowerCase());
        assert.ok(directives.includes('private'), `${name}: ${directives}`);
        assert.ok(directives.includes('no-cache'), `${name}: revalidate every time`);
        assert.ok(!directives.includes('public'), name);
        const vary = String(response.headers.vary)
          .split(',')
          .map((header) => header.trim().toLowerCase());
        assert.ok(vary.includes('authorization'), `${name}: vary ${vary}`);
      }
      for (const name of ['full', 'gzip', 'notModified'] as const) {
        const vary = String(answers[name].headers.vary).toLowerCase();
        assert.match(vary, /accept-encoding/, name);
      }
    });

    it('serves a gzip body (compressed once) to clients that accept it, same ETag', async () => {
      const plain = await get('/api/client/features');
      const zipped = await get('/api/client/features', {
        authorization: DEV_TOKEN,
        'accept-encoding': 'gzip, deflate',
      });
      assert.equal(zipped.statusCode, 200);
      assert.equal(zipped.headers['content-encoding'], 'gzip');
      assert.equal(zipped.headers.etag, plain.headers.etag);
      assert.equal(gunzipSync(zipped.rawPayload).toString(), plain.body);
      const refused = await get('/api/client/features', {
        authorization: DEV_TOKEN,
        'accept-encoding': 'gzip;q=0',
      });
      assert.equal(refused.headers['content-encoding'], undefined);
      assert.equal(refused.body, plain.body);
    });

    it('changes the ETag exactly when the visible configuration changes', async () => {
      const etagOf = async (url = '/api/client/features', token = DEV_TOKEN) =>
        String((await get(url, { authorization: token })).headers.etag);
      const dev = await etagOf();
      const prod = await etagOf('/api/client/features', PROD_TOKEN);
      const mobile = await etagOf('/api/client/features?project=mobile');
      assert.notEqual(dev, prod);
      // A write to production only: the development view is unchanged.
      await importInto({
        project: 'default',
        environment: 'production',
        data: {
          // Same metadata as in development: only the production state changes.
          features: [{ name: 'dark-mode', type: 'experiment' }],
          featureStrategies: [{ name: 'default', featureName: 'dark-mode' }],
          featureEnvironments: [{ name: 'dark-mode', enabled: true }],
          tagTypes: [],
        },
      });
      assert.equal(await etagOf(), dev);
      assert.notEqual(await etagOf('/api/client/features', PROD_TOKEN), prod);
      // A write to the default project in development: the mobile-only view is unchanged.
      const payload = fixture();
      payload.data.features[1]!.description = 'now described';
      await importInto(payload);
      const devAfter = await etagOf();
      assert.notEqual(devAfter, dev);
      assert.equal(await etagOf('/api/client/features?project=mobile'), mobile);
      // Archiving removes the flag and changes the tag.
      const archive = await app.inject({
        method: 'DELETE',
        url: '/api/admin/projects/mobile/features/app-rating',
        headers: admin,
      });
      assert.equal(archive.statusCode, 202);
      assert.notEqual(await etagOf('/api/client/features?project=mobile'), mobile);
      const body = (await get('/api/client/features')).json();
      assert.ok(!names(body).includes('app-rating'));
      await importInto(fixture());
    });

    it('sends segments by reference to clients of spec 4.2.0 and later', async () => {
      const response = await get('/api/client/features', {
        authorization: DEV_TOKEN,
        'unleash-client-spec': '4.2.0',
      });
      const body = response.json();
      assert.equal(body.segments.length, 1);
      assert.equal(body.segments[0].name, 'beta-testers');
      const checkout = body.features.find((f: { name: string }) => f.name === 'checkout-v2');
      assert.deepEqual(checkout.strategies[0].segments, [body.segments[0].id]);
      assert.equal(checkout.strategies[0].constraints.length, 1);
      const bad = await get('/api/client/features', {
        authorization: DEV_TOKEN,
        'unleash-client-spec': 'x',
      });
      assert.equal(bad.statusCode, 400);
      assert.match(bad.json().message, /Unleash-Client-Spec/);
    });

    it('filters by project, namePrefix and tag', async () => {
      await importInto({
        project: 'mobile',
        environment: 'development',
        data: { features: [{ name: 'app-store' }], featureStrategies: [], tagTypes: [] },
      });
      assert.deepEqual(names((await get('/api/client/features?project=mobile')).json()), [
        'app-store',
      ]);
      assert.deepEqual(
        names(
          (await get('/api/client/features?project=mobile&project=default&namePrefix=dark')).json(),
        ),
        ['dark-mode', 'dark-mode-banner'],
      );
      assert.deepEqual(names((await get('/api/client/features?namePrefix=dark-mode-')).json()), [
        'dark-mode-banner',
      ]);
      // LIKE wildcards are literal characters here.
      assert.deepEqual(names((await get('/api/client/features?namePrefix=%25')).json()), []);
      const tagged = (await get('/api/client/features?tag=team:design&tag=team:payments')).json();
      assert.deepEqual(names(tagged), ['checkout-v2', 'dark-mode']);
      assert.deepEqual(tagged.query.tag, [
        ['team', 'design'],
        ['team', 'payments'],
      ]);
      const bad = await get('/api/client/features?tag=nocolon');
      assert.equal(bad.statusCode, 400);
      assert.equal(bad.json().name, 'BadDataError');
    });

    it('combines the project, namePrefix and tag filters (each narrows the others)', async () => {
      const view = async (query: string) => (await get(`/api/client/features?${query}`)).json();
      const all = await view('project=default&namePrefix=dark&tag=team:design&tag=team:payments');
      assert.deepEqual(names(all), ['dark-mode']);
      assert.deepEqual(all.query, {
        tag: [
          ['team', 'design'],
          ['team', 'payments'],
        ],
        project: ['default'],
        namePrefix: 'dark',
        environment: 'development',
        inlineSegmentConstraints: true,
      });
      assert.deepEqual(names(await view('namePrefix=checkout&tag=team:payments')), ['checkout-v2']);
      assert.deepEqual(names(await view('namePrefix=checkout&tag=team:design')), []);
      assert.deepEqual(names(await view('project=mobile&tag=team:design')), []);
      // app-rating was archived above.
      assert.deepEqual(names(await view('project=mobile&project=default&namePrefix=app')), [
        'app-store',
      ]);
    });

    it('serves one flag by name only within the token: another project is a 404', async () => {
      const created = await app.inject({
        method: 'POST',
        url: '/api/admin/api-tokens',
        headers: admin,
        payload: { tokenName: 'mobile-dev', type: 'client', projects: ['mobile'] },
      });
      const mobile = { authorization: created.json().secret as string };
      const own = await get('/api/client/features/app-store', mobile);
      assert.equal(own.statusCode, 200);
      assert.equal(own.json().project, 'mobile');
      // Archived (by the ETag test above): gone by name too.
      assert.equal((await get('/api/client/features/app-rating', mobile)).statusCode, 404);
      const foreign = await get('/api/client/features/dark-mode', mobile);
      assert.equal(foreign.statusCode, 404);
      assert.deepEqual(foreign.json(), {
        code: 'NOT_FOUND',
        name: 'NotFoundError',
        message: 'Could not find feature flag dark-mode',
        details: [{ message: 'Could not find feature flag dark-mode' }],
      });
      // The flag as the token's environment has it: the production token, production's state.
      const prod = { authorization: PROD_TOKEN };
      const prodAll = (await get('/api/client/features', prod)).json();
      assert.deepEqual(
        (await get('/api/client/features/dark-mode', prod)).json(),
        prodAll.features.find((f: { name: string }) => f.name === 'dark-mode'),
      );
    });

    it('scopes by the token: environment and projects, never widened by filters', async () => {
      const created = await app.inject({
        method: 'POST',
        url: '/api/admin/api-tokens',
        headers: admin,
        payload: {
          tokenName: 'mobile-prod',
          type: 'client',
          environment: 'production',
          projects: ['mobile'],
        },
      });
      assert.equal(created.statusCode, 201);
      const token = created.json().secret as string;
      assert.match(token, /^mobile:production\.[0-9a-f]{56}$/);
      const own = (await get('/api/client/features', { authorization: token })).json();
      assert.deepEqual(names(own), ['app-store']);
      assert.equal(own.features[0].enabled, false);
      assert.deepEqual(own.query, {
        project: ['mobile'],
        environment: 'production',
        inlineSegmentConstraints: true,
      });
      const widened = (
        await get('/api/client/features?project=default', { authorization: token })
      ).json();
      assert.deepEqual(names(widened), []);
      const prod = (await get('/api/client/features', { authorization: PROD_TOKEN })).json();
      const darkMode = prod.features.find((f: { name: string }) => f.name === 'dark-mode');
      assert.equal(darkMode.enabled, true);
      const checkout = prod.features.find((f: { name: string }) => f.name === 'checkout-v2');
      assert.equal(checkout.enabled, false);
      assert.deepEqual(checkout.strategies, []);
    });

    it('accepts registrations (202) and validates them', async () => {
      const ok = await app.inject({
        method: 'POST',
        url: '/api/client/register',
        headers: { authorization: DEV_TOKEN },
        payload: {
          appName: 'checkout-service',
          instanceId: 'pod-1',
          sdkVersion: 'unleash-client-node:6.1.0',
          strategies: ['default', 'flexibleRollout'],
          started: new Date().toISOString(),
          interval: 15000,
          someFutureField: true,
        },
      });
      assert.equal(ok.statusCode, 202);
      assert.ok(ok.headers['x-unleash-version']);
      const rows = await db.query<{ app_name: string; instance_id: string; environment: string }>(
        'SELECT app_name, instance_id, environment FROM client_instances',
      );
      assert.deepEqual(rows, [
        { app_name: 'checkout-service', instance_id: 'pod-1', environment: 'development' },
      ]);
      const bad = await app.inject({
        method: 'POST',
        url: '/api/client/register',
        headers: { authorization: DEV_TOKEN },
        payload: { instanceId: 'x' },
      });
      assert.equal(bad.statusCode, 400);
      assert.match(bad.json().message, /appName/);
      const noToken = await app.inject({
        method: 'POST',
        url: '/api/client/register',
        payload: { appName: 'a' },
      });
      assert.equal(noToken.statusCode, 401);
    });

    it('records the UNLEASH-* and Unleash-Interval headers with a registration; body fields win', async () => {
      const register = (payload: object, headers: Record<string, string>) =>
        app.inject({
          method: 'POST',
          url: '/api/client/register',
          headers: { authorization: DEV_TOKEN, ...headers },
          payload,
        });
      const headers = {
        'unleash-appname': 'billing',
        'unleash-instanceid': 'billing-7',
        'unleash-connection-id': 'b0e2c3f4-conn',
        'unleash-sdk': 'unleash-client-node:6.4.0',
        'unleash-interval': '15000',
      };
      assert.equal((await register({ appName: 'billing' }, headers)).statusCode, 202);
      assert.equal(
        (
          await register(
            {
              appName: 'billing',
              instanceId: 'billing-8',
              sdkVersion: 'unleash-client-node:6.5.0',
              interval: 30000,
              connectionId: 'from-body',
            },
            headers,
          )
        ).statusCode,
        202,
      );
      const rows = await db.query(
        `SELECT instance_id, environment, connection_id, sdk_version, interval_ms
           FROM client_instances WHERE app_name = 'billing' ORDER BY instance_id`,
      );
      assert.deepEqual(rows, [
        {
          instance_id: 'billing-7',
          environment: 'development',
          connection_id: 'b0e2c3f4-conn',
          sdk_version: 'unleash-client-node:6.4.0',
          interval_ms: 15000,
        },
        {
          instance_id: 'billing-8',
          environment: 'development',
          connection_id: 'from-body',
          sdk_version: 'unleash-client-node:6.5.0',
          interval_ms: 30000,
        },
      ]);
      // A header that is not a whole number of milliseconds is not an interval.
      await register(
        { appName: 'billing', instanceId: 'billing-9' },
        {
          'unleash-interval': 'soon',
        },
      );
      const [ninth] = await db.query<{ interval_ms: number | null }>(
        `SELECT interval_ms FROM client_instances WHERE instance_id = 'billing-9'`,
      );
      assert.equal(ninth?.interval_ms, null);
    });

    it('adds metrics into hourly buckets per flag, app and environment', async () => {
      const start = new Date('2026-03-01T10:05:00Z');
      const send = (stop: string, toggles: object, token = DEV_TOKEN) =>
        app.inject({
          method: 'POST',
          url: '/api/client/metrics',
          headers: { authorization: token },
          payload: {
            appName: 'web',
            instanceId: 'i1',
            bucket: { start: start.toISOString(), stop, toggles },
          },
        });
      const first = await send('2026-03-01T10:10:00Z', {
        'dark-mode': { yes: 3, no: 1, variants: { dark: 2, dim: 1 } },
        'not-a-flag': { yes: 5, no: 0 },
        'checkout-v2': { yes: 0, no: 0 },
      });
      assert.equal(first.statusCode, 202);
      assert.equal(
        (
          await send('2026-03-01T10:59:59Z', {
            'dark-mode': { yes: 2, no: 2, variants: { dark: 1 } },
          })
        ).statusCode,
        202,
      );
      assert.equal(
        (await send('2026-03-01T11:00:01Z', { 'dark-mode': { yes: 1, no: 0 } })).statusCode,
        202,
      );
      assert.equal(
        (await send('2026-03-01T11:00:01Z', { 'dark-mode': { yes: 1, no: 0 } }, PROD_TOKEN))
          .statusCode,
        202,
      );
      const buckets = await db.query(
        `SELECT feature_name, app_name, environment, hour, yes::int AS yes, no::int AS no
           FROM client_metrics ORDER BY environment, hour`,
      );
      assert.deepEqual(buckets, [
        {
          feature_name: 'dark-mode',
          app_name: 'web',
          environment: 'development',
          hour: new Date('2026-03-01T10:00:00Z'),
          yes: 5,
          no: 3,
        },
        {
          feature_name: 'dark-mode',
          app_name: 'web',
          environment: 'development',
          hour: new Date('2026-03-01T11:00:00Z'),
          yes: 1,
          no: 0,
        },
        {
          feature_name: 'dark-mode',
          app_name: 'web',
          environment: 'production',
          hour: new Date('2026-03-01T11:00:00Z'),
          yes: 1,
          no: 0,
        },
      ]);
      const variants = await db.query(
        'SELECT variant, count::int AS count FROM client_metrics_variants ORDER BY variant',
      );
      assert.deepEqual(variants, [
        { variant: 'dark', count: 3 },
        { variant: 'dim', count: 1 },
      ]);
    });

    it('rejects malformed metrics with 400 JSON and writes nothing', async () => {
      const before = await db.query('SELECT * FROM client_metrics');
      const cases = [
        { bucket: { start: 'x', stop: 'y', toggles: {} } },
        {
          appName: 'web',
          bucket: {
            start: '2026-03-01T10:00:00Z',
            stop: '2026-03-01T10:01:00Z',
            toggles: { a: { yes: -1, no: 0 } },
          },
        },
        {
          appName: 'web',
          bucket: {
            start: '2026-03-01T10:00:00Z',
            stop: '2026-03-01T10:01:00Z',
            toggles: { a: { yes: 1e12, no: 0 } },
          },
        },
        {
          appName: 'web',
          bucket: { start: 'yesterday', stop: '2026-03-01T10:01:00Z', toggles: {} },
        },
        {
          appName: 'web',
          bucket: { start: 0, stop: 1e20, toggles: { 'dark-mode': { yes: 1, no: 0 } } },
        },
        {
          appName: 'web',
          bucket: { start: -1e15, stop: 0, toggles: { 'dark-mode': { yes: 1, no: 0 } } },
        },
      ];
      for (const payload of cases) {
        const response = await app.inject({
          method: 'POST',
          url: '/api/client/metrics',
          headers: { authorization: DEV_TOKEN },
          payload,
        });
        assert.equal(response.statusCode, 400, JSON.stringify(payload));
        assert.deepEqual(Object.keys(response.json()), ['code', 'name', 'message', 'details']);
      }
      const broken = await app.inject({
        method: 'POST',
        url: '/api/client/metrics',
        headers: { authorization: DEV_TOKEN, 'content-type': 'application/json' },
        payload: '{"appName":',
      });
      assert.equal(broken.statusCode, 400);
      assert.equal(broken.json().name, 'BadDataError');
      assert.deepEqual(await db.query('SELECT * FROM client_metrics'), before);
    });

    it('answers 400, not 500, for values the database cannot store', async () => {
      const prefix = await get('/api/client/features?namePrefix=a%00b');
      assert.equal(prefix.statusCode, 400);
      assert.equal(prefix.json().name, 'BadDataError');
      const payload = fixture();
      payload.data.features.push({ name: 'nul\u0000name' });
      const response = await app.inject({
        method: 'POST',
        url: '/api/admin/features-batch/import',
        headers: admin,
        payload,
      });
      assert.equal(response.statusCode, 400);
      const register = await app.inject({
        method: 'POST',
        url: '/api/client/register',
        headers: { authorization: DEV_TOKEN },
        payload: { appName: 'a\u0000b' },
      });
      assert.equal(register.statusCode, 400);
    });

    it('answers 413 JSON beyond the body limit', async () => {
      const response = await app.inject({
        method: 'POST',
        url: '/api/client/metrics',
        headers: { authorization: DEV_TOKEN, 'content-type': 'application/json' },
        payload: JSON.stringify({ appName: 'x'.repeat(2 * 1024 * 1024) }),
      });
      assert.equal(response.statusCode, 413);
      assert.equal(response.json().name, 'ContentTooLargeError');
    });
  });
}
