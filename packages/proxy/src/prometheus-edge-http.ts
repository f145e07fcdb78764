import type { IncomingHttpHeaders } from 'node:http';
import type { Metric, Registry } from 'prom-client';

/**
 * Unleash Edge 20.4's HTTP series, under its names, labels and buckets
 * (`crates/oss/unleash-edge-metrics/src/axum_prometheus_metrics.rs`,
 * `crates/oss/unleash-edge/src/middleware/client_metrics.rs`), so dashboards and alerts written
 * for Edge read flags-proxy unchanged. A request costs a few map lookups and additions into typed
 * arrays; label objects are built only when scraped.
 */

/** `http_server_duration_milliseconds` bucket bounds, ms. */
export const EDGE_DURATION_MS_BUCKETS = [
  0.1, 0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000,
] as const;
/** `http_response_size` bucket bounds, bytes. */
export const EDGE_RESPONSE_SIZE_BUCKETS = [
  5, 10, 100, 250, 500, 750, 1000, 2500, 5000, 10000, 25000, 50000, 100000,
] as const;
/** Edge folds every 404 into this endpoint, so that made-up paths make no series. */
const UNKNOWN_ENDPOINT = '/{unknown}';
/**
 * Distinct SDK/spec/encoding label sets kept per family: their values come from request headers,
 * so beyond this the further ones are counted under `other` rather than growing without bound.
 */
const MAX_HEADER_SERIES = 1000;
const OTHER = 'other';

/** The identity labels Edge puts on its own series: its app name and instance id. */
export interface EdgeIdentity {
  readonly appName: string;
  readonly instanceId: string;
}

type Labels = Record<string, string | number>;
interface Value {
  readonly labels: Labels;
  readonly value: number;
  readonly metricName?: string;
}

/** Observations of one histogram series; `counts` per bucket (not cumulative), the last above every bound. */
class HistogramCells {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;
  constructor(private readonly bounds: readonly number[]) {
    this.counts = new Float64Array(bounds.length + 1);
  }

  observe(value: number): void {
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && value > (bounds[i] as number)) i++;
    this.counts[i] = (this.counts[i] as number) + 1;
    this.sum += value;
    this.count++;
  }

  /** Prometheus's histogram samples: cumulative buckets, `+Inf`, `_sum`, `_count`. */
  values(name: string, labels: Labels, into: Value[]): void {
    let cumulative = 0;
    for (let i = 0; i < this.bounds.length; i++) {
      cumulative += this.counts[i] as number;
      into.push({
        labels: { ...labels, le: this.bounds[i] as number },
        value: cumulative,
        metricName: `${name}_bucket`,
      });
    }
    into.push(
      { labels: { ...labels, le: '+Inf' }, value: this.count, metricName: `${name}_bucket` },
      { labels, value: this.sum, metricName: `${name}_sum` },
      { labels, value: this.count, metricName: `${name}_count` },
    );
  }

  reset(): void {
    this.counts.fill(0);
    this.sum = 0;
    this.count = 0;
  }
}

/** A metric the registry prints from `get()` (only called when scraped or pushed). */
function familyOf(
  name: string,
  help: string,
  type: 'counter' | 'histogram',
  values: () => Value[],
  reset: () => void,
): Metric {
  return {
    name,
    help,
    type,
    aggregator: 'sum',
    get: async () => ({ name, help, type, aggregator: 'sum', values: values() }),
    reset,
  } as unknown as Metric;
}

/** What one (method, endpoint, status) has been answered; `undefined` fields: left out as Edge does. */
export interface EdgeRouteSeries {
  readonly labels: Labels;
  readonly duration: HistogramCells;
  /** `http_response_size` is per (method, endpoint), shared by that pair's statuses. */
  readonly size: HistogramCells;
  /** Counted in the SDK families (a 2xx answer). */
  readonly sdk: boolean;
  /** The endpoint label of the SDK families (`path`). */
  readonly path: string;
}

interface SdkCells {
  readonly name: string;
  readonly version: string;
  count: number;
  readonly bySpec: Map<string, { count: number }>;
  readonly byEncoding: Map<string | undefined, Map<string, { count: number }>>;
}

/**
 * The HTTP families of Edge: `http_requests_total`, `http_server_duration_milliseconds`,
 * `http_response_size` (by method, endpoint, status, app and instance), and, for 2xx answers,
 * `client_sdk_version`, `client_spec_version` and `request_content_encoding` (from the
 * `unleash-sdk`, `unleash-client-spec` and `accept-encoding` headers). Routes under
 * `/internal-backstage` are left out, as Edge leaves them out.
 */
export class EdgeHttpMetrics {
  private readonly routes: EdgeRouteSeries[] = [];
  private readonly sizes = new Map<string, { labels: Labels; cells: HistogramCells }>();
  private readonly sdks = new Map<string | undefined, SdkCells>();
  private specSeries = 0;
  private encodingSeries = 0;

  constructor(private readonly identity: EdgeIdentity) {}

  /**
   * The series of a route pattern's answers with `status` (the caller keeps it), or `undefined`
   * for a route Edge does not count.
   */
  series(route: string, method: string, status: number): EdgeRouteSeries | undefined {
    if (route.includes('/internal-backstage') || route.endsWith('/favicon.ico')) return undefined;
    const endpoint = status === 404 ? UNKNOWN_ENDPOINT : route;
    const identity = { app_name: this.identity.appName, instance_id: this.identity.instanceId };
    const sizeKey = `${method} ${endpoint}`;
    let size = this.sizes.get(sizeKey);
    if (size === undefined) {
      size = {
        labels: { method, endpoint, ...identity },
        cells: new HistogramCells(EDGE_RESPONSE_SIZE_BUCKETS),
      };
      this.sizes.set(sizeKey, size);
    }
    const series: EdgeRouteSeries = {
      labels: { method, endpoint, status: String(status), ...identity },
      duration: new HistogramCells(EDGE_DURATION_MS_BUCKETS),
      size: size.cells,
      sdk: status >= 200 && status < 300,
      path: route,
    };
    this.routes.push(series);
    return series;
  }

