import type { FastifyReply, FastifyRequest } from 'fastify';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { ProxyState } from './state.js';

/** Where the poller reports its last successful upstream check (200 or 304), epoch ms. */
export interface FetchClock {
  readonly lastCheckMs: number;
}

const DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

type Observe = (seconds: number) => void;

/**
 * The proxy's Prometheus metrics in a registry of its own (several proxies in one process do not
 * collide): `flags_proxy_up`, the two sync timestamps of the proxy document, process/runtime
 * defaults, and request durations by route and status.
 */
export class ProxyMetrics {
  readonly registry = new Registry();
  private readonly duration: Histogram<'route' | 'method' | 'status'>;
  /** One bound observer per route, method and status: no label hashing per request. */
  private readonly observers = new Map<string, Observe[]>();

  constructor(state: ProxyState, clock: FetchClock) {
    const registers = [this.registry];
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
    this.duration = new Histogram({
      name: 'flags_proxy_http_request_duration_seconds',
      help: 'Time to answer HTTP requests, by route, method and status.',
      labelNames: ['route', 'method', 'status'],
      buckets: DURATION_BUCKETS,
      registers,
    });
    collectDefaultMetrics({ register: this.registry });
  }

  /** Records a request's duration (`ms`) under its route pattern (bounded labels) and status. */
  observe(request: FastifyRequest, reply: FastifyReply, ms: number): void {
    const route = request.routeOptions.url ?? '(unmatched)';
    const method = request.method;
    const status = reply.statusCode;
    const key = `${method} ${route}`;
    let byStatus = this.observers.get(key);
    if (byStatus === undefined) {
      byStatus = [];
      this.observers.set(key, byStatus);
    }
    let observe = byStatus[status];
    if (observe === undefined) {
      const child = this.duration.labels({ route, method, status: String(status) });
      observe = (seconds) => child.observe(seconds);
      byStatus[status] = observe;
    }
    observe(ms / 1000);
  }
}
