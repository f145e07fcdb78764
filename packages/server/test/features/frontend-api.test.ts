import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance, InjectOptions } from 'fastify';
import pino from 'pino';
import { buildApp } from '../../src/app.js';
import type { Database } from '../../src/db/database.js';
import { endOfDay, isoWeek } from '../../src/features/insights/calendar.js';
import { runSnapshot } from '../../src/features/insights/snapshot-job.js';
import {
  ADMIN_TOKEN,
  admin,
  backends,
  createProject,
  DEV_TOKEN,
  startApp,
  testConfig,
} from '../helpers.js';

const DEV_FRONTEND = '*:development.frontend-dev-secret';
const PROD_FRONTEND = '*:production.frontend-prod-secret';
/**
 * Every app of a suite is configured with both: configured tokens are kept in step at start, so
 * an app configured with fewer would delete the others from the shared database.
 */
const FRONTEND_TOKENS = [DEV_FRONTEND, PROD_FRONTEND];

interface FlagSpec {
  readonly name: string;
  readonly enabled: boolean;
  readonly impressionData?: boolean;
  readonly strategy?: { name: string; parameters?: Record<string, string>; constraints?: object[] };
  readonly variants?: object[];
}

/** An import of `flags` into `project` and `environment` (an Unleash export document). */
function importOf(project: string, environment: string, flags: readonly FlagSpec[]) {
  return {
    project,
    environment,
    data: {
      features: flags.map(({ name, impressionData }) => ({
        name,
        project,
        ...(impressionData === undefined ? {} : { impressionData }),
      })),
      featureStrategies: flags.map(({ name, strategy }) => ({
        name: strategy?.name ?? 'default',
        featureName: name,
        parameters: strategy?.parameters ?? {},
        constraints: strategy?.constraints ?? [],
      })),
      featureEnvironments: flags.map(({ name, enabled, variants }) => ({
        name,
        featureName: name,
        environment,
        enabled,
        variants: variants ?? [],
      })),
      tagTypes: [],
    },
  };
}

async function importFlags(
  app: FastifyInstance,
  project: string,
  environment: string,
  flags: readonly FlagSpec[],
): Promise<void> {
  const response = await app.inject({
    method: 'POST',
    url: '/api/admin/features-batch/import',
    headers: admin,
    payload: importOf(project, environment, flags),
  });
  assert.equal(response.statusCode, 200, response.body);
}

const DARK_MODE_VARIANTS = [
  {
    name: 'midnight',
    weight: 1000,
    weightType: 'variable',
    stickiness: 'default',
    payload: { type: 'string', value: '#0b1021' },
  },
];

const DEFAULT_DEVELOPMENT: readonly FlagSpec[] = [
  { name: 'dark-mode', enabled: true, variants: DARK_MODE_VARIANTS, impressionData: true },
  { name: 'beta-banner', enabled: true },
  {
    name: 'checkout-v2',
    enabled: true,
    strategy: {
      name: 'flexibleRollout',
      parameters: { rollout: '100', stickiness: 'default', groupId: 'checkout-v2' },
      constraints: [{ contextName: 'userId', operator: 'IN', values: ['alice'] }],
    },
  },
  { name: 'maintenance-mode', enabled: false },
];

const disabledVariant = { name: 'disabled', enabled: false, feature_enabled: true };
const toggle = (name: string, variant: object = disabledVariant, impressionData = false) => ({
  name,
  enabled: true,
  variant: {
    ...variant,
    featureEnabled: (variant as { feature_enabled: boolean }).feature_enabled,
  },
  impressionData,
});
const darkMode = toggle(
  'dark-mode',
  {
    name: 'midnight',
    enabled: true,
    payload: { type: 'string', value: '#0b1021' },
    feature_enabled: true,
  },
  true,
);