  /** Records one answer of `series`: its duration (ms), body bytes and the caller's SDK headers. */
  record(series: EdgeRouteSeries, ms: number, bytes: number, headers: IncomingHttpHeaders): void {
    series.duration.observe(ms);
    series.size.observe(bytes);
    if (!series.sdk) return;
    const sdk = this.sdkOf(headers['unleash-sdk']);
    sdk.count++;
    const spec = headers['unleash-client-spec'];
    if (typeof spec === 'string') this.countIn(sdk.bySpec, spec, 'spec');
    const encoding = headers['accept-encoding'];
    let byPath = sdk.byEncoding.get(encoding);
    if (byPath === undefined) {
      byPath = new Map();
      sdk.byEncoding.set(encoding, byPath);
    }
    this.countIn(byPath, series.path, 'encoding');
  }

  /** Puts the families in `registry`. */
  registerOn(registry: Registry): void {
    const ids = { app_name: this.identity.appName, instance_id: this.identity.instanceId };
    const resetAll = () => this.reset();
    registry.registerMetric(
      familyOf(
        'http_requests_total',
        'Total number of HTTP requests',
        'counter',
        () => this.routes.map((s) => ({ labels: s.labels, value: s.duration.count })),
        resetAll,
      ),
    );
    registry.registerMetric(
      familyOf(
        'http_server_duration_milliseconds',
        'HTTP request latencies in milliseconds',
        'histogram',
        () => {
          const values: Value[] = [];
          for (const s of this.routes)
            s.duration.values('http_server_duration_milliseconds', s.labels, values);
          return values;
        },
        resetAll,
      ),
    );
    registry.registerMetric(
      familyOf(
        'http_response_size',
        'Size of HTTP response bodies in bytes',
        'histogram',
        () => {
          const values: Value[] = [];
          for (const { labels, cells } of this.sizes.values())
            cells.values('http_response_size', labels, values);
          return values;
        },
        resetAll,
      ),
    );
    const perSdk = <T>(each: (sdk: SdkCells, sdkLabels: Labels) => T[]): T[] =>
      [...this.sdks.values()].flatMap((sdk) =>
        each(sdk, { ...ids, sdk_name: sdk.name, sdk_version: sdk.version }),
      );
    registry.registerMetric(
      familyOf(
        'client_sdk_version',
        'The client SDK version',
        'counter',
        () => perSdk((sdk, labels) => (sdk.count > 0 ? [{ labels, value: sdk.count }] : [])).flat(),
        resetAll,
      ),
    );
    registry.registerMetric(
      familyOf(
        'client_spec_version',
        'The client spec version',
        'counter',
        () =>
          perSdk((sdk, labels) =>
            [...sdk.bySpec].map(([spec, cell]) => ({
              labels: { ...labels, spec_version: spec },
              value: cell.count,
            })),
          ),
        resetAll,
      ),
    );
    registry.registerMetric(
      familyOf(
        'request_content_encoding',
        'The value of the Accept-encoding header',
        'counter',
        () =>
          perSdk((sdk, labels) =>
            [...sdk.byEncoding].flatMap(([encoding, byPath]) =>
              [...byPath].map(([path, cell]) => ({
                labels: { ...labels, accept_encoding: encoding ?? 'none', path },
                value: cell.count,
              })),
            ),
          ),
        resetAll,
      ),
    );
  }

  private sdkOf(header: string | string[] | undefined): SdkCells {
    const key = typeof header === 'string' ? header : undefined;
    let sdk = this.sdks.get(key);
    if (sdk !== undefined) return sdk;
    if (this.sdks.size >= MAX_HEADER_SERIES) {
      sdk = this.sdks.get(OTHER);
      if (sdk !== undefined) return sdk;
    }
    sdk = {
      ...sdkNameAndVersion(this.sdks.size >= MAX_HEADER_SERIES ? OTHER : key),
      count: 0,
      bySpec: new Map(),
      byEncoding: new Map(),
    };
    this.sdks.set(this.sdks.size >= MAX_HEADER_SERIES ? OTHER : key, sdk);
    return sdk;
  }

  /** Adds one to `key`'s cell, or to `other`'s once the family holds `MAX_HEADER_SERIES` cells. */
  private countIn(cells: Map<string, { count: number }>, key: string, family: 'spec' | 'encoding') {
    let cell = cells.get(key);
    if (cell === undefined) {
      const full = (family === 'spec' ? this.specSeries : this.encodingSeries) >= MAX_HEADER_SERIES;
      const name = full ? OTHER : key;
      cell = cells.get(name);
      if (cell === undefined) {
        cell = { count: 0 };
        cells.set(name, cell);
        if (family === 'spec') this.specSeries++;
        else this.encodingSeries++;
      }
    }
    cell.count++;
  }

  private reset(): void {
    for (const s of this.routes) s.duration.reset();
    for (const { cells } of this.sizes.values()) cells.reset();
    this.sdks.clear();
    this.specSeries = 0;
    this.encodingSeries = 0;
  }
}

/** Edge's reading of `unleash-sdk: name:version` (no colon: version `unknown`; none: both `unknown`). */
function sdkNameAndVersion(header: string | undefined): { name: string; version: string } {
  if (header === undefined) return { name: 'unknown', version: 'unknown' };
  const colon = header.indexOf(':');
  if (colon < 0) return { name: header, version: 'unknown' };
  return { name: header.slice(0, colon), version: header.slice(colon + 1) };
}
