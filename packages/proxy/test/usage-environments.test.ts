import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ProxyOptions } from '@flags/proxy';
import { bulkMetricsSchema, type ClientFeatures } from '@flags/schemas';
import { Ajv } from 'ajv';
import { smallPayload } from './fixtures/small.js';
import { type Answer, call, type Running, startProxy, waitFor } from './helpers/proxy.js';
import {
  add,
  addReceived,
  type Expected,
  plain,
  received,
  receivedBulk,
} from './helpers/usage-counts.js';

const DEV_CLIENT = '*:development.client-dev-5f0c7e1a9b3d4c2e8f6a0b1c';
const PROD_CLIENT = '*:production.client-prod-1b2c3d4e5f6a7b8c9d0e1f2a';
const DEV_FRONTEND = '*:development.frontend-dev-9a8b7c6d5e4f3a2b1c0d';
const PROD_FRONTEND = '*:production.frontend-prod-0d1c2b3a4f5e6d7c8b9a';
const ENVIRONMENTS = {
  development: { client: DEV_CLIENT, frontend: DEV_FRONTEND },
  production: { client: PROD_CLIENT, frontend: PROD_FRONTEND },
} as const;
type EnvironmentName = keyof typeof ENVIRONMENTS;

/** Production's flags differ from development's: its counts cannot be development's by accident. */
const prodPayload: ClientFeatures = {
  version: 2,
  features: [
    ...smallPayload.features.slice(0, 4).map((feature) => ({
      ...feature,
      enabled: !feature.enabled,
    })),
    { name: 'prod-only', enabled: true, strategies: [{ name: 'default' }] },
  ],
};

const BUCKET = { start: '2026-11-22T00:00:00.000Z', stop: '2026-11-22T00:01:00.000Z' };
const JSON_TYPE = { 'content-type': 'application/json' };
// Dates are ISO strings the proxy makes; the shape is what is checked.
const validBulk = new Ajv({
  strict: false,
  allowUnionTypes: true,
  formats: { 'date-time': true },
}).compile(bulkMetricsSchema);

/** A proxy serving development and production (a client token each), usage metrics on. */
async function startTwo(options: ProxyOptions = {}): Promise<Running> {
  const run = await startProxy(
    smallPayload,
    { flagsApiToken: [DEV_CLIENT, PROD_CLIENT], metricsInterval: 3_600_000, ...options },
    {
      upstream: (upstream) => {
        upstream.serveToken(PROD_CLIENT, prodPayload);
        for (const [environment, tokens] of Object.entries(ENVIRONMENTS))
          upstream.knownTokens.set(tokens.frontend, {
            type: 'frontend',
            environment,
            projects: ['*'],
          });
      },
    },
  );
  await waitFor(() => run.proxy.environments.ready);
  return run;
}

/** `GET /api/frontend` with the environment's frontend token; records every flag's evaluation. */
async function evaluate(
  run: Running,
  environment: EnvironmentName,
  expected: Expected,
  userId: string,
): Promise<void> {
  const answer = await call(run, 'GET', `/api/frontend?userId=${userId}`, {
    headers: { authorization: ENVIRONMENTS[environment].frontend },
  });
  assert.equal(answer.status, 200);
  const enabled = new Map<string, string | undefined>(
    answer
      .json()
      .toggles.map((t: { name: string; variant: { enabled: boolean; name: string } }) => [
        t.name,
        t.variant.enabled ? t.variant.name : undefined,
      ]),
  );
  const names = run.proxy.environments.get(environment)?.state.current?.snapshot.names ?? [];
  assert.ok(names.length > 0);
  for (const name of names)
    add(expected, 'flags-proxy', name, enabled.has(name), enabled.get(name));
}

/** An SDK's metrics report: a frontend SDK's to `/api/frontend`, a backend SDK's to `/api/client`. */
async function report(
  run: Running,
  path: '/api/frontend/client/metrics' | '/api/client/metrics',
  token: string,
  body: Record<string, unknown>,
): Promise<Answer> {
  return call(run, 'POST', path, {
    headers: { authorization: token, ...JSON_TYPE },
    body: JSON.stringify(body),
  });
}

