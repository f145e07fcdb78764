import type { BulkMetrics, UsageReport } from '@flags/schemas';
import { Counter, Gauge, Histogram, type Metric, type Registry } from 'prom-client';
import type { EdgeIdentity } from './prometheus-edge-http.js';
import type { UpstreamClient } from './sync/http-client.js';

/** `client_feature_fetch` bucket bounds, ms (`crates/oss/unleash-edge-http-client/src/lib.rs`). */
const FETCH_MS_BUCKETS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 5000];
/** `client_metrics_upload` bucket bounds, ms (same file). */
const UPLOAD_MS_BUCKETS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000];
/** `metrics_size_in_bytes` bucket bounds (`crates/oss/unleash-edge-metrics/src/client_metrics.rs`). */
const SIZE_BUCKETS = [1000, 10000, 20000, 50000, 75000, 100000, 250000, 500000, 1000000];
/**
 * `feature_toggle_usage_total` series kept at most: flag and application names come from SDK
 * reports, so beyond this a new (application, flag) pair is not added (its counts still go upstream).
 */
const MAX_USAGE_SERIES = 10_000;

const REQUEST_LABELS = ['status_code', 'app_name', 'instance_id'] as const;

/** Which of Edge's upstream calls a request is, by the path it goes to. */
type Call = 'features' | 'register' | 'metrics' | 'instance' | 'validate' | undefined;

function callOf(url: URL | string, method: string): Call {
  const path = typeof url === 'string' ? new URL(url).pathname : url.pathname;
  if (method === 'GET') return path.endsWith('/client/features') ? 'features' : undefined;
  if (path.endsWith('/client/register')) return 'register';
  if (path.endsWith('/client/metrics/bulk') || path.endsWith('/client/metrics')) return 'metrics';
  if (path.endsWith('/client/metrics/edge')) return 'instance';
  if (path.endsWith('/edge/validate')) return 'validate';
  return undefined;
}

const succeeded = (status: number) => status >= 200 && status < 300;

/**
 * Unleash Edge 20.4's series about the proxy's own calls upstream and the usage SDKs report to it,
 * fed from the real events: each upstream exchange (timed from the request to the answer's
 * headers, as Edge times it) and each usage report accepted. Names, labels, types and buckets are
 * Edge's (`crates/oss/unleash-edge-http-client/src/lib.rs`,
 * `crates/oss/unleash-edge-metrics/src/{client_metrics,send_unleash_metrics}.rs`); Edge's
 * failure counts are gauges that only go up, and stay gauges here.
 */
export class EdgeUpstreamMetrics {
  private readonly fetch: Histogram<(typeof REQUEST_LABELS)[number]>;
  private readonly fetchFailures: Gauge<(typeof REQUEST_LABELS)[number]>;
  private readonly registerFailures: Gauge<(typeof REQUEST_LABELS)[number]>;
  private readonly upload: Histogram<(typeof REQUEST_LABELS)[number]>;
  private readonly uploadErrors: Gauge<'status_code'>;
  private readonly instanceUpload: Histogram<(typeof REQUEST_LABELS)[number]>;
  private readonly uploadSize: Histogram;
  private readonly validationFailures: Gauge<(typeof REQUEST_LABELS)[number]>;
  private readonly usage: Counter<'appName' | 'toggle' | 'active'>;
  /** `appName` → flags with a `feature_toggle_usage_total` series. */
  private readonly usageSeries = new Map<string, Set<string>>();
  private usageSeriesCount = 0;
  private readonly ids: { app_name: string; instance_id: string };

