import { Gauge, type Registry } from 'prom-client';
import type { TokenValidator } from './auth/token-validator.js';
import type { EdgeIdentity } from './prometheus-edge-http.js';
import type { Environments } from './sync/environments.js';
import type { MetricsReporter } from './usage/reporter.js';

export interface EdgeStateSources {
  readonly identity: EdgeIdentity;
  readonly environments: Environments;
  /** `undefined` when no startup token is Unleash-format (no token is validated). */
  readonly validator: TokenValidator | undefined;
  /** Keys trusted without asking the upstream (`pretrustedTokens`). */
  readonly pretrusted: number;
  /** `undefined` when the app is built without one (in-code `buildApp`). */
  readonly reporter: MetricsReporter | undefined;
}

/**
 * Unleash Edge 20.4's gauges of state, read when scraped (nothing on the request path):
 * `token_status` (`crates/oss/unleash-edge-appstate/src/token_cache_observer.rs`),
 * `polling_revision_id` and `polling_last_update` per synced token's environment and projects
 * (`crates/oss/unleash-edge-feature-refresh/src/lib.rs`; here a payload that arrived by stream
 * counts as well as a polled one), `metrics_send_error` and `metrics_interval_between_send`
 * (`crates/oss/unleash-edge-metrics/src/send_unleash_metrics.rs`).
 */
export function registerEdgeStateMetrics(registry: Registry, sources: EdgeStateSources): void {
  const { identity, environments, validator, reporter } = sources;
  const registers = [registry];
  const ids = { app_name: identity.appName, instance_id: identity.instanceId };
  new Gauge({
    name: 'token_status',
    help: 'Tokens validated',
    labelNames: ['app_name', 'instance_id', 'status'],
    registers,
    collect() {
      const counts = validator?.counts() ?? { valid: 0, invalid: 0, pending: 0 };
      this.set({ ...ids, status: 'invalid' }, counts.invalid);
      this.set({ ...ids, status: 'unknown' }, counts.pending);
      this.set({ ...ids, status: 'trusted' }, sources.pretrusted);
      this.set({ ...ids, status: 'validated' }, counts.valid);
    },
  });
  /** One sample per synced token (its environment and projects, as Edge labels them). */
  const perFeed = (
    name: string,
    help: string,
    value: (revision: number | undefined, lastUpdateMs: number) => number | undefined,
  ) =>
    new Gauge({
      name,
      help,
      labelNames: ['environment', 'projects'],
      registers,
      collect() {
        this.reset();
        for (const environment of environments.all())
          for (const feed of environment.feedStatuses()) {
            if (feed.lastUpdateMs === 0) continue;
            const sample = value(feed.revisionId, feed.lastUpdateMs);
            if (sample !== undefined)
              this.set(
                { environment: environment.name, projects: (feed.projects ?? []).join(',') },
                sample,
              );
          }
      },
    });
  perFeed('polling_revision_id', 'Revision ID for polling fetcher', (revision) => revision);
  perFeed('polling_last_update', 'Timestamp of last update for polling fetcher', (_, ms) =>
    Math.floor(ms / 1000),
  );
  if (reporter === undefined || !reporter.enabled) return;
  new Gauge({
    name: 'metrics_send_error',
    help: 'Failures to send metrics',
    registers,
    collect() {
      this.set(reporter.unexpectedFailures);
    },
  });
  new Gauge({
    name: 'metrics_interval_between_send',
    help: 'Interval between sending metrics',
    registers,
    collect() {
      this.set(Math.round(reporter.currentIntervalMs / 1000));
    },
  });
}