/** Reports `toggles` as `app` and records them. */
async function reportCounts(
  run: Running,
  environment: EnvironmentName,
  expected: Expected,
  app: string,
  toggles: Record<string, { yes: number; no: number; variants?: Record<string, number> }>,
  kind: 'frontend' | 'client' = 'frontend',
): Promise<void> {
  const answer = await report(
    run,
    kind === 'frontend' ? '/api/frontend/client/metrics' : '/api/client/metrics',
    ENVIRONMENTS[environment][kind],
    // The frontend SDK says `default` unless told otherwise: the token's environment wins.
    { appName: app, instanceId: 'browser', environment: 'default', bucket: { ...BUCKET, toggles } },
  );
  assert.equal(answer.status, 202);
  for (const [name, counts] of Object.entries(toggles))
    addReceived(expected, app, name, { ...counts, variants: counts.variants ?? {} });
}

/** The bulk bodies each environment's token sent, checked against the schema. */
// biome-ignore lint/suspicious/noExplicitAny: bulk bodies are checked by the assertions
function bulkOf(run: Running, environment: EnvironmentName): any[] {
  const token = ENVIRONMENTS[environment].client;
  const bodies = run.upstream
    .acceptedBulk()
    .filter((post) => post.token === token)
    .map((post) => post.body);
  for (const body of bodies) assert.ok(validBulk(body), JSON.stringify(validBulk.errors));
  return bodies;
}

/** The per-application bodies (`/client/metrics`) each environment's token sent. */
// biome-ignore lint/suspicious/noExplicitAny: report bodies are checked by the assertions
function appReportsOf(run: Running, environment: EnvironmentName): any[] {
  return run.upstream.requests
    .filter(
      (request) =>
        request.path === '/api/client/metrics' &&
        request.status < 300 &&
        request.headers.authorization === ENVIRONMENTS[environment].client,
    )
    .map((request) => JSON.parse(request.body));
}

function bulkPosts(run: Running): number {
  return run.upstream.requests.filter((request) => request.path === '/api/client/metrics/bulk')
    .length;
}