for (const backend of backends) {
  describe(`the frontend API on ${backend.name}`, () => {
    let cleanup: () => Promise<void>;
    let db: Database;
    let app: FastifyInstance;
    /** A frontend token of development for project `mobile` only. */
    let mobileFrontend: string;

    const call = (options: InjectOptions & { token?: string }) => {
      const { token, ...rest } = options;
      return app.inject({
        ...rest,
        headers: { ...(token === undefined ? {} : { authorization: token }), ...rest.headers },
      });
    };
    const names = (body: string) =>
      (JSON.parse(body) as { toggles: { name: string }[] }).toggles.map((t) => t.name);

    before(async () => {
      ({ db, cleanup } = await backend.open());
      app = await startApp(db, { frontendTokens: FRONTEND_TOKENS });
      await createProject(app, 'mobile');
      await importFlags(app, 'default', 'development', DEFAULT_DEVELOPMENT);
      await importFlags(app, 'default', 'production', [
        // Flag metadata is shared by the environments: the last import sets it.
        { name: 'dark-mode', enabled: false, impressionData: true },
        { name: 'beta-banner', enabled: true },
        { name: 'checkout-v2', enabled: false },
        { name: 'maintenance-mode', enabled: true },
      ]);
      await importFlags(app, 'mobile', 'development', [{ name: 'mobile-sync', enabled: true }]);
      const created = await app.inject({
        method: 'POST',
        url: '/api/admin/api-tokens',
        headers: admin,
        payload: {
          tokenName: 'mobile-web',
          type: 'frontend',
          environment: 'development',
          projects: ['mobile'],
        },
      });
      assert.equal(created.statusCode, 201, created.body);
      mobileFrontend = created.json().secret;
    });
    after(async () => {
      await app.close();
      await cleanup();
    });

    it('answers GET /api/frontend with the enabled toggles of the context, in name order', async () => {
      const anonymous = await call({ url: '/api/frontend', token: DEV_FRONTEND });
      assert.equal(anonymous.statusCode, 200, anonymous.body);
      assert.deepEqual(anonymous.json(), {
        toggles: [toggle('beta-banner'), darkMode, toggle('mobile-sync')],
      });
      assert.equal(anonymous.headers['content-type'], 'application/json; charset=utf-8');
      assert.equal(anonymous.headers['cache-control'], 'public, max-age=2');
      assert.equal(anonymous.headers.vary, 'Accept-Encoding, Authorization');
      assert.match(String(anonymous.headers.etag), /^W\/"3-[0-9a-z]+"$/);
      assert.equal(anonymous.headers['access-control-allow-origin'], '*');

      const alice = await call({ url: '/api/frontend?userId=alice', token: DEV_FRONTEND });
      assert.deepEqual(names(alice.body), [
        'beta-banner',
        'checkout-v2',
        'dark-mode',
        'mobile-sync',
      ]);
    });

    it('answers POST with a bare context, a { context } and a toggle list', async () => {
      const bare = await call({
        method: 'POST',
        url: '/api/frontend',
        token: DEV_FRONTEND,
        payload: { userId: 'alice' },
      });
      const wrapped = await call({
        method: 'POST',
        url: '/api/frontend',
        token: DEV_FRONTEND,
        payload: { context: { userId: 'alice' } },
      });
      assert.equal(bare.statusCode, 200, bare.body);
      assert.equal(bare.body, wrapped.body);
      assert.equal(bare.headers.etag, wrapped.headers.etag);
      assert.deepEqual(names(bare.body), [
        'beta-banner',
        'checkout-v2',
        'dark-mode',
        'mobile-sync',
      ]);
      const named = await call({
        method: 'POST',
        url: '/api/frontend',
        token: DEV_FRONTEND,
        payload: { context: {}, toggles: ['maintenance-mode', 'no-such-flag', 'dark-mode'] },
      });
      assert.equal(named.statusCode, 200, named.body);
      const offVariant = { name: 'disabled', enabled: false, feature_enabled: false };
      assert.deepEqual(named.json().toggles, [
        { ...toggle('maintenance-mode', offVariant), enabled: false },
        { ...toggle('no-such-flag', offVariant), enabled: false },
        darkMode,
      ]);
    });

    it('serves each token the flags of its environment and projects only', async () => {
      const production = await call({ url: '/api/frontend', token: PROD_FRONTEND });
      assert.deepEqual(names(production.body), ['beta-banner', 'maintenance-mode']);
      const mobile = await call({ url: '/api/frontend?userId=alice', token: mobileFrontend });
      assert.deepEqual(names(mobile.body), ['mobile-sync']);
      const foreign = await call({
        url: '/api/frontend/features/beta-banner',
        token: mobileFrontend,
      });
      assert.equal(foreign.statusCode, 404, foreign.body);
      const named = await call({
        method: 'POST',
        url: '/api/frontend',
        token: mobileFrontend,
        payload: { toggles: ['beta-banner'] },
      });
      assert.equal(named.json().toggles[0].enabled, false, 'a flag of another project is unknown');
    });

    it('answers /features/:name with one enabled toggle, 404 for a disabled or unknown one', async () => {
      const enabled = await call({ url: '/api/frontend/features/dark-mode', token: DEV_FRONTEND });
      assert.equal(enabled.statusCode, 200, enabled.body);
      assert.deepEqual(enabled.json(), darkMode);
      const posted = await call({
        method: 'POST',
        url: '/api/frontend/features/checkout-v2',
        token: DEV_FRONTEND,
        payload: { context: { userId: 'alice' } },
      });
      assert.equal(posted.statusCode, 200, posted.body);
      assert.deepEqual(posted.json(), toggle('checkout-v2'));
      for (const url of [
        '/api/frontend/features/checkout-v2',
        '/api/frontend/features/maintenance-mode',
        '/api/frontend/features/no-such-flag',
      ]) {
        const missing = await call({ url, token: DEV_FRONTEND });
        assert.equal(missing.statusCode, 404, url);
        assert.deepEqual(missing.json(), {
          code: 'NOT_FOUND',
          name: 'NotFoundError',
          message: 'No enabled feature of that name for this token.',
          details: [{ message: 'No enabled feature of that name for this token.' }],
        });
      }
    });

    it('answers 304 to GET and POST whose If-None-Match names the answer', async () => {
      const first = await call({ url: '/api/frontend?userId=alice', token: DEV_FRONTEND });
      const etag = String(first.headers.etag);
      const again = await call({
        url: '/api/frontend?userId=alice',
        token: DEV_FRONTEND,
        headers: { 'if-none-match': etag },
      });
      assert.equal(again.statusCode, 304);
      assert.equal(again.body, '');
      assert.equal(again.headers.etag, etag);
      const posted = await call({
        method: 'POST',
        url: '/api/frontend',
        token: DEV_FRONTEND,
        headers: { 'if-none-match': etag },
        payload: { context: { userId: 'alice' } },
      });
      assert.equal(posted.statusCode, 304);
      const other = await call({
        url: '/api/frontend?userId=bob',
        token: DEV_FRONTEND,
        headers: { 'if-none-match': etag },
      });
      assert.equal(other.statusCode, 200, 'another answer has another ETag');
    });

    it('answers /all with 501 unless enableAllEndpoint', async () => {
      for (const method of ['GET', 'POST'] as const) {
        const off = await call({ method, url: '/api/frontend/all', token: DEV_FRONTEND });
        assert.equal(off.statusCode, 501);
        assert.equal(
          off.body,
          'The /api/frontend/all endpoint is disabled. Please check your server configuration. To enable it, set the `enableAllEndpoint` configuration option or `ENABLE_ALL_ENDPOINT` environment variable to `true`.',
        );
      }
      const enabled = await buildApp(
        testConfig({ frontendTokens: FRONTEND_TOKENS, enableAllEndpoint: true }),
        { db, logger: false },
      );
      try {
        const all = await enabled.inject({
          url: '/api/frontend/all',
          headers: { authorization: DEV_FRONTEND },
        });
        assert.equal(all.statusCode, 200, all.body);
        assert.deepEqual(names(all.body), [
          'beta-banner',
          'checkout-v2',
          'dark-mode',
          'maintenance-mode',
          'mobile-sync',
        ]);
        const posted = await enabled.inject({
          method: 'POST',
          url: '/api/frontend/all',
          headers: { authorization: DEV_FRONTEND },
          payload: { userId: 'alice' },
        });
        assert.equal(
          posted.json().toggles.filter((t: { enabled: boolean }) => t.enabled).length,
          4,
        );
      } finally {
        await enabled.close();
      }
    });

    it('admits frontend tokens only: 401 without a known token, 403 for client and admin tokens', async () => {
      const metrics = { appName: 'web', bucket: null };
      const routes: [string, string, object | undefined][] = [
        ['GET', '/api/frontend', undefined],
        ['POST', '/api/frontend', {}],
        ['GET', '/api/frontend/features/beta-banner', undefined],
        ['POST', '/api/frontend/features/beta-banner', {}],
        ['GET', '/api/frontend/all', undefined],
        ['POST', '/api/frontend/client/metrics', metrics],
        ['POST', '/api/frontend/client/register', { appName: 'web' }],
      ];
      const tokens: [string | undefined, number, string | undefined][] = [
        [DEV_FRONTEND, 0, undefined],
        [`Bearer ${DEV_FRONTEND}`, 0, undefined],
        [
          DEV_TOKEN,
          403,
          'A client token cannot be used on the frontend API; use a frontend token.',
        ],
        [
          ADMIN_TOKEN,
          403,
          'An admin token cannot be used on the frontend API; use a frontend token.',
        ],
        ['*:development.unknown-secret', 401, undefined],
        [undefined, 401, undefined],
      ];
      for (const [method, url, payload] of routes) {
        for (const [token, status, message] of tokens) {
          const response = await call({
            method: method as 'GET' | 'POST',
            url,
            token,
            ...(payload ? { payload } : {}),
          });
          const label = `${method} ${url} with ${token}`;
          if (status === 0) {
            assert.ok(
              response.statusCode < 400 || url.endsWith('/all'),
              `${label}: ${response.body}`,
            );
            continue;
          }
          assert.equal(response.statusCode, status, `${label}: ${response.body}`);
          const body = response.json();
          assert.equal(body.name, status === 401 ? 'AuthenticationRequired' : 'ForbiddenError');
          if (message) assert.equal(body.message, message, label);
        }
      }
      // The frontend token is refused on the client and admin APIs (the other half of the matrix).
      for (const url of ['/api/client/features', '/api/admin/api-tokens']) {
        const response = await call({ url, token: DEV_FRONTEND });
        assert.equal(response.statusCode, 403, url);
      }
    });

    it('answers CORS preflights on /api/frontend* (before any token check) and on no other path', async () => {
      for (const url of [
        '/api/frontend',
        '/api/frontend/features/x',
        '/api/frontend/client/metrics',
      ]) {
        const preflight = await call({
          method: 'OPTIONS',
          url,
          headers: {
            origin: 'https://app.example',
            'access-control-request-method': 'POST',
            'access-control-request-headers': 'authorization, content-type',
          },
        });
        assert.equal(preflight.statusCode, 204, url);
        assert.equal(preflight.headers['access-control-allow-origin'], '*');
        assert.equal(preflight.headers['access-control-allow-methods'], 'GET, POST');
        assert.equal(
          preflight.headers['access-control-allow-headers'],
          'authorization, content-type',
        );
        assert.equal(preflight.headers['access-control-max-age'], '172800');
      }
      const elsewhere = await call({
        method: 'OPTIONS',
        url: '/api/admin/api-tokens',
        headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' },
      });
      assert.equal(elsewhere.statusCode, 404);
      assert.equal(elsewhere.headers['access-control-allow-origin'], undefined);
      const client = await call({
        url: '/api/client/features',
        token: DEV_TOKEN,
        headers: { origin: 'https://app.example' },
      });
      assert.equal(client.headers['access-control-allow-origin'], undefined);
    });

    it('echoes a listed origin only, with Vary: Origin, under cors.origin', async () => {
      const listed = await buildApp(
        testConfig({
          frontendTokens: FRONTEND_TOKENS,
          cors: { origin: ['https://app.example'], credentials: true, maxAge: 60 },
        }),
        { db, logger: false },
      );
      try {
        const get = (origin: string) =>
          listed.inject({
            url: '/api/frontend',
            headers: { authorization: DEV_FRONTEND, origin },
          });
        const allowed = await get('https://app.example');
        assert.equal(allowed.statusCode, 200);
        assert.equal(allowed.headers['access-control-allow-origin'], 'https://app.example');
        assert.equal(allowed.headers['access-control-allow-credentials'], 'true');
        assert.equal(allowed.headers.vary, 'Origin, Accept-Encoding, Authorization');
        const other = await get('https://evil.example');
        assert.equal(other.statusCode, 200);
        assert.equal(other.headers['access-control-allow-origin'], undefined);
        const preflight = await listed.inject({
          method: 'OPTIONS',
          url: '/api/frontend',
          headers: { origin: 'https://app.example', 'access-control-request-method': 'GET' },
        });
        assert.equal(preflight.statusCode, 204);
        assert.equal(preflight.headers['access-control-max-age'], '60');
      } finally {
        await listed.close();
      }
    });

    it('refuses bad input with a 4xx JSON error', async () => {
      const cases: [InjectOptions, number, string][] = [
        [
          {
            method: 'POST',
            url: '/api/frontend',
            headers: { 'content-type': 'application/json' },
            payload: '{"context":',
          },
          400,
          'The request body is not valid JSON.',
        ],
        [
          {
            method: 'POST',
            url: '/api/frontend',
            headers: { 'content-type': 'text/plain' },
            payload: 'userId=a',
          },
          415,
          'The content type is not supported; send application/json.',
        ],
        [
          { method: 'POST', url: '/api/frontend', payload: { toggles: 'dark-mode' } },
          400,
          'The request body is invalid.',
        ],
        [
          { method: 'POST', url: '/api/frontend', payload: { context: { userId: { id: 1 } } } },
          400,
          'The evaluation context is invalid.',
        ],
        [{ url: '/api/frontend?userId=a&userId=b' }, 400, 'The evaluation context is invalid.'],
        [
          { method: 'POST', url: '/api/frontend/client/metrics', payload: { bucket: null } },
          400,
          "Request validation failed: body must have required property 'appName'",
        ],
        [
          {
            method: 'POST',
            url: '/api/frontend/client/metrics',
            payload: { appName: 'web', bucket: { start: 'x', stop: 'y', toggles: {} } },
          },
          400,
          'Request validation failed: body/bucket/start must match format "date-time"',
        ],
      ];
      for (const [options, status, message] of cases) {
        const response = await call({ ...options, token: DEV_FRONTEND });
        const label = `${options.method ?? 'GET'} ${options.url} ${JSON.stringify(options.payload)}`;
        assert.equal(response.statusCode, status, `${label}: ${response.body}`);
        assert.equal(response.json().message, message, label);
        assert.ok(Array.isArray(response.json().details), label);
      }
    });

    it('stores frontend usage metrics in the hourly buckets of the token environment, counted by insights', async () => {
      const report = {
        appName: 'web-shop',
        instanceId: 'browser-1',
        bucket: {
          start: '2026-03-03T09:00:00.000Z',
          stop: '2026-03-03T09:30:00.000Z',
          toggles: {
            'dark-mode': { yes: 5, no: 1, variants: { midnight: 5 } },
            'beta-banner': { yes: 2, no: 0 },
          },
        },
        impactMetrics: [{ name: 'clicks', help: 'clicks', type: 'counter', samples: [] }],
      };
      const accepted = await call({
        method: 'POST',
        url: '/api/frontend/client/metrics',
        token: DEV_FRONTEND,
        payload: report,
      });
      assert.equal(accepted.statusCode, 202, accepted.body);
      assert.equal(accepted.body, '');
      const rows = await db.query(
        `SELECT feature_name, app_name, environment, hour, yes::int AS yes, no::int AS no
           FROM client_metrics WHERE app_name = 'web-shop' ORDER BY feature_name`,
      );
      const hour = new Date('2026-03-03T09:00:00Z');
      assert.deepEqual(rows, [
        {
          feature_name: 'beta-banner',
          app_name: 'web-shop',
          environment: 'development',
          hour,
          yes: 2,
          no: 0,
        },
        {
          feature_name: 'dark-mode',
          app_name: 'web-shop',
          environment: 'development',
          hour,
          yes: 5,
          no: 1,
        },
      ]);
      const registered = await call({
        method: 'POST',
        url: '/api/frontend/client/register',
        token: PROD_FRONTEND,
        payload: {
          appName: 'web-shop',
          instanceId: 'browser-2',
          sdkVersion: 'unleash-proxy-client:3.8.2',
        },
      });
      assert.equal(registered.statusCode, 202, registered.body);
      const instances = await db.query(
        `SELECT instance_id, environment, sdk_version FROM client_instances
          WHERE app_name = 'web-shop' ORDER BY instance_id`,
      );
      assert.deepEqual(instances, [
        { instance_id: 'browser-1', environment: 'development', sdk_version: null },
        {
          instance_id: 'browser-2',
          environment: 'production',
          sdk_version: 'unleash-proxy-client:3.8.2',
        },
      ]);

      const wednesday = '2026-03-04';
      assert.equal(await runSnapshot(db, new Date(`${wednesday}T12:00:00Z`)), true);
      const insights = await app.inject({
        url: `/api/admin/insights?from=${wednesday}&to=${wednesday}`,
        headers: admin,
      });
      assert.equal(insights.statusCode, 200, insights.body);
      assert.deepEqual(insights.json().metricsSummaryTrends, [
        {
          week: isoWeek(wednesday),
          date: endOfDay(wednesday),
          project: 'default',
          totalRequests: 8,
          totalYes: 7,
          totalNo: 1,
          totalApps: 1,
          totalFlags: 2,
          totalEnvironments: 1,
        },
        {
          week: isoWeek(wednesday),
          date: endOfDay(wednesday),
          project: 'mobile',
          totalRequests: 0,
          totalYes: 0,
          totalNo: 0,
          totalApps: 0,
          totalFlags: 0,
          totalEnvironments: 0,
        },
      ]);
    });

    it('limits the reports of browser SDKs per client address (429 JSON error)', async () => {
      const limited = await buildApp(
        testConfig({ frontendTokens: FRONTEND_TOKENS, frontendReportsPerMinute: 2 }),
        { db, logger: false },
      );
      try {
        const post = (url: string, remoteAddress: string) =>
          limited.inject({
            method: 'POST',
            url,
            remoteAddress,
            headers: { authorization: DEV_FRONTEND },
            payload: { appName: 'limited-web', bucket: null },
          });
        for (const url of ['/api/frontend/client/metrics', '/api/frontend/client/register']) {
          assert.equal((await post(url, '192.0.2.1')).statusCode, 202);
          assert.equal((await post(url, '192.0.2.1')).statusCode, 202);
          const refused = await post(url, '192.0.2.1');
          assert.equal(refused.statusCode, 429, url);
          assert.equal(refused.json().name, 'RateLimitError');
          assert.equal((await post(url, '192.0.2.2')).statusCode, 202, 'another address');
        }
        // Evaluations are not limited.
        for (let i = 0; i < 5; i++) {
          const evaluated = await limited.inject({
            url: '/api/frontend',
            remoteAddress: '192.0.2.1',
            headers: { authorization: DEV_FRONTEND },
          });
          assert.equal(evaluated.statusCode, 200);
        }
      } finally {
        await limited.close();
      }
    });

    it("takes the caller's remoteAddress unless the request address is trusted (trustProxy)", async () => {
      // Last: the flag it adds to production would show in the answers above.
      await importFlags(app, 'mobile', 'production', [
        {
          name: 'office-only',
          enabled: true,
          strategy: { name: 'remoteAddress', parameters: { IPs: '10.0.0.0/8' } },
        },
      ]);
      const forwarded = { authorization: PROD_FRONTEND, 'x-forwarded-for': '203.0.113.5' };
      const url = '/api/frontend?remoteAddress=10.1.2.3';
      const callerCounts = await app.inject({ url, headers: forwarded });
      assert.deepEqual(names(callerCounts.body), [
        'beta-banner',
        'maintenance-mode',
        'office-only',
      ]);
      const behindBalancer = await buildApp(
        testConfig({ frontendTokens: FRONTEND_TOKENS, trustProxy: true }),
        { db, logger: false },
      );
      try {
        const requestCounts = await behindBalancer.inject({ url, headers: forwarded });
        assert.deepEqual(names(requestCounts.body), ['beta-banner', 'maintenance-mode']);
        const fromOffice = await behindBalancer.inject({
          url: '/api/frontend',
          headers: { ...forwarded, 'x-forwarded-for': '10.9.9.9' },
        });
        assert.deepEqual(names(fromOffice.body), [
          'beta-banner',
          'maintenance-mode',
          'office-only',
        ]);
      } finally {
        await behindBalancer.close();
      }
    });
  });

  describe(`the frontend API's snapshots on ${backend.name}`, () => {
    let cleanup: () => Promise<void>;
    let db: Database;
    let app: FastifyInstance;
    /** The server's log lines (JSON), warnings and up. */
    const lines: { msg: string; environment?: string }[] = [];
    const compileWarnings = (environment: string) =>
      lines.filter(
        (line) =>
          line.environment === environment &&
          line.msg.includes('unknown strategy "legacy-rollout"'),
      ).length;

    before(async () => {
      ({ db, cleanup } = await backend.open());
      const logger = pino(
        { level: 'warn' },
        { write: (line: string) => void lines.push(JSON.parse(line)) },
      );
      app = await buildApp(testConfig({ frontendTokens: FRONTEND_TOKENS }), {
        db,
        logger,
      });
      // A custom strategy the engine does not implement: every compile warns about it once,
      // which counts the compiles of the snapshot it is in.
      const strategy = await app.inject({
        method: 'POST',
        url: '/api/admin/strategies',
        headers: admin,
        payload: { name: 'legacy-rollout', parameters: [] },
      });
      assert.equal(strategy.statusCode, 201, strategy.body);
      await importFlags(app, 'default', 'development', [
        { name: 'legacy', enabled: true, strategy: { name: 'legacy-rollout' } },
        { name: 'beta-banner', enabled: true },
      ]);
    });
    after(async () => {
      await app.close();
      await cleanup();
    });

    const frontend = async (token: string, userId: string) => {
      const response = await app.inject({
        url: `/api/frontend?userId=${userId}`,
        headers: { authorization: token },
      });
      assert.equal(response.statusCode, 200, response.body);
      return response.json().toggles.map((t: { name: string }) => t.name);
    };

    it('compiles an environment once per change of its flags, not per request', async () => {
      for (let i = 0; i < 25; i++)
        assert.deepEqual(await frontend(DEV_FRONTEND, `u${i}`), ['beta-banner']);
      assert.equal(compileWarnings('development'), 1);

      // A change in production leaves development's payload (and its compiled state) as it was.
      await importFlags(app, 'default', 'production', [
        { name: 'legacy', enabled: true, strategy: { name: 'legacy-rollout' } },
      ]);
      assert.deepEqual(await frontend(PROD_FRONTEND, 'u1'), []);
      assert.equal(compileWarnings('production'), 1);
      for (let i = 0; i < 5; i++) await frontend(DEV_FRONTEND, `v${i}`);
      assert.equal(compileWarnings('development'), 1);

      // A new import into development: new answers at once, from one new compile.
      await importFlags(app, 'default', 'development', [
        { name: 'legacy', enabled: true, strategy: { name: 'legacy-rollout' } },
        { name: 'beta-banner', enabled: true },
        { name: 'new-checkout', enabled: true },
      ]);
      for (let i = 0; i < 10; i++) {
        assert.deepEqual(await frontend(DEV_FRONTEND, `w${i}`), ['beta-banner', 'new-checkout']);
      }
      assert.equal(compileWarnings('development'), 2);
      assert.equal(compileWarnings('production'), 1);
    });
  });
}
