import assert from 'node:assert/strict';
import { createServer, type IncomingMessage } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { loadConfig } from '@flags/proxy';
import { smallPayload } from './fixtures/small.js';
import { API_TOKEN, call, startProxy, waitFor, withKey } from './helpers/proxy.js';

interface Sample {
  readonly value?: string;
  readonly count?: string;
  readonly labels?: Record<string, string>;
  readonly buckets?: Record<string, string>;
}
interface Family {
  readonly name: string;
  readonly type: string;
  readonly metrics: Sample[];
}

const load = createRequire(import.meta.url);
// Third-party readers, not the code that wrote the output: a text-format parser, a snappy
// decoder and protobufjs with the remote-write schema written out below.
const parse = load('parse-prometheus-text-format') as (text: string) => Family[];
const snappy = load('snappyjs') as { uncompress(input: Uint8Array): Uint8Array };
const protobuf = load('protobufjs') as typeof import('protobufjs');

/**
 * Every series Unleash Edge 20.4 (open source) exposes, with the file of its source that
 * registers it, and its type there.
 */
const EDGE_FAMILIES: readonly (readonly [name: string, type: string])[] = [
  // crates/oss/unleash-edge-metrics/src/axum_prometheus_metrics.rs (names in unleash-edge-types/src/metrics/mod.rs)
  ['http_requests_total', 'counter'],
  // crates/oss/unleash-edge-metrics/src/axum_prometheus_metrics.rs
  ['http_server_duration_milliseconds', 'histogram'],
  // crates/oss/unleash-edge-metrics/src/axum_prometheus_metrics.rs
  ['http_response_size', 'histogram'],
  // crates/oss/unleash-edge/src/middleware/client_metrics.rs
  ['client_sdk_version', 'counter'],
  // crates/oss/unleash-edge/src/middleware/client_metrics.rs
  ['client_spec_version', 'counter'],
  // crates/oss/unleash-edge/src/middleware/client_metrics.rs
  ['request_content_encoding', 'counter'],
  // crates/oss/unleash-edge-appstate/src/token_cache_observer.rs
  ['token_status', 'gauge'],
  // crates/oss/unleash-edge-feature-refresh/src/lib.rs
  ['polling_revision_id', 'gauge'],
  // crates/oss/unleash-edge-feature-refresh/src/lib.rs
  ['polling_last_update', 'gauge'],
  // crates/oss/unleash-edge-http-client/src/lib.rs
  ['client_feature_fetch', 'histogram'],
  // crates/oss/unleash-edge-http-client/src/lib.rs
  ['client_feature_fetch_failures', 'gauge'],
  // crates/oss/unleash-edge-http-client/src/lib.rs
  ['client_register_failures', 'gauge'],
  // crates/oss/unleash-edge-http-client/src/lib.rs
  ['client_metrics_upload', 'histogram'],
  // crates/oss/unleash-edge-http-client/src/lib.rs
  ['instance_data_upload', 'histogram'],
  // crates/oss/unleash-edge-http-client/src/lib.rs
  ['token_validation_failures', 'gauge'],
  // crates/oss/unleash-edge-metrics/src/client_metrics.rs
  ['feature_toggle_usage_total', 'counter'],
  // crates/oss/unleash-edge-metrics/src/client_metrics.rs
  ['metrics_size_in_bytes', 'histogram'],
  // crates/oss/unleash-edge-metrics/src/send_unleash_metrics.rs
  ['metrics_upstream_http_errors', 'gauge'],
  // crates/oss/unleash-edge-metrics/src/send_unleash_metrics.rs
  ['metrics_send_error', 'gauge'],
  // crates/oss/unleash-edge-metrics/src/send_unleash_metrics.rs
  ['metrics_interval_between_send', 'gauge'],
];

function family(families: Family[], name: string): Family {
  const found = families.find((candidate) => candidate.name === name);
  assert.ok(found, `${name} is exposed`);
  return found;
}