describe('usage metrics per environment', () => {
  it('counts each environment apart and sends it in bulk with a client token of that environment', async () => {
    const run = await startTwo();
    try {
      const expected: Record<EnvironmentName, Expected> = {
        development: new Map(),
        production: new Map(),
      };
      for (const environment of ['development', 'production'] as const) {
        for (const userId of ['123', '7'])
          await evaluate(run, environment, expected[environment], userId);
      }
      await reportCounts(run, 'development', expected.development, 'web', {
        'simple-on': { yes: 5, no: 2, variants: { blue: 3 } },
      });
      await reportCounts(run, 'production', expected.production, 'web', {
        'prod-only': { yes: 1, no: 9 },
      });
      await reportCounts(
        run,
        'production',
        expected.production,
        'checkout-service',
        { 'simple-off': { yes: 0, no: 4 } },
        'client',
      );

      await run.proxy.reporter.flush();
      for (const environment of ['development', 'production'] as const) {
        const bodies = bulkOf(run, environment);
        assert.equal(bodies.length, 1, `one bulk body for ${environment}`);
        const [body] = bodies;
        assert.deepEqual(plain(receivedBulk(bodies)), plain(expected[environment]));
        assert.ok(
          body.metrics.every(
            (metric: { environment: string }) => metric.environment === environment,
          ),
        );
        assert.deepEqual(
          body.applications.map((app: { appName: string }) => app.appName).sort(),
          [...expected[environment].keys()].sort(),
        );
        for (const application of body.applications) {
          assert.equal(application.environment, environment);
          assert.equal(application.instanceId, run.proxy.config.flagsInstanceId);
        }
      }
      assert.equal(
        appReportsOf(run, 'development').length + appReportsOf(run, 'production').length,
        0,
      );
      const post = run.upstream.requests.find((r) => r.path === '/api/client/metrics/bulk');
      assert.equal(post?.headers['content-type'], 'application/json');

      await run.proxy.reporter.flush();
      assert.equal(run.upstream.acceptedBulk().length, 2, 'nothing left to send');
    } finally {
      await run.close();
    }
  });

  it('falls back to per-application /client/metrics when the upstream answers 404 to /bulk, and remembers it', async () => {
    const run = await startTwo();
    try {
      run.upstream.pathStatus.set('/api/client/metrics/bulk', 404);
      const expected: Record<EnvironmentName, Expected> = {
        development: new Map(),
        production: new Map(),
      };
      await evaluate(run, 'development', expected.development, '1');
      await evaluate(run, 'production', expected.production, '2');
      await reportCounts(run, 'production', expected.production, 'web', {
        'prod-only': { yes: 3, no: 0 },
      });
      await run.proxy.reporter.flush();
      const triedBulk = bulkPosts(run);
      assert.ok(triedBulk >= 1 && triedBulk <= 2, 'each environment tried /bulk at most once');

      await evaluate(run, 'development', expected.development, '3');
      await run.proxy.reporter.flush();
      assert.equal(bulkPosts(run), triedBulk, 'the 404 is remembered');
      for (const environment of ['development', 'production'] as const) {
        const reports = appReportsOf(run, environment);
        assert.ok(reports.length > 0);
        assert.deepEqual(plain(received(reports)), plain(expected[environment]));
        for (const body of reports) assert.equal(body.environment, environment);
      }
    } finally {
      await run.close();
    }
  });

  it('merges a refused bulk send back and sends it once with the next one', async () => {
    const run = await startTwo();
    try {
      const expected: Expected = new Map();
      await evaluate(run, 'development', expected, '1');
      await reportCounts(run, 'development', expected, 'web', { 'simple-on': { yes: 2, no: 1 } });
      run.upstream.pathStatus.set('/api/client/metrics/bulk', 500);
      await run.proxy.reporter.flush();
      assert.equal(bulkPosts(run), 1);
      assert.equal(run.upstream.acceptedBulk().length, 0);

      await evaluate(run, 'development', expected, '2');
      run.upstream.pathStatus.delete('/api/client/metrics/bulk');
      await run.proxy.reporter.flush();
      const bodies = bulkOf(run, 'development');
      assert.equal(bodies.length, 1);
      assert.deepEqual(plain(receivedBulk(bodies)), plain(expected), 'nothing lost, nothing twice');
      await run.proxy.reporter.flush();
      assert.equal(run.upstream.acceptedBulk().length, 1);
      assert.equal(appReportsOf(run, 'development').length, 0, 'a 500 is not a missing /bulk');
    } finally {
      await run.close();
    }
  });

  it('cuts bulk bodies under 95 KiB, with every count in exactly one of them', async () => {
    const run = await startTwo();
    try {
      const expected: Expected = new Map();
      for (let app = 0; app < 60; app++) {
        const toggles: Record<
          string,
          { yes: number; no: number; variants: Record<string, number> }
        > = {};
        for (let flag = 0; flag < 50; flag++)
          toggles[`feature-flag-with-a-longish-name-${flag}`] = {
            yes: app + flag + 1,
            no: app,
            variants: { [`variant-${flag % 3}`]: 1 },
          };
        await reportCounts(
          run,
          'development',
          expected,
          `application-number-${app}`,
          toggles,
          'client',
        );
      }
      await run.proxy.reporter.flush();
      const posts = run.upstream.acceptedBulk();
      assert.ok(posts.length > 2, `several bodies (${posts.length})`);
      for (const post of posts) assert.ok(post.bytes < 95 * 1024, `${post.bytes} bytes`);
      assert.deepEqual(plain(receivedBulk(bulkOf(run, 'development'))), plain(expected));
    } finally {
      await run.close();
    }
  });

  it('forwards the impact metrics of frontend SDK reports, merged', async () => {
    const run = await startTwo();
    try {
      const labels = { appName: 'web', environment: 'development', featureName: 'simple-on' };
      const impactMetrics = (value: number) => [
        {
          name: 'checkouts',
          help: 'Checkouts done',
          type: 'counter',
          samples: [{ labels, value }],
        },
        {
          name: 'cart_items',
          help: 'Items in the cart',
          type: 'gauge',
          samples: [{ labels, value }],
        },
        {
          name: 'page_load',
          help: 'Page load seconds',
          type: 'histogram',
          samples: [
            {
              labels,
              count: 2,
              sum: value,
              buckets: [
                { le: 0.5, count: 1 },
                { le: '+Inf', count: 2 },
              ],
            },
          ],
        },
      ];
      for (const value of [3, 4]) {
        const answer = await report(run, '/api/frontend/client/metrics', DEV_FRONTEND, {
          appName: 'web',
          bucket: { ...BUCKET, toggles: {} },
          impactMetrics: impactMetrics(value),
        });
        assert.equal(answer.status, 202);
      }
      const broken = await report(run, '/api/frontend/client/metrics', DEV_FRONTEND, {
        appName: 'web',
        bucket: { ...BUCKET, toggles: {} },
        impactMetrics: [{ name: 'x', type: 'histogram', samples: [{ labels, value: 1 }] }],
      });
      assert.equal(broken.status, 400);
      assert.equal(broken.json().name, 'BadDataError');

      await run.proxy.reporter.flush();
      const [body] = bulkOf(run, 'development');
      const byName = Object.fromEntries(
        body.impactMetrics.map((metric: { name: string }) => [metric.name, metric]),
      );
      assert.deepEqual(byName.checkouts, {
        name: 'checkouts',
        help: 'Checkouts done',
        type: 'counter',
        samples: [{ labels, value: 7 }],
      });
      assert.deepEqual(
        byName.cart_items.samples,
        [{ labels, value: 4 }],
        'a gauge keeps the last value',
      );
      assert.deepEqual(byName.page_load.samples, [
        {
          labels,
          count: 4,
          sum: 7,
          buckets: [
            { le: 0.5, count: 2 },
            { le: '+Inf', count: 4 },
          ],
        },
      ]);
      assert.equal(bulkOf(run, 'production').length, 0, 'nothing from development in production');
    } finally {
      await run.close();
    }
  });

  it('accepts a downstream Edge’s bulk body on /api/client/metrics/bulk and forwards it with the next report', async () => {
    const run = await startTwo();
    try {
      const timestamp = '2026-11-22T00:00:30.000Z';
      const downstream = {
        applications: [
          {
            appName: 'checkout-service',
            instanceId: 'pod-7',
            environment: 'production',
            sdkVersion: 'unleash-node-sdk:6.12.1',
            strategies: ['default'],
            started: timestamp,
            interval: 15000,
            connectVia: [{ appName: 'unleash-edge', instanceId: 'edge-1' }],
          },
        ],
        metrics: [
          {
            featureName: 'prod-only',
            appName: 'checkout-service',
            environment: 'production',
            timestamp,
            yes: 5,
            no: 1,
            variants: {},
          },
          {
            featureName: 'simple-on',
            appName: 'checkout-service',
            environment: 'production',
            timestamp,
            yes: 2,
            no: 0,
            variants: { blue: 2 },
          },
          // Another environment's entry: the upstream would skip it for this token, so do we.
          {
            featureName: 'simple-on',
            appName: 'checkout-service',
            environment: 'development',
            timestamp,
            yes: 7,
            no: 0,
          },
        ],
        impactMetrics: [
          { name: 'orders', help: 'Orders placed', type: 'counter', samples: [{ value: 11 }] },
        ],
      };
      const post = (token: string | undefined, body: unknown) =>
        call(run, 'POST', '/api/client/metrics/bulk', {
          headers: { ...(token === undefined ? {} : { authorization: token }), ...JSON_TYPE },
          body: JSON.stringify(body),
        });
      const accepted = await post(PROD_CLIENT, downstream);
      assert.equal(accepted.status, 202);
      assert.equal(accepted.text, '');
      assert.equal((await post(undefined, downstream)).status, 401);
      assert.equal((await post(PROD_FRONTEND, downstream)).status, 403);
      const bad = await post(PROD_CLIENT, { applications: [], metrics: [{ featureName: 'x' }] });
      assert.equal(bad.status, 400);
      assert.equal(bad.json().name, 'BadDataError');

      await run.proxy.reporter.flush();
      assert.equal(bulkOf(run, 'development').length, 0);
      const [body] = bulkOf(run, 'production');
      const expected: Expected = new Map();
      add(expected, 'checkout-service', 'prod-only', true, undefined, 5);
      add(expected, 'checkout-service', 'prod-only', false);
      add(expected, 'checkout-service', 'simple-on', true, 'blue', 2);
      assert.deepEqual(plain(receivedBulk([body])), plain(expected));
      const via = { appName: 'flags-proxy', instanceId: run.proxy.config.flagsInstanceId };
      assert.deepEqual(
        body.applications.find((app: { instanceId: string }) => app.instanceId === 'pod-7'),
        {
          ...downstream.applications[0],
          connectVia: [downstream.applications[0]?.connectVia[0], via],
        },
      );
      assert.deepEqual(body.impactMetrics, downstream.impactMetrics);
    } finally {
      await run.close();
    }
  });

  it('forwards a client token’s SDK registration with that token', async () => {
    const run = await startTwo();
    try {
      const answer = await call(run, 'POST', '/api/client/register', {
        headers: { authorization: PROD_CLIENT, ...JSON_TYPE },
        body: JSON.stringify({ appName: 'checkout-service', instanceId: 'pod-7', strategies: [] }),
      });
      assert.equal(answer.status, 202);
      await waitFor(() =>
        run.upstream.registrations().some((body) => body.appName === 'checkout-service'),
      );
      const forwarded = run.upstream.requests.find(
        (request) =>
          request.path === '/api/client/register' && request.body.includes('checkout-service'),
      );
      assert.equal(forwarded?.headers.authorization, PROD_CLIENT);
    } finally {
      await run.close();
    }
  });
});
