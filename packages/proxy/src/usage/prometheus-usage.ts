import { Counter, Gauge, type Registry } from 'prom-client';
import { DROPPED_KINDS, type PendingBudget } from './pending-budget.js';

/**
 * Pending usage in Prometheus, read when scraped: the estimated bytes it takes
 * (`flags_proxy_usage_pending_bytes`, bounded by `usageMaxPendingBytes`) and the entries dropped
 * since start by kind (`flags_proxy_usage_dropped_total{kind="flag"|"variant"|"registration"|"impact"}`).
 * Nothing when usage metrics are off.
 */
export function registerUsageMetrics(registry: Registry, budget: PendingBudget | undefined): void {
  if (budget === undefined) return;
  const registers = [registry];
  new Gauge({
    name: 'flags_proxy_usage_pending_bytes',
    help: 'Estimated memory of usage metrics not yet sent upstream (a send in flight included), bytes.',
    registers,
    collect() {
      this.set(budget.bytes);
    },
  });
  new Counter({
    name: 'flags_proxy_usage_dropped_total',
    help: 'Usage entries dropped since start because a bound was reached, by kind (flag, variant, registration, impact).',
    labelNames: ['kind'] as const,
    registers,
    collect() {
      this.reset();
      for (const kind of DROPPED_KINDS) this.inc({ kind }, budget.dropped[kind]);
    },
  });
}
