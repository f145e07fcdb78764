import type { IncomingHttpHeaders } from 'node:http';
import type { EnvironmentState } from '@flags/serving';
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  Counter,
  collectDefaultMetrics,
  Gauge,
  type Metric,
  type MetricValueWithName,
  Registry,
} from 'prom-client';
import {
  EdgeHttpMetrics,
  type EdgeIdentity,
  type EdgeRouteSeries,
} from './prometheus-edge-http.js';

/** Where the poller reports its last successful upstream check (200 or 304), epoch ms. */
export interface FetchClock {
  readonly lastCheckMs: number;
}

const DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

/** The counts of one (route, method, status) series. */
interface Series {
  readonly labels: Readonly<Record<'route' | 'method' | 'status', string>>;
  /** Observations per bucket (not cumulative); the last slot is above every bound. */
  readonly counts: Float64Array;
  sum: number;
  count: number;
}

/** A (route, method, status)'s series in both namings: ours and Unleash Edge's (none: Edge leaves it out). */
interface RouteSeries {
  readonly duration: Series;
  readonly edge: EdgeRouteSeries | undefined;
}

type Sample = MetricValueWithName<string> & { readonly sharedLabels: Series['labels'] };

/**
 * `flags_proxy_http_request_duration_seconds`, kept in typed arrays and exposed through the
 * registry with prom-client's histogram layout. prom-client's own `observe` validates and hashes
 * the labels and keys buckets by float on every call; here a request costs a bucket scan and three
 * additions.
 */
class DurationHistogram {
  readonly name = 'flags_proxy_http_request_duration_seconds';
  readonly help = 'Time to answer HTTP requests, by route, method and status.';
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly series: Series[] = [];

  /** A new series; the caller keeps it (label sets are bounded: routes × methods × statuses). */
  add(route: string, method: string, status: string): Series {
    const series: Series = {
      labels: { route, method, status },
      counts: new Float64Array(DURATION_BUCKETS.length + 1),
      sum: 0,
      count: 0,
    };
    this.series.push(series);
    return series;
  }

  /** What `Registry.metrics()` prints: cumulative buckets, `+Inf`, `_sum` and `_count`. */
  getForPromString() {
    const values: Sample[] = [];
    for (const series of this.series) {
      const shared = series.labels;
      let cumulative = 0;
      for (let i = 0; i < DURATION_BUCKETS.length; i++) {
        cumulative += series.counts[i] as number;
        values.push({
          labels: { le: DURATION_BUCKETS[i] as number },
          sharedLabels: shared,
          value: cumulative,
          metricName: `${this.name}_bucket`,
        });
      }
      values.push(
        {
          labels: { le: '+Inf' },
          sharedLabels: shared,
          value: series.count,
          metricName: `${this.name}_bucket`,
        },
        { labels: {}, sharedLabels: shared, value: series.sum, metricName: `${this.name}_sum` },
        { labels: {}, sharedLabels: shared, value: series.count, metricName: `${this.name}_count` },
      );
    }
    return {
      name: this.name,
      help: this.help,
      type: this.type,
      values,
      aggregator: this.aggregator,
    };
  }

  /** The JSON form (`Registry.getMetricsAsJSON`): labels merged as prom-client does. */
  get() {
    const data = this.getForPromString();
    return {
      ...data,
      values: data.values.map(({ sharedLabels, labels, ...rest }) => ({
        ...rest,
        labels: { ...sharedLabels, ...labels },
      })),
    };
  }

  reset(): void {
    for (const series of this.series) {
      series.counts.fill(0);
      series.sum = 0;
      series.count = 0;
    }
  }
}

function observeInto(series: Series, seconds: number): void {
  let i = 0;
  while (i < DURATION_BUCKETS.length && seconds > (DURATION_BUCKETS[i] as number)) i++;
  series.counts[i] = (series.counts[i] as number) + 1;
  series.sum += seconds;
  series.count++;
}

/**
 * The proxy's Prometheus metrics in a registry of its own (several proxies in one process do not
 * collide): `flags_proxy_up`, the two sync timestamps of the proxy document, process/runtime
 * defaults, and request durations by route and status.
 */
export class ProxyMetrics {
  readonly registry = new Registry();
  private readonly duration = new DurationHistogram();
  /** The series of each route and method, indexed by status: no label hashing per request. */
  private readonly byRoute = new Map<string, RouteSeries[]>();
  /** Unleash Edge's HTTP families, beside ours. */
  private readonly edge: EdgeHttpMetrics;

  constructor(state: EnvironmentState, clock: FetchClock, identity: EdgeIdentity) {
    const registers = [this.registry];
    this.edge = new EdgeHttpMetrics(identity);
    this.edge.registerOn(this.registry);
    new Counter({
      name: 'flags_proxy_up',
      help: 'Set to 1 when the service is running.',
      registers,
    }).inc();
    new Gauge({
      name: 'last_metrics_update_epoch_timestamp_ms',
      help: 'Epoch ms when the service last received a feature update.',
      registers,
      collect() {
        this.set(state.lastUpdateMs);
      },
    });
    new Gauge({
      name: 'last_metrics_fetch_epoch_timestamp_ms',
      help: 'Epoch ms when the service last checked for updates (200 or 304).',
      registers,
      collect() {
        this.set(clock.lastCheckMs);
      },
    });
    // A metric object of its own that the registry prints like a prom-client histogram.
    this.registry.registerMetric(this.duration as unknown as Metric);
    collectDefaultMetrics({ register: this.registry });
  }

  /**
   * Records a request's duration (`ms`) under its route pattern (bounded labels) and status, with
   * the bytes of the body handed to Node (`payload`: a stream counts 0, as Edge counts a body of
   * unknown length).
   */
  observe(request: FastifyRequest, reply: FastifyReply, ms: number, payload: unknown): void {
    const bytes =
      typeof payload === 'string'
        ? Buffer.byteLength(payload)
        : payload instanceof Uint8Array
          ? payload.byteLength
          : 0;
    this.observeRoute(
      request.routeOptions.url ?? '(unmatched)',
      request.method,
      reply.statusCode,
      ms,
      bytes,
      request.headers,
    );
  }

  /** `observe` for an answer sent outside Fastify (the evaluation front), by route pattern. */
  observeRoute(
    route: string,
    method: string,
    status: number,
    ms: number,
    bytes: number,
    headers: IncomingHttpHeaders,
  ): void {
    const key = `${method} ${route}`;
    let byStatus = this.byRoute.get(key);
    if (byStatus === undefined) {
      byStatus = [];
      this.byRoute.set(key, byStatus);
    }
    let series = byStatus[status];
    if (series === undefined) {
      series = {
        duration: this.duration.add(route, method, String(status)),
        edge: this.edge.series(route, method, status),
      };
      byStatus[status] = series;
    }
    observeInto(series.duration, ms / 1000);
    if (series.edge !== undefined) this.edge.record(series.edge, ms, bytes, headers);
  }
}
