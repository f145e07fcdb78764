import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  createProxy,
  loadConfig,
  type ProxyApp,
  type ProxyMode,
  type ProxyOptions,
} from '@flags/proxy';
import { edgeInstanceDataSchema } from '@flags/schemas';
import { Ajv } from 'ajv';
import { edgeAnonymizedToken } from '../src/auth/unleash-token.js';
import { createUpstreamClient } from '../src/sync/http-client.js';
import { InstanceData } from '../src/usage/instance-data.js';
import { InstanceDataSender } from '../src/usage/instance-data-sender.js';
import { EdgeUpstream, type EnvironmentPayload, onFeature } from './helpers/edge-upstream.js';
import { waitFor } from './helpers/proxy.js';
import { RecordingLogger } from './helpers/recording-logger.js';

// Each shape below is Unleash Edge 20.4's, read from its source (tag unleash-edge-v20.4.1):
// - /internal-backstage/{features,metricsbatch,instancedata,tokens}: crates/oss/unleash-edge-backstage/src/lib.rs
//   (`features`: HashMap<String, ClientFeatures>; `metrics_batch`: MetricsInfo; `instance_data`:
//   DebugEdgeInstanceData; `tokens`: TokenInfo), the types in crates/oss/unleash-edge-types/src/lib.rs
//   (MetricsInfo, ClientMetric, MetricsKey, TokenInfo, TokenRefresh) and tokens.rs (EdgeToken,
//   anonymize_token);
// - instance data: crates/oss/unleash-edge-types/src/metrics/instance_data.rs (EdgeInstanceData);
// - POST /api/client/features: crates/oss/unleash-edge-client-api/src/features.rs (`post_features`);
// - POST /api/client/metrics/edge: crates/oss/unleash-edge-client-api/src/metrics.rs;
// - the upstream send: crates/oss/unleash-edge-http-client/src/instance_data.rs and lib.rs
//   (`post_edge_observability_data`, `edge_instance_data_url` in unleash-edge-types/src/urls.rs).

const SECRET = 'c'.repeat(40);
const DEV_CLIENT = `*:development.${SECRET}`;
const PROD_CLIENT = `*:production.${SECRET}`;
const DEV_FRONTEND = `*:development.frontend${SECRET}`;

const PAYLOADS: ReadonlyArray<readonly [string, EnvironmentPayload]> = [
  ['development', { version: 2, features: [onFeature('dev-a'), onFeature('dev-b')] }],
  ['production', { version: 2, features: [onFeature('prod-a')] }],
];

function edgeUpstream(): EdgeUpstream {
  const upstream = new EdgeUpstream(new Map(PAYLOADS));
  upstream.tokens.set(DEV_CLIENT, { type: 'client', environment: 'development', projects: ['*'] });
  upstream.tokens.set(PROD_CLIENT, { type: 'client', environment: 'production', projects: ['*'] });
  upstream.tokens.set(DEV_FRONTEND, {
    type: 'frontend',
    environment: 'development',
    projects: ['*'],
  });
  return upstream;
}

const ajv = new Ajv({ allowUnionTypes: true, strict: false });
const validInstanceData = ajv.compile(edgeInstanceDataSchema);

/** An Edge instance's data as Edge 20 serializes it (`EdgeInstanceData::new` plus one observed request). */
function edgeInstance(identifier: string, connectedEdges: unknown[] = []) {
  return {
    identifier,
    appName: 'downstream-edge',
    hosting: 'self-hosted',
    region: null,
    edgeVersion: '20.4.1',
    processMetrics: { cpuUsage: 3, memoryUsage: 12_000_000 },
    started: '2026-11-27T10:00:00Z',
    traffic: {
      cachedResponses: {},
      get: { '/api/client/features': { avg: 1.5, count: 10, p99: 4 } },
      post: {},
      accessDenied: {},
    },
    latencyUpstream: {
      features: { avg: 0, count: 0, p99: 0 },
      metrics: { avg: 0, count: 0, p99: 0 },
      edge: { avg: 0, count: 0, p99: 0 },
    },
    requestsSinceLastReport: { '/api/client/features': { requests200: 10, requests304: 2 } },
    connectedStreamingClients: 0,
    connectedEdges,
    connectionConsumptionSinceLastReport: {
      features: [{ meteredGroup: 'default', dataPoints: [{ interval: [0, 15000], requests: 10 }] }],
      metrics: [{ meteredGroup: 'default', dataPoints: [] }],
    },
    requestConsumptionSinceLastReport: [{ meteredGroup: 'default', requests: 12 }],
    edgeApiKeyRevisionIds: [
      {
        environment: 'development',
        projects: ['*'],
        revisionId: 7,
        lastUpdated: '2026-11-27T10:00:00Z',
      },
    ],
  };
}