/** The sample of `name` whose labels include `labels`. */
function sample(families: Family[], name: string, labels: Record<string, string>): Sample {
  const found = family(families, name).metrics.find((candidate) =>
    Object.entries(labels).every(([key, value]) => candidate.labels?.[key] === value),
  );
  assert.ok(found, `${name} has a sample ${JSON.stringify(labels)}`);
  return found;
}

const sampleValue = (found: Sample) => Number(found.value ?? found.count);

/**
 * A histogram line's value, read from the text (the parser above drops the labels of a histogram
 * whose series are not in its expected order): `<name>{…labels…} <value>`.
 */
function histogramValue(text: string, name: string, labels: Record<string, string>): number {
  const line = text
    .split('\n')
    .find(
      (candidate) =>
        candidate.startsWith(`${name}{`) &&
        Object.entries(labels).every(([key, value]) => candidate.includes(`${key}="${value}"`)),
    );
  assert.ok(line, `${name} has a line ${JSON.stringify(labels)}`);
  return Number(line.slice(line.lastIndexOf(' ') + 1));
}

const SDK_HEADERS = {
  'unleash-sdk': 'unleash-client-node:6.1.0',
  'unleash-client-spec': '5.2.0',
  'accept-encoding': 'gzip',
};

describe('Prometheus: Unleash Edge 20.4 names', () => {
  it('exposes every Edge series beside ours, fed by the requests, syncs and uploads made', async () => {
    const run = await startProxy(
      smallPayload,
      { metricsInterval: 100, flagsAppName: 'edge-names', flagsInstanceId: 'instance-1' },
      {
        listen: true,
        upstream: (upstream) => {
          upstream.pathStatus.set('/api/client/register', 500);
          upstream.pathStatus.set('/api/client/metrics', 503);
        },
      },
    );
    try {
      await run.proxy.poller.ready;
      let text = '';
      const scrape = async () => {
        const answer = await call(run.base, 'GET', '/internal-backstage/metrics');
        assert.equal(answer.status, 200);
        text = answer.text;
        return parse(answer.text);
      };
      const before = await scrape();
      for (const [name, type] of EDGE_FAMILIES)
        assert.equal(family(before, name).type, type.toUpperCase(), `${name} is a ${type}`);

      // Over the socket (the evaluation front answers these) and through Fastify (`inject`).
      const frontend = { method: 'GET', endpoint: '/api/frontend', status: '200' };
      const counted = (families: Family[]) => {
        const found = family(families, 'http_requests_total').metrics.find(
          (candidate) =>
            candidate.labels?.endpoint === '/api/frontend' && candidate.labels?.status === '200',
        );
        return found === undefined ? 0 : sampleValue(found);
      };
      const ids = { app_name: 'edge-names', instance_id: 'instance-1' };
      for (let i = 0; i < 3; i++) {
        const answer = await call(run.base, 'GET', '/api/frontend', {
          headers: withKey(SDK_HEADERS),
        });
        assert.equal(answer.status, 200);
      }
      assert.equal((await call(run, 'GET', '/api/frontend', { headers: withKey() })).status, 200);
      assert.equal((await call(run, 'GET', '/api/frontend', { headers: {} })).status, 401);
      assert.equal((await call(run, 'GET', '/no/such/path')).status, 404);
      const report = {
        appName: 'web-shop',
        instanceId: 'browser',
        bucket: {
          start: new Date().toISOString(),
          stop: new Date().toISOString(),
          toggles: { 'new-checkout': { yes: 4, no: 1, variants: {} } },
        },
      };
      const reported = await call(run, 'POST', '/api/frontend/client/metrics', {
        headers: withKey({ 'content-type': 'application/json' }),
        body: JSON.stringify(report),
      });
      assert.equal(reported.status, 202);
      // The next usage send goes upstream (refused with 503 there, so kept and sent again).
      await waitFor(async () => {
        const families = await scrape();
        return (
          families
            .find((f) => f.name === 'metrics_upstream_http_errors')
            ?.metrics.some((m) => m.labels?.status_code === '503') === true
        );
      });

      const after = await scrape();
      assert.equal(counted(after) - counted(before), 4, 'four answered 200 on /api/frontend');
      assert.equal(
        sampleValue(sample(after, 'http_requests_total', { ...frontend, ...ids })),
        counted(after),
      );
      assert.ok(
        sampleValue(
          sample(after, 'http_requests_total', { endpoint: '/api/frontend', status: '401' }),
        ) >= 1,
      );
      assert.ok(
        sampleValue(
          sample(after, 'http_requests_total', { endpoint: '/{unknown}', status: '404' }),
        ) >= 1,
      );
      assert.equal(
        family(after, 'http_requests_total').metrics.some((m) =>
          m.labels?.endpoint?.includes('/internal-backstage'),
        ),
        false,
        'scrapes are not counted, as Edge leaves /internal-backstage out',
      );
      assert.equal(
        histogramValue(text, 'http_server_duration_milliseconds_count', frontend),
        counted(after),
      );
      for (const le of [
        '0.1',
        '0.5',
        '1',
        '2.5',
        '5',
        '10',
        '25',
        '50',
        '100',
        '250',
        '500',
        '1000',
        '2500',
        '5000',
        '10000',
        '+Inf',
      ])
        histogramValue(text, 'http_server_duration_milliseconds_bucket', { ...frontend, le });
      const bySize = { method: 'GET', endpoint: '/api/frontend' };
      assert.ok(histogramValue(text, 'http_response_size_count', bySize) >= 4);
      assert.ok(
        histogramValue(text, 'http_response_size_sum', bySize) > 0,
        'answer bytes are counted',
      );
      histogramValue(text, 'http_response_size_bucket', { ...bySize, le: '100000' });
      assert.equal(
        sampleValue(
          sample(after, 'client_sdk_version', {
            sdk_name: 'unleash-client-node',
            sdk_version: '6.1.0',
          }),
        ),
        3,
      );
      assert.equal(
        sampleValue(
          sample(after, 'client_spec_version', {
            sdk_name: 'unleash-client-node',
            spec_version: '5.2.0',
          }),
        ),
        3,
      );
      assert.equal(
        sampleValue(
          sample(after, 'request_content_encoding', {
            accept_encoding: 'gzip',
            sdk_name: 'unleash-client-node',
            path: '/api/frontend',
          }),
        ),
        3,
      );
      assert.equal(
        sampleValue(
          sample(after, 'feature_toggle_usage_total', {
            appName: 'web-shop',
            toggle: 'new-checkout',
            active: 'true',
          }),
        ),
        4,
      );
      assert.equal(
        sampleValue(
          sample(after, 'feature_toggle_usage_total', {
            appName: 'web-shop',
            toggle: 'new-checkout',
            active: 'false',
          }),
        ),
        1,
      );
      const fetches = run.upstream.featureRequests().length;
      assert.ok(fetches >= 1);
      assert.ok(
        histogramValue(text, 'client_feature_fetch_count', { status_code: '200', ...ids }) >= 1,
        'feature fetches are timed',
      );
      assert.ok(
        sampleValue(sample(after, 'client_register_failures', { status_code: '500', ...ids })) >= 1,
      );
      assert.ok(
        histogramValue(text, 'client_metrics_upload_count', { status_code: '503', ...ids }) >= 1,
      );
      assert.ok(Number(text.match(/^metrics_size_in_bytes_count (\d+)/m)?.[1]) >= 1);
      assert.ok(sampleValue(sample(after, 'polling_last_update', { environment: 'default' })) > 0);
      assert.ok(sampleValue(sample(after, 'metrics_interval_between_send', {})) >= 0);
      for (const status of ['validated', 'invalid', 'unknown', 'trusted'])
        sample(after, 'token_status', { status, ...ids });
      // Ours stay beside Edge's.
      family(after, 'flags_proxy_http_request_duration_seconds');
    } finally {
      await run.close();
    }
  });

  it('pushes every metric by Prometheus remote write with basic auth', async () => {
    const received: { headers: IncomingMessage['headers']; body: Buffer }[] = [];
    const receiver = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        received.push({ headers: request.headers, body: Buffer.concat(chunks) });
        response.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const port = (receiver.address() as AddressInfo).port;
    const run = await startProxy(smallPayload, {
      flagsAppName: 'pushing-proxy',
      flagsInstanceId: 'instance-2',
      prometheusRemoteWriteUrl: `http://127.0.0.1:${port}/api/v1/write`,
      prometheusPushInterval: 100,
      prometheusUsername: 'grafana-user',
      prometheusPassword: 's3cret',
      prometheusHostname: 'edge-pod-7',
    } as never);
    try {
      await run.proxy.poller.ready;
      await call(run, 'GET', '/api/frontend', { headers: withKey() });
      // The first push may precede the request: the one after it counts it.
      const pushesBefore = received.length;
      await waitFor(() => received.length > pushesBefore);
      const push = received.at(-1);
      assert.ok(push);
      assert.equal(
        push.headers.authorization,
        `Basic ${Buffer.from('grafana-user:s3cret').toString('base64')}`,
      );
      assert.equal(push.headers['content-type'], 'application/x-protobuf');
      assert.equal(push.headers['content-encoding'], 'snappy');
      // prometheus/prompb: types.proto and remote.proto, the fields remote write 1.0 uses.
      const root = protobuf.parse(`
        syntax = "proto3";
        message Label { string name = 1; string value = 2; }
        message Sample { double value = 1; int64 timestamp = 2; }
        message TimeSeries { repeated Label labels = 1; repeated Sample samples = 2; }
        message WriteRequest { repeated TimeSeries timeseries = 1; }
      `).root;
      const decoded = root
        .lookupType('WriteRequest')
        .toObject(root.lookupType('WriteRequest').decode(snappy.uncompress(push.body)), {
          longs: Number,
        }) as {
        timeseries: {
          labels: { name: string; value: string }[];
          samples: { value: number; timestamp: number }[];
        }[];
      };
      const series = decoded.timeseries.map((t) => ({
        labels: Object.fromEntries(t.labels.map((l) => [l.name, l.value])),
        samples: t.samples,
      }));
      const requests = series.find(
        (s) => s.labels.__name__ === 'http_requests_total' && s.labels.endpoint === '/api/frontend',
      );
      assert.ok(requests, 'http_requests_total is pushed');
      assert.equal(requests.labels.app_name, 'pushing-proxy');
      assert.equal(requests.labels.instance_id, 'instance-2');
      assert.equal(requests.labels.client_id, 'self-hosted');
      assert.equal(requests.labels.hostname, 'edge-pod-7');
      assert.ok((requests.samples[0]?.value ?? 0) >= 1);
      assert.ok(Math.abs((requests.samples[0]?.timestamp ?? 0) - Date.now()) < 60_000);
      for (const s of series) {
        const names = Object.keys(s.labels);
        assert.deepEqual(names, [...names].sort(), 'labels are sorted by name');
      }
      assert.ok(series.some((s) => s.labels.__name__ === 'client_feature_fetch_bucket'));
    } finally {
      await run.close();
      await new Promise((resolve) => receiver.close(resolve));
    }
  });

  it('DISABLE_METRICS_ENDPOINT leaves /internal-backstage/metrics out (404), as Edge does', async () => {
    const config = loadConfig(
      { DISABLE_METRICS_ENDPOINT: 'true' },
      { flagsUrl: 'http://127.0.0.1:1/api', flagsApiToken: API_TOKEN, clientKeys: ['k'] },
    );
    assert.equal(config.enableMetricsEndpoint, false);
    const run = await startProxy(smallPayload, { enableMetricsEndpoint: false } as never);
    try {
      await run.proxy.poller.ready;
      const answer = await call(run, 'GET', '/internal-backstage/metrics');
      assert.equal(answer.status, 404);
      assert.equal(answer.json().name, 'NotFoundError');
      // Unleash Proxy's path is not Edge's switch's.
      assert.equal((await call(run, 'GET', '/proxy/internal-backstage/prometheus')).status, 200);
    } finally {
      await run.close();
    }
  });
});