  constructor(identity: EdgeIdentity) {
    this.ids = { app_name: identity.appName, instance_id: identity.instanceId };
    // Put in a registry by `registerOn`: the upstream client is made before the app and its registry.
    const registers: Registry[] = [];
    const labelNames = REQUEST_LABELS;
    this.fetch = new Histogram({
      name: 'client_feature_fetch',
      help: 'Timings for fetching features in milliseconds',
      labelNames,
      buckets: FETCH_MS_BUCKETS,
      registers,
    });
    this.fetchFailures = new Gauge({
      name: 'client_feature_fetch_failures',
      help: 'Why we failed to fetch features',
      labelNames,
      registers,
    });
    this.registerFailures = new Gauge({
      name: 'client_register_failures',
      help: 'Why we failed to register upstream',
      labelNames,
      registers,
    });
    this.upload = new Histogram({
      name: 'client_metrics_upload',
      help: 'Timings for uploading client metrics in milliseconds',
      labelNames,
      buckets: UPLOAD_MS_BUCKETS,
      registers,
    });
    this.instanceUpload = new Histogram({
      name: 'instance_data_upload',
      help: 'Timings for uploading Edge instance data in milliseconds',
      labelNames,
      buckets: UPLOAD_MS_BUCKETS,
      registers,
    });
    this.uploadErrors = new Gauge({
      name: 'metrics_upstream_http_errors',
      help: 'Failing requests against upstream metrics endpoint',
      labelNames: ['status_code'],
      registers,
    });
    this.uploadSize = new Histogram({
      name: 'metrics_size_in_bytes',
      help: 'Size of metrics when posting',
      buckets: SIZE_BUCKETS,
      registers,
    });
    this.validationFailures = new Gauge({
      name: 'token_validation_failures',
      help: 'Why we failed to validate tokens',
      labelNames,
      registers,
    });
    this.usage = new Counter({
      name: 'feature_toggle_usage_total',
      help: 'Number of times a feature flag has been used',
      labelNames: ['appName', 'toggle', 'active'],
      registers,
    });
  }

  registerOn(registry: Registry): void {
    for (const metric of <Metric[]>[
      this.fetch,
      this.fetchFailures,
      this.registerFailures,
      this.upload,
      this.uploadErrors,
      this.instanceUpload,
      this.uploadSize,
      this.validationFailures,
      this.usage,
    ])
      registry.registerMetric(metric);
  }

  /** `client` with every features fetch, registration, usage send and token validation counted. */
  observe(client: UpstreamClient): UpstreamClient {
    return {
      request: async (url, init) => {
        const call = callOf(url, init.method);
        if (call === 'metrics' && init.body !== undefined)
          this.uploadSize.observe(Buffer.byteLength(init.body));
        const startedAt = performance.now();
        const response = await client.request(url, init);
        if (call !== undefined) this.answered(call, response.status, performance.now() - startedAt);
        return response;
      },
      close: () => client.close(),
    };
  }

  /** A usage report an SDK sent (`/client/metrics`, frontend metrics). */
  reported(report: UsageReport): void {
    const toggles = report.bucket.toggles;
    for (const name of Object.keys(toggles)) {
      const counts = toggles[name];
      if (counts !== undefined) this.count(report.appName, name, counts.yes, counts.no);
    }
  }

  /** A bulk body a downstream Edge or proxy sent (`/client/metrics/bulk`). */
  reportedBulk(body: BulkMetrics): void {
    for (const metric of body.metrics)
      this.count(metric.appName, metric.featureName, metric.yes ?? 0, metric.no ?? 0);
  }

  private count(appName: string, toggle: string, yes: number, no: number): void {
    let flags = this.usageSeries.get(appName);
    if (flags === undefined || !flags.has(toggle)) {
      if (this.usageSeriesCount >= MAX_USAGE_SERIES) return;
      if (flags === undefined) {
        flags = new Set();
        this.usageSeries.set(appName, flags);
      }
      flags.add(toggle);
      this.usageSeriesCount++;
    }
    this.usage.inc({ appName, toggle, active: 'true' }, yes);
    this.usage.inc({ appName, toggle, active: 'false' }, no);
  }

  private answered(call: Call, status: number, ms: number): void {
    const labels = { ...this.ids, status_code: String(status) };
    switch (call) {
      case 'features':
        this.fetch.observe(labels, ms);
        if (!succeeded(status) && status !== 304) this.fetchFailures.inc(labels);
        break;
      case 'register':
        if (!succeeded(status)) this.registerFailures.inc(labels);
        break;
      case 'metrics':
        this.upload.observe(labels, ms);
        if (!succeeded(status)) this.uploadErrors.inc({ status_code: labels.status_code });
        break;
      case 'instance':
        this.instanceUpload.observe(labels, ms);
        break;
      case 'validate':
        if (status !== 200) this.validationFailures.inc(labels);
        break;
    }
  }
}
