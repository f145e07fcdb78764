import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { after, before, describe, it } from 'node:test';
import { createProxy, type ProxyApp, type ProxyOptions, type StorageProvider } from '@flags/proxy';
import type { ClientFeatures } from '@flags/schemas';
import { anonymizeToken, edgeAnonymizedToken } from '../src/auth/unleash-token.js';
import { EdgeUpstream, type EnvironmentPayload, onFeature } from './helpers/edge-upstream.js';
import { type Answer, waitFor } from './helpers/proxy.js';
import { RecordingLogger } from './helpers/recording-logger.js';

const SECRET = 'b'.repeat(32);
const DEV_CLIENT = `*:development.dev-client-${SECRET}`;
const PROD_CLIENT = `*:production.prod-client-${SECRET}`;
const DEV_FRONTEND = `*:development.dev-frontend-${SECRET}`;
const BILLING_FRONTEND = `billing:production.billing-frontend-${SECRET}`;
const STAGING_CLIENT = `*:staging.staging-client-${SECRET}`;
const MADE_UP = `*:development.made-up-${SECRET}`;

const PAYLOADS: ReadonlyArray<readonly [string, EnvironmentPayload]> = [
  ['development', { version: 2, features: [onFeature('dev-a'), onFeature('dev-b')] }],
  [
    'production',
    {
      version: 2,
      features: [onFeature('prod-a'), onFeature('prod-b'), onFeature('prod-c', 'billing')],
    },
  ],
  ['staging', { version: 2, features: [onFeature('staging-a')] }],
];

/** An upstream that knows every token above but `withheld` (its feature requests get 401). */
function edgeUpstream(): EdgeUpstream {
  const upstream = new EdgeUpstream(new Map(PAYLOADS));
  const known = [
    [DEV_CLIENT, 'client', 'development', ['*']],
    [PROD_CLIENT, 'client', 'production', ['*']],
    [DEV_FRONTEND, 'frontend', 'development', ['*']],
    [BILLING_FRONTEND, 'frontend', 'production', ['billing']],
    [STAGING_CLIENT, 'client', 'staging', ['*']],
  ] as const;
  for (const [token, type, environment, projects] of known)
    upstream.tokens.set(token, { type, environment, projects });
  return upstream;
}

interface Started {
  readonly upstream: EdgeUpstream;
  readonly proxy: ProxyApp;
  get(path: string, token?: string): Promise<Pick<Answer, 'status' | 'text' | 'json'>>;
  close(): Promise<void>;
}

async function start(upstream: EdgeUpstream, options: ProxyOptions = {}): Promise<Started> {
  await upstream.start();
  const proxy = await createProxy({
    flagsUrl: upstream.url,
    flagsApiToken: [DEV_CLIENT, PROD_CLIENT],
    refreshInterval: 50,
    metricsInterval: 0,
    logger: new RecordingLogger(),
    ...options,
  });
  return {
    upstream,
    proxy,
    async get(path, token) {
      const response = await proxy.app.inject({
        method: 'GET',
        url: path,
        headers: token === undefined ? {} : { authorization: token },
      });
      return {
        status: response.statusCode,
        text: response.payload,
        json: () => JSON.parse(response.payload),
      };
    },
    async close() {
      await proxy.app.close();
      await upstream.stop();
    },
  };
}

interface Family {
  readonly name: string;
  readonly type: string;
  readonly metrics: Array<{ value?: string; labels?: Record<string, string> }>;
}

// A third-party parser of the text exposition format (not prom-client, which wrote it).
const parse = createRequire(import.meta.url)('parse-prometheus-text-format') as (
  text: string,
) => Family[];

/** The samples of `name` by the value of `label`. */
function samples(families: Family[], name: string, label: string): Record<string, number> {
  const found = families.find((family) => family.name === name);
  assert.ok(found, `${name} is exposed`);
  return Object.fromEntries(
    found.metrics.map((sample) => [sample.labels?.[label] ?? '', Number(sample.value)]),
  );
}

