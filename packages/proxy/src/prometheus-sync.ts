import { Counter, Gauge, type Registry } from 'prom-client';
import type { TokenValidator } from './auth/token-validator.js';
import type { Environment, Environments } from './sync/environments.js';

export interface SyncMetricsSources {
  readonly environments: Environments;
  /** `undefined` when no startup token is Unleash-format: every token count is 0. */
  readonly validator: TokenValidator | undefined;
}

/**
 * The sync state in Prometheus, read when scraped (nothing is counted on the request path):
 * per environment (label `environment`, startup and dynamic ones alike) whether it holds a
 * snapshot, when it last changed and how long ago, when the upstream last answered, and how many
 * flags it has; and the validated-token cache by status with the validation calls made. Times are
 * in seconds, as Prometheus names want them (`flags_proxy_*`; the two `*_ms` gauges of the proxy
 * document stay as they are).
 */
export function registerSyncMetrics(registry: Registry, sources: SyncMetricsSources): void {
  const { environments, validator } = sources;
  const registers = [registry];
  /** A gauge with one sample per environment; `value` may leave an environment out (`undefined`). */
  const perEnvironment = (
    name: string,
    help: string,
    value: (environment: Environment, at: number) => number | undefined,
  ) =>
    new Gauge({
      name,
      help,
      labelNames: ['environment'] as const,
      registers,
      collect() {
        this.reset();
        const at = Date.now();
        for (const environment of environments.all()) {
          const sample = value(environment, at);
          if (sample !== undefined) this.set({ environment: environment.name }, sample);
        }
      },
    });
  perEnvironment(
    'flags_proxy_environment_ready',
    'Whether the environment holds a snapshot (from upstream, backup or bootstrap): 1 or 0.',
    (environment) => (environment.state.ready ? 1 : 0),
  );
  perEnvironment(
    'flags_proxy_environment_last_update_timestamp_seconds',
    'Epoch seconds of the environment’s last new payload (0: none yet).',
    (environment) => environment.state.lastUpdateMs / 1000,
  );
  // Without a snapshot there is no revision to age and no flag to count.
  perEnvironment(
    'flags_proxy_environment_revision_age_seconds',
    'Seconds since the environment’s payload (its upstream ETag) last changed.',
    (environment, at) =>
      environment.state.ready ? Math.max(0, at - environment.state.lastUpdateMs) / 1000 : undefined,
  );
  perEnvironment(
    'flags_proxy_environment_last_check_timestamp_seconds',
    'Epoch seconds of the environment’s last successful upstream check, 200 or 304 (0: none yet).',
    (environment) => environment.lastCheckMs / 1000,
  );
  perEnvironment(
    'flags_proxy_environment_flags',
    'Flags in the environment’s snapshot.',
    (environment) => environment.state.current?.snapshot.names.length,
  );
  new Gauge({
    name: 'flags_proxy_tokens',
    help: 'Unleash-format tokens known to the validator, by status: valid, invalid (remembered refusals) and pending (waiting for a validation call).',
    labelNames: ['status'] as const,
    registers,
    collect() {
      const counts = validator?.counts() ?? { valid: 0, invalid: 0, pending: 0 };
      for (const [status, count] of Object.entries(counts)) this.set({ status }, count);
    },
  });
  new Counter({
    name: 'flags_proxy_token_validation_calls_total',
    help: 'Calls made to the upstream’s /edge/validate.',
    registers,
    collect() {
      // The validator keeps the count; a counter has no `set`, so it is rebuilt from it.
      this.reset();
      this.inc(validator?.calls ?? 0);
    },
  });
}