interface Started {
  readonly upstream: EdgeUpstream;
  readonly proxy: ProxyApp;
  request(
    method: 'GET' | 'POST',
    path: string,
    token?: string,
    body?: string,
    type?: string,
    // biome-ignore lint/suspicious/noExplicitAny: answers are read field by field, as JSON
  ): Promise<{ status: number; text: string; json: () => any }>;
  close(): Promise<void>;
}

/** A proxy in edge mode (Unleash Edge's defaults) unless `mode` says otherwise. */
async function start(
  options: ProxyOptions = {},
  env: Record<string, string> = {},
  mode: ProxyMode = 'edge',
): Promise<Started> {
  const upstream = edgeUpstream();
  await upstream.start();
  const proxy = await createProxy(
    {
      flagsUrl: upstream.url,
      flagsApiToken: [DEV_CLIENT, PROD_CLIENT],
      refreshInterval: 50,
      // Usage is kept (no scheduled send in a test's time); the reporter is flushed by hand.
      metricsInterval: 600_000,
      logger: new RecordingLogger(),
      ...options,
    },
    env,
    mode,
  );
  await waitFor(() => proxy.environments.ready);
  return {
    upstream,
    proxy,
    async request(method, path, token, body, type = 'application/json') {
      const headers: Record<string, string> = {};
      if (token !== undefined) headers.authorization = token;
      if (body !== undefined) headers['content-type'] = type;
      const response = await proxy.app.inject({ method, url: path, headers, payload: body });
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

describe('Unleash Edge 20 endpoints', () => {
  let run: Started;
  before(async () => {
    run = await start();
  });
  after(() => run.close());

  it('GET /internal-backstage/features: each environment’s payload by name, without a key', async () => {
    const answer = await run.request('GET', '/internal-backstage/features');
    assert.equal(answer.status, 200);
    const body = answer.json();
    assert.deepEqual(Object.keys(body).sort(), ['development', 'production']);
    assert.equal(body.development.version, 2);
    assert.deepEqual(
      body.development.features.map((feature: { name: string }) => feature.name),
      ['dev-a', 'dev-b'],
    );
    assert.deepEqual(body.production.features[0].strategies, [{ name: 'default', parameters: {} }]);
  });

  it('POST /api/client/features answers as GET does (query filters, body ignored), client tokens only', async () => {
    const get = await run.request('GET', '/api/client/features', DEV_CLIENT);
    const post = await run.request(
      'POST',
      '/api/client/features',
      DEV_CLIENT,
      '{"context":{"userId":"ignored"}}',
    );
    assert.equal(post.status, 200);
    assert.equal(post.text, get.text);
    const prefixed = await run.request(
      'POST',
      '/api/client/features?namePrefix=dev-b',
      DEV_CLIENT,
      '{}',
    );
    assert.deepEqual(
      prefixed.json().features.map((feature: { name: string }) => feature.name),
      ['dev-b'],
    );
    const empty = await run.request('POST', '/api/client/features', PROD_CLIENT);
    assert.deepEqual(
      empty.json().features.map((feature: { name: string }) => feature.name),
      ['prod-a'],
      'no body at all is fine too',
    );
    assert.equal(
      (await run.request('POST', '/api/client/features', DEV_FRONTEND, '{}')).status,
      403,
    );
    assert.equal((await run.request('POST', '/api/client/features', undefined, '{}')).status, 401);
    const broken = await run.request('POST', '/api/client/features', DEV_CLIENT, '{"context":');
    assert.equal(broken.status, 400);
    assert.equal(typeof broken.json().message, 'string');
  });

  it('POST /api/{frontend,proxy}/all/client/{register,metrics} answer 202 with a frontend token', async () => {
    const registration = JSON.stringify({ appName: 'web', instanceId: 'browser' });
    const report = JSON.stringify({
      appName: 'web',
      instanceId: 'browser',
      bucket: {
        start: new Date().toISOString(),
        stop: new Date().toISOString(),
        toggles: { 'dev-a': { yes: 2, no: 1, variants: {} } },
      },
    });
    for (const mount of ['/api/frontend/all', '/api/proxy/all']) {
      const registered = await run.request(
        'POST',
        `${mount}/client/register`,
        DEV_FRONTEND,
        registration,
      );
      assert.equal(registered.status, 202, `${mount}/client/register`);
      const reported = await run.request('POST', `${mount}/client/metrics`, DEV_FRONTEND, report);
      assert.equal(reported.status, 202, `${mount}/client/metrics`);
      const bad = await run.request(
        'POST',
        `${mount}/client/register`,
        DEV_FRONTEND,
        '{"instanceId":"no-app-name"}',
      );
      assert.equal(bad.status, 400);
      assert.equal(bad.json().name, 'BadDataError');
    }
  });

  it('GET /internal-backstage/metricsbatch lists the pending usage in Edge’s shape and leaves it to be sent', async () => {
    const report = JSON.stringify({
      appName: 'checkout',
      instanceId: 'svc-1',
      environment: 'development',
      bucket: {
        start: new Date().toISOString(),
        stop: new Date().toISOString(),
        toggles: { 'dev-b': { yes: 4, no: 1, variants: { blue: 3 } } },
      },
    });
    assert.equal(
      (await run.request('POST', '/api/client/metrics', DEV_CLIENT, report)).status,
      202,
    );
    const first = await run.request('GET', '/internal-backstage/metricsbatch');
    assert.equal(first.status, 200);
    const batch = first.json();
    assert.deepEqual(Object.keys(batch).sort(), ['applications', 'metrics']);
    const entry = batch.metrics.find(
      (metric: { key: { app_name: string; feature_name: string } }) =>
        metric.key.app_name === 'checkout' && metric.key.feature_name === 'dev-b',
    );
    assert.ok(entry, 'the counts are listed');
    // `MetricsKey` is snake case, `ClientMetricsEnv` camel case, as Edge writes them.
    assert.deepEqual(Object.keys(entry.key).sort(), [
      'app_name',
      'environment',
      'feature_name',
      'timestamp',
    ]);
    assert.equal(entry.key.environment, 'development');
    assert.equal(entry.key.timestamp, entry.bucket.timestamp);
    assert.deepEqual(
      { ...entry.bucket, timestamp: undefined },
      {
        featureName: 'dev-b',
        appName: 'checkout',
        environment: 'development',
        timestamp: undefined,
        yes: 4,
        no: 1,
        variants: { blue: 3 },
      },
    );
    const application = batch.applications.find(
      (app: { appName: string }) => app.appName === 'checkout',
    );
    assert.equal(application.instanceId, run.proxy.config.flagsInstanceId);
    assert.deepEqual(application.connectVia, [
      { appName: run.proxy.config.flagsAppName, instanceId: run.proxy.config.flagsInstanceId },
    ]);

    const again = (await run.request('GET', '/internal-backstage/metricsbatch')).json();
    assert.deepEqual(
      again.metrics.find((m: { key: { app_name: string } }) => m.key.app_name === 'checkout'),
      entry,
      'listing takes nothing away',
    );
    await run.proxy.reporter.flush();
    const bulk = run.upstream.requests.filter(
      (request) => request.path === '/api/client/metrics/bulk',
    );
    assert.ok(
      bulk.some((request) => request.body.includes('"featureName":"dev-b","appName":"checkout"')),
      'the listed counts went upstream with the next send',
    );
    const after = (await run.request('GET', '/internal-backstage/metricsbatch')).json();
    assert.equal(
      after.metrics.some((m: { key: { app_name: string } }) => m.key.app_name === 'checkout'),
      false,
    );
  });

  it('GET /internal-backstage/tokens answers in Edge’s shape, secrets masked as Edge masks them', async () => {
    assert.equal((await run.request('GET', '/api/frontend', DEV_FRONTEND)).status, 200);
    assert.equal(
      (await run.request('GET', '/api/frontend', `*:development.${'d'.repeat(40)}`)).status,
      403,
    );
    const answer = await run.request('GET', '/internal-backstage/tokens');
    assert.equal(answer.status, 200);
    const body = answer.json();
    assert.deepEqual(Object.keys(body).sort(), [
      'invalidTokenCount',
      'tokenRefreshes',
      'tokenValidationStatus',
    ]);
    assert.equal(body.invalidTokenCount, 1);
    const refresh = body.tokenRefreshes.find(
      (entry: { token: { environment: string } }) => entry.token.environment === 'production',
    );
    assert.deepEqual(refresh.token, {
      token: `*:production.${'c'.repeat(6)}****${'c'.repeat(6)}`,
      type: 'backend',
      environment: 'production',
      projects: ['*'],
      status: 'Validated',
    });
    for (const field of [
      'etag',
      'next_refresh',
      'last_refreshed',
      'last_feature_count',
      'last_check',
      'revision_id',
      'failure_count',
    ])
      assert.ok(field in refresh, field);
    assert.equal(refresh.last_feature_count, 1);
    assert.ok(Date.parse(refresh.last_check) > 0);
    const frontend = body.tokenValidationStatus.find(
      (token: { type: string }) => token.type === 'frontend',
    );
    assert.deepEqual(frontend, {
      token: edgeAnonymizedToken(DEV_FRONTEND),
      type: 'frontend',
      environment: 'development',
      projects: ['*'],
      status: 'Validated',
    });
    for (const token of [DEV_CLIENT, PROD_CLIENT, DEV_FRONTEND])
      assert.ok(!answer.text.includes(token.slice(token.indexOf('.') + 1)), 'no secret listed');
  });

  it('POST /api/client/metrics/edge keeps a downstream instance for /instancedata and the next upstream send', async () => {
    const downstream = edgeInstance('01JDOWNSTREAM', [edgeInstance('01JNESTED')]);
    const sent = await run.request(
      'POST',
      '/api/client/metrics/edge',
      DEV_CLIENT,
      JSON.stringify(downstream),
    );
    assert.equal(sent.status, 202);
    const answer = await run.request('GET', '/internal-backstage/instancedata');
    assert.equal(answer.status, 200);
    const body = answer.json();
    assert.deepEqual(Object.keys(body).sort(), ['connected_instances', 'this_instance']);
    assert.deepEqual(body.connected_instances, [downstream]);
    const own = body.this_instance;
    assert.ok(validInstanceData(own as unknown), JSON.stringify(validInstanceData.errors));
    assert.equal(own.identifier, run.proxy.config.flagsInstanceId);
    assert.equal(own.appName, run.proxy.config.flagsAppName);
    assert.equal(own.hosting, 'self-hosted');
    assert.deepEqual(own.connectedEdges, [downstream]);
    assert.deepEqual(
      own.edgeApiKeyRevisionIds.map((entry: { environment: string }) => entry.environment).sort(),
      ['development', 'production'],
    );
    // The same instance again replaces its earlier data.
    await run.request('POST', '/api/client/metrics/edge', DEV_CLIENT, JSON.stringify(downstream));
    assert.equal(
      (await run.request('GET', '/internal-backstage/instancedata')).json().connected_instances
        .length,
      1,
    );
  });

  it('POST /api/client/metrics/edge refuses what Edge’s types do not describe, or unbounded (400), and other tokens', async () => {
    const post = (body: unknown, token = DEV_CLIENT) =>
      run.request('POST', '/api/client/metrics/edge', token, JSON.stringify(body));
    const valid = edgeInstance('01JVALID');
    const { traffic: _traffic, ...withoutTraffic } = valid;
    const tooManyPaths = {
      ...valid,
      requestsSinceLastReport: Object.fromEntries(
        Array.from({ length: 101 }, (_, i) => [`/p${i}`, { requests200: 1, requests304: 0 }]),
      ),
    };
    const tooDeep = edgeInstance('1', [
      edgeInstance('2', [edgeInstance('3', [edgeInstance('4', [edgeInstance('5')])])]),
    ]);
    for (const [what, body] of [
      ['a list', []],
      ['no traffic', withoutTraffic],
      ['a negative count', { ...valid, connectedStreamingClients: -1 }],
      ['101 paths', tooManyPaths],
      ['relays nested 4 deep', tooDeep],
      ['an unknown hosting', { ...valid, hosting: 'moon' }],
    ] as const) {
      const answer = await post(body);
      assert.equal(answer.status, 400, what);
      assert.equal(answer.json().name, 'BadDataError', what);
    }
    const broken = await run.request(
      'POST',
      '/api/client/metrics/edge',
      DEV_CLIENT,
      '{"identifier":',
    );
    assert.equal(broken.status, 400);
    assert.equal((await post(valid, DEV_FRONTEND)).status, 403);
    assert.equal(
      (await run.request('POST', '/api/client/metrics/edge', undefined, JSON.stringify(valid)))
        .status,
      401,
    );
    assert.equal(
      (await post(edgeInstance('1', [edgeInstance('2', [edgeInstance('3', [edgeInstance('4')])])])))
        .status,
      202,
      'three levels below are fine',
    );
  });

  it('describes the new routes in the OpenAPI document', async () => {
    const documented = await start({ enableOAS: true });
    try {
      const paths = (await documented.request('GET', '/docs/openapi.json')).json().paths;
      for (const [path, method] of [
        ['/internal-backstage/features', 'get'],
        ['/internal-backstage/metricsbatch', 'get'],
        ['/internal-backstage/instancedata', 'get'],
        ['/internal-backstage/tokens', 'get'],
        ['/api/client/features', 'post'],
        ['/api/client/metrics/edge', 'post'],
        ['/api/frontend/all/client/register', 'post'],
        ['/api/proxy/all/client/register', 'post'],
      ] as const)
        assert.ok(paths[path]?.[method], `${method} ${path}`);
      assert.ok(
        paths['/internal-backstage/tokens'].get.responses['200'].content['application/json'].schema
          .properties.tokenRefreshes,
      );
    } finally {
      await documented.close();
    }
  });
});

describe('Edge’s endpoint switches', () => {
  it('DISABLE_{FEATURES,METRICS_BATCH,INSTANCE_DATA,TOKENS}_ENDPOINT answer 404 there, the rest stays', async () => {
    const run = await start(
      {},
      {
        DISABLE_FEATURES_ENDPOINT: 'true',
        DISABLE_METRICS_BATCH_ENDPOINT: 'true',
        DISABLE_INSTANCE_DATA_ENDPOINT: 'true',
        DISABLE_TOKENS_ENDPOINT: 'true',
      },
    );
    try {
      for (const path of ['features', 'metricsbatch', 'instancedata', 'tokens']) {
        const answer = await run.request('GET', `/internal-backstage/${path}`);
        assert.equal(answer.status, 404, path);
        assert.equal(answer.json().name, 'NotFoundError', path);
      }
      assert.equal((await run.request('GET', '/internal-backstage/ready')).status, 200);
    } finally {
      await run.close();
    }
  });

  it('/internal-backstage/features is off without edge mode (Unleash Proxy exposed no flag configuration without a key)', async () => {
    const run = await start({}, {}, 'proxy');
    try {
      assert.equal((await run.request('GET', '/internal-backstage/features')).status, 404);
      assert.equal((await run.request('GET', '/internal-backstage/instancedata')).status, 200);
    } finally {
      await run.close();
    }
    const enabled = await start({}, { DISABLE_FEATURES_ENDPOINT: 'false' }, 'proxy');
    try {
      assert.equal((await enabled.request('GET', '/internal-backstage/features')).status, 200);
    } finally {
      await enabled.close();
    }
  });

  it('each switch alone turns off its endpoint only (in-code options)', async () => {
    const run = await start({ enableFeaturesEndpoint: false });
    try {
      assert.equal((await run.request('GET', '/internal-backstage/features')).status, 404);
      assert.equal((await run.request('GET', '/internal-backstage/metricsbatch')).status, 200);
      assert.equal((await run.request('GET', '/internal-backstage/instancedata')).status, 200);
    } finally {
      await run.close();
    }
  });
});

describe('instance data upstream', () => {
  it('arrives at the upstream’s POST /api/client/metrics/edge with the first startup token, downstream instances included, at shutdown', async () => {
    const run = await start();
    const downstream = edgeInstance('01JRELAY');
    assert.equal(
      (
        await run.request(
          'POST',
          '/api/client/metrics/edge',
          PROD_CLIENT,
          JSON.stringify(downstream),
        )
      ).status,
      202,
    );
    await run.proxy.app.close();
    const received = run.upstream.requests.filter(
      (request) => request.path === '/api/client/metrics/edge',
    );
    await run.upstream.stop();
    assert.equal(received.length, 1);
    const request = received[0];
    assert.ok(request);
    assert.equal(request.method, 'POST');
    assert.equal(request.headers.authorization, DEV_CLIENT);
    assert.equal(request.headers['unleash-appname'], run.proxy.config.flagsAppName);
    const body = JSON.parse(request.body);
    assert.ok(validInstanceData(body), JSON.stringify(validInstanceData.errors));
    assert.equal(body.identifier, run.proxy.config.flagsInstanceId);
    assert.deepEqual(body.connectedEdges, [downstream]);
  });

  it('is sent every interval in edge mode; a 404 (an upstream without the endpoint) clears what was passed on, said once', async () => {
    const upstream = edgeUpstream();
    await upstream.start();
    const options = { flagsUrl: upstream.url, flagsApiToken: [DEV_CLIENT], metricsInterval: 1000 };
    const config = loadConfig({}, options, 'edge');
    const client = createUpstreamClient(config);
    const data = new InstanceData({ appName: 'relay', identifier: '01JSELF', version: 'test' });
    const environments = { all: () => [] } as unknown as Parameters<InstanceData['observe']>[0];
    const log = new RecordingLogger();
    const sender = new InstanceDataSender({
      config,
      environments,
      data,
      upstream: client,
      log,
      intervalMs: 20,
    });
    // Unleash Proxy never sent instance data: without edge mode, neither does flags-proxy.
    const proxyMode = { config: loadConfig({}, options, 'proxy'), environments, data, log };
    assert.equal(new InstanceDataSender({ ...proxyMode, upstream: client }).enabled, false);
    try {
      data.receive(edgeInstance('01JDOWN') as never, 100);
      sender.start();
      const sends = () => upstream.requests.filter((r) => r.path === '/api/client/metrics/edge');
      await waitFor(() => sends().length >= 2);
      const [first, second] = sends().map((r) => JSON.parse(r.body));
      assert.equal(first.connectedEdges.length, 1);
      assert.equal(second.connectedEdges.length, 0, 'passed on once');
      upstream.reportStatus = 404;
      data.receive(edgeInstance('01JLATER') as never, 100);
      const before = sends().length;
      await waitFor(() => sends().length > before + 1);
      assert.deepEqual(data.connectedInstances(), [], 'a 404 clears, as Edge does');
      const said = log.lines.filter((line) => line.message.includes('instance data'));
      assert.deepEqual(
        said.map((line) => [line.level, line.message]),
        [['info', 'upstream does not take instance data (404); asking again less often']],
      );
    } finally {
      await sender.stop();
      await client.close();
      await upstream.stop();
    }
  });
});

describe('edgeAnonymizedToken (Edge’s anonymize_token)', () => {
  it('cuts hashes and versioned secrets as Edge does, and masks what Edge would show unchanged', () => {
    assert.equal(
      edgeAnonymizedToken('*:development.abcdefghijklmnopqrstuvwxyz123456'),
      '*:development.abcdef****123456',
    );
    assert.equal(
      edgeAnonymizedToken('*:development.v2_selector_abcdefghijklmnopqrstuvwxyz123456'),
      '*:development.v2_selector',
    );
    for (const plain of [
      'proxy-client-key-secret',
      '*:my_env.abcdefghijklmnopqrstuvwxyz',
      '*:dev.short',
    ])
      assert.ok(!edgeAnonymizedToken(plain).includes(plain.slice(-8)), plain);
  });
});