describe('operations endpoints (/internal-backstage)', () => {
  it('health answers at once; ready names the startup environments without a snapshot until each has one', async () => {
    const upstream = edgeUpstream();
    upstream.failing = true;
    // Production's feed keeps failing (not refused: a refused token would not hold readiness).
    upstream.failingFor.add(PROD_CLIENT);
    const run = await start(upstream);
    try {
      const health = await run.get('/internal-backstage/health');
      assert.equal(health.status, 200);
      assert.deepEqual(health.json(), { status: 'OK' });
      const none = await run.get('/internal-backstage/ready');
      assert.equal(none.status, 503);
      assert.equal(none.json().status, 'NOTREADY');
      assert.match(none.json().error, /"development", "production"/);
      // Edge's metrics path answers before the first sync too, and says what is missing.
      const early = parse((await run.get('/internal-backstage/metrics')).text);
      assert.deepEqual(samples(early, 'flags_proxy_environment_ready', 'environment'), {
        development: 0,
        production: 0,
      });
      assert.equal((await run.get('/proxy/internal-backstage/prometheus')).status, 503);

      upstream.failing = false;
      await waitFor(() => run.proxy.environments.get('development')?.state.ready === true);
      const half = await run.get('/internal-backstage/ready');
      assert.equal(half.status, 503);
      assert.match(half.json().error, /environment "production"$/);
      const proxyHealth = await run.get('/proxy/health');
      assert.equal(proxyHealth.status, 503, '/proxy/health keeps waiting for every environment');
      assert.equal(proxyHealth.text, 'Not Ready');

      upstream.failingFor.delete(PROD_CLIENT);
      await waitFor(async () => (await run.get('/internal-backstage/ready')).status === 200);
      assert.deepEqual((await run.get('/internal-backstage/ready')).json(), { status: 'READY' });
      assert.equal((await run.get('/proxy/health')).text, 'ok');
      assert.deepEqual((await run.get('/internal-backstage/health')).json(), { status: 'OK' });
    } finally {
      await run.close();
    }
  });

  it('is ready from the backup while the upstream is down, under proxyBasePath', async () => {
    const saved = new Map<string, ClientFeatures>(
      PAYLOADS.map(([environment, payload]) => [
        `flags-proxy-backup-flags-proxy-${environment}`,
        payload as ClientFeatures,
      ]),
    );
    const storage: StorageProvider = {
      get: async (key) => saved.get(key),
      set: async (key, value) => void saved.set(key, value),
    };
    const upstream = edgeUpstream();
    upstream.failing = true;
    const run = await start(upstream, { storageProvider: storage, proxyBasePath: 'edge' });
    try {
      await waitFor(async () => (await run.get('/edge/internal-backstage/ready')).status === 200);
      assert.equal(
        upstream.featureRequests().filter((request) => request.status === 200).length,
        0,
        'nothing came from the upstream',
      );
      assert.deepEqual((await run.get('/edge/internal-backstage/health')).json(), {
        status: 'OK',
      });
      assert.equal((await run.get('/internal-backstage/health')).status, 404);
    } finally {
      await run.close();
    }
  });

  describe('once synced', () => {
    let run: Started;
    before(async () => {
      run = await start(edgeUpstream());
      await waitFor(() => run.proxy.environments.ready);
      // A validated frontend token, a refused one, and a client token that brings in staging.
      assert.equal((await run.get('/api/frontend', DEV_FRONTEND)).status, 200);
      assert.equal((await run.get('/api/frontend', BILLING_FRONTEND)).status, 200);
      assert.equal((await run.get('/api/frontend', MADE_UP)).status, 403);
      await waitFor(
        async () => (await run.get('/api/client/features', STAGING_CLIENT)).status === 200,
      );
    });
    after(() => run.close());

    it('lists the tokens in Edge’s shape: the sync tokens per feed, the validated ones, refusals counted', async () => {
      const answer = await run.get('/internal-backstage/tokens');
      assert.equal(answer.status, 200);
      const body = answer.json();
      const refreshes = body.tokenRefreshes as Array<{
        token: { token: string; environment: string; projects: string[] };
        last_refreshed: string;
        last_check: string;
        last_feature_count: number;
      }>;
      assert.deepEqual(
        refreshes.map(({ token }) => [token.environment, token.token, token.projects]),
        [
          ['development', edgeAnonymizedToken(DEV_CLIENT), ['*']],
          ['production', edgeAnonymizedToken(PROD_CLIENT), ['*']],
          ['staging', edgeAnonymizedToken(STAGING_CLIENT), ['*']],
        ],
      );
      const production = refreshes[1];
      assert.ok(production);
      assert.equal(production.last_feature_count, 3);
      const state = run.proxy.environments.get('production')?.state;
      assert.equal(production.last_refreshed, new Date(state?.lastUpdateMs ?? 0).toISOString());
      assert.ok(Date.parse(production.last_check) >= Date.parse(production.last_refreshed));

      const validated = Object.fromEntries(
        body.tokenValidationStatus.map((t: { token: string }) => [t.token, t]),
      );
      assert.deepEqual(validated[edgeAnonymizedToken(BILLING_FRONTEND)], {
        token: edgeAnonymizedToken(BILLING_FRONTEND),
        type: 'frontend',
        environment: 'production',
        projects: ['billing'],
        status: 'Validated',
      });
      assert.equal(validated[edgeAnonymizedToken(DEV_FRONTEND)].type, 'frontend');
      assert.equal(validated[edgeAnonymizedToken(STAGING_CLIENT)].environment, 'staging');
      assert.equal(validated[edgeAnonymizedToken(STAGING_CLIENT)].type, 'backend');
      assert.equal(body.tokenValidationStatus.length, 3, 'refused tokens are not listed');
      assert.equal(body.invalidTokenCount, 1);

      for (const token of [
        DEV_CLIENT,
        PROD_CLIENT,
        DEV_FRONTEND,
        BILLING_FRONTEND,
        STAGING_CLIENT,
        MADE_UP,
      ]) {
        const secret = token.slice(token.indexOf('.') + 1);
        assert.ok(!answer.text.includes(secret), `no full secret of ${anonymizeToken(token)}`);
      }
      assert.match(answer.text, /"billing:production\./, 'project and environment stay readable');
    });

    it('serves Prometheus at Edge’s path too, with gauges per environment and token counts', async () => {
      const requestedAt = Date.now();
      const edge = await run.get('/internal-backstage/metrics');
      assert.equal(edge.status, 200);
      const scrapedAt = Date.now();
      const families = parse(edge.text);
      assert.ok(
        families.some((family) => family.name === 'last_metrics_update_epoch_timestamp_ms'),
        'the proxy document’s names stay',
      );
      const environments = ['development', 'production', 'staging'];
      const byEnvironment = (name: string) => samples(families, name, 'environment');
      assert.deepEqual(byEnvironment('flags_proxy_environment_flags'), {
        development: 2,
        production: 3,
        staging: 1,
      });
      assert.deepEqual(byEnvironment('flags_proxy_environment_ready'), {
        development: 1,
        production: 1,
        staging: 1,
      });
      const updates = byEnvironment('flags_proxy_environment_last_update_timestamp_seconds');
      const checks = byEnvironment('flags_proxy_environment_last_check_timestamp_seconds');
      const ages = byEnvironment('flags_proxy_environment_revision_age_seconds');
      for (const name of environments) {
        const environment = run.proxy.environments.get(name);
        assert.ok(environment);
        assert.equal(updates[name], environment.state.lastUpdateMs / 1000, name);
        assert.ok((checks[name] as number) >= (updates[name] as number), name);
        // The age is taken during the scrape: between the two readings of the clock around it.
        const ageMs = Math.round((ages[name] as number) * 1000);
        const lastUpdateMs = environment.state.lastUpdateMs;
        assert.ok(ageMs >= requestedAt - lastUpdateMs && ageMs <= scrapedAt - lastUpdateMs, name);
      }
      const validator = run.proxy.validator;
      assert.ok(validator);
      assert.deepEqual(samples(families, 'flags_proxy_tokens', 'status'), {
        valid: 3,
        invalid: 1,
        pending: 0,
      });
      const calls = families.find(
        (family) => family.name === 'flags_proxy_token_validation_calls_total',
      );
      assert.equal(calls?.type, 'COUNTER');
      assert.ok(Number(calls?.metrics[0]?.value) >= 1);
      assert.ok(Number(calls?.metrics[0]?.value) <= validator.calls);

      const proxyPath = await run.get('/proxy/internal-backstage/prometheus');
      assert.equal(proxyPath.status, 200);
      assert.ok(proxyPath.text.includes('flags_proxy_environment_flags{environment="staging"} 1'));
    });
  });

  it('answers 404 at /internal-backstage/tokens with enableTokensEndpoint off', async () => {
    const run = await start(edgeUpstream(), { enableTokensEndpoint: false });
    try {
      await waitFor(() => run.proxy.environments.ready);
      const answer = await run.get('/internal-backstage/tokens');
      assert.equal(answer.status, 404);
      assert.equal(answer.json().name, 'NotFoundError');
      assert.equal((await run.get('/internal-backstage/ready')).status, 200);
    } finally {
      await run.close();
    }
  });
});
