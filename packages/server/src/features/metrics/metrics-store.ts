import {
  type BulkMetric,
  type ClientMetrics,
  instantMs,
  MAX_NAME_LENGTH,
  MAX_REGISTERED_STRATEGIES,
  MAX_REPORT_VARIANTS,
} from '@flags/schemas';
import type { Queryable } from '../../db/database.js';
import { type DefinedVariants, DISABLED_VARIANT } from './defined-variants.js';
import type { SdkInstance } from './sdk-instance.js';

const HOUR_MS = 3_600_000;

/** One flag's counts for one application at one instant (added into that instant's hour). */
export interface MetricCounts {
  readonly featureName: string;
  readonly appName: string;
  readonly atMs: number;
  readonly yes: number;
  readonly no: number;
  readonly variants: Readonly<Record<string, number>> | null | undefined;
}

/**
 * The counts of a `/api/client/metrics` report, at the instant its bucket stopped; undefined when
 * the bucket dates cannot be parsed.
 */
export function countsOfReport(body: ClientMetrics): MetricCounts[] | undefined {
  const bucket = body.bucket;
  if (!bucket) return [];
  const stop = instantMs(bucket.stop);
  if (Number.isNaN(stop) || Number.isNaN(instantMs(bucket.start))) return undefined;
  return Object.entries(bucket.toggles).map(([featureName, toggle]) => ({
    featureName,
    appName: body.appName,
    atMs: stop,
    yes: toggle.yes,
    no: toggle.no,
    variants: toggle.variants,
  }));
}

/**
 * The counts of a bulk report's metrics that belong to `environment`, each at its `timestamp`
 * (Unleash Edge sends its bucket's start); undefined when any timestamp cannot be parsed.
 */
export function countsOfBulk(
  metrics: readonly BulkMetric[],
  environment: string,
): MetricCounts[] | undefined {
  const counts: MetricCounts[] = [];
  for (const metric of metrics) {
    const atMs = instantMs(metric.timestamp);
    if (Number.isNaN(atMs)) return undefined;
    if (metric.environment !== environment) continue;
    counts.push({
      featureName: metric.featureName,
      appName: metric.appName,
      atMs,
      yes: metric.yes,
      no: metric.no,
      variants: metric.variants,
    });
  }
  return counts;
}

interface CountRow {
  name: string;
  app: string;
  hour: string;
  yes: number;
  no: number;
}

interface VariantRow {
  name: string;
  app: string;
  hour: string;
  variant: string;
  count: number;
}

/**
 * The variant counts of one flag's counts worth storing: the names the flag defines and
 * `disabled`, at most `MAX_REPORT_VARIANTS` of them, so a report adds at most that many rows per
 * flag whatever names it carries, and an hour's rows per flag and app stay within the flag's own
 * variants (issue 40).
 */
function storedVariants(
  variants: Readonly<Record<string, number>> | null | undefined,
  defined: ReadonlySet<string> | undefined,
): [string, number][] {
  const kept: [string, number][] = [];
  for (const [variant, count] of Object.entries(variants ?? {})) {
    if (count <= 0) continue;
    if (variant !== DISABLED_VARIANT && !defined?.has(variant)) continue;
    kept.push([variant, count]);
    if (kept.length === MAX_REPORT_VARIANTS) break;
  }
  return kept;
}

/**
 * Adds counts into the hourly buckets (keyed by flag, app, environment and hour). Flags unknown
 * to the server, variants the flag does not define (`storedVariants`) and all-zero counts are
 * dropped. Counts of one key are summed first: one statement's `ON CONFLICT DO UPDATE` may not
 * touch a row twice.
 */
export async function recordCounts(
  tx: Queryable,
  environment: string,
  counts: readonly MetricCounts[],
  definedVariants: DefinedVariants,
): Promise<void> {
  const totals = new Map<string, CountRow>();
  const variantTotals = new Map<string, VariantRow>();
  for (const entry of counts) {
    const hour = new Date(Math.floor(entry.atMs / HOUR_MS) * HOUR_MS).toISOString();
    const key = JSON.stringify([entry.featureName, entry.appName, hour]);
    if (entry.yes > 0 || entry.no > 0) {
      const total = totals.get(key);
      if (total) {
        total.yes += entry.yes;
        total.no += entry.no;
      } else {
        totals.set(key, {
          name: entry.featureName,
          app: entry.appName,
          hour,
          yes: entry.yes,
          no: entry.no,
        });
      }
    }
    for (const [variant, count] of storedVariants(
      entry.variants,
      definedVariants(entry.featureName),
    )) {
      const variantKey = JSON.stringify([key, variant]);
      const total = variantTotals.get(variantKey);
      if (total) total.count += count;
      else {
        variantTotals.set(variantKey, {
          name: entry.featureName,
          app: entry.appName,
          hour,
          variant,
          count,
        });
      }
    }
  }
  if (totals.size > 0) {
    await tx.query(
      `INSERT INTO client_metrics (feature_name, app_name, environment, hour, yes, no)
       SELECT x.name, x.app, $2, x.hour, x.yes, x.no
         FROM jsonb_to_recordset($1::jsonb)
           AS x(name text, app text, hour timestamptz, yes bigint, no bigint)
         JOIN features f ON f.name = x.name
       ON CONFLICT (feature_name, app_name, environment, hour)
       DO UPDATE SET yes = client_metrics.yes + EXCLUDED.yes, no = client_metrics.no + EXCLUDED.no`,
      [JSON.stringify([...totals.values()]), environment],
    );
  }
  if (variantTotals.size > 0) {
    await tx.query(
      `INSERT INTO client_metrics_variants (feature_name, app_name, environment, hour, variant, count)
       SELECT x.name, x.app, $2, x.hour, x.variant, x.count
         FROM jsonb_to_recordset($1::jsonb)
           AS x(name text, app text, hour timestamptz, variant text, count bigint)
         JOIN features f ON f.name = x.name
       ON CONFLICT (feature_name, app_name, environment, hour, variant)
       DO UPDATE SET count = client_metrics_variants.count + EXCLUDED.count`,
      [JSON.stringify([...variantTotals.values()]), environment],
    );
  }
}

/**
 * The strategy names stored for an application: the first `MAX_REGISTERED_STRATEGIES` distinct
 * names of at most `MAX_NAME_LENGTH` characters, the registration schema's bounds, so a caller
 * that skips the schema still cannot store more (issue 40: 1,000 names of any length were kept).
 */
function storedStrategies(strategies: readonly string[]): string[] {
  const kept = new Set<string>();
  for (const name of strategies) {
    if (kept.size === MAX_REGISTERED_STRATEGIES) break;
    if (name.length <= MAX_NAME_LENGTH) kept.add(name);
  }
  return [...kept];
}

/**
 * Records SDK instances as seen (registrations, metrics reports, bulk reports' applications):
 * their applications (with the strategies they report, bounded by `storedStrategies`) and the
 * instances in `environment`. One row per key and statement, the latest report winning.
 */
export async function recordInstances(
  tx: Queryable,
  environment: string,
  instances: readonly SdkInstance[],
  clientIp: string,
): Promise<void> {
  if (instances.length === 0) return;
  const applications = new Map<string, readonly string[] | undefined>();
  const latest = new Map<string, SdkInstance>();
  for (const instance of instances) {
    applications.set(instance.appName, instance.strategies ?? applications.get(instance.appName));
    latest.set(JSON.stringify([instance.appName, instance.instanceId]), instance);
  }
  await tx.query(
    `INSERT INTO client_applications (app_name, strategies)
     SELECT x.app, COALESCE(x.strategies, '[]'::jsonb)
       FROM jsonb_to_recordset($1::jsonb) AS x(app text, strategies jsonb)
     ON CONFLICT (app_name) DO UPDATE
       SET seen_at = now(),
           -- The stored list stays unless this report carries one (EXCLUDED has '[]' then).
           strategies = COALESCE(
             (SELECT y.strategies FROM jsonb_to_recordset($1::jsonb) AS y(app text, strategies jsonb)
               WHERE y.app = EXCLUDED.app_name),
             client_applications.strategies)`,
    [
      JSON.stringify(
        [...applications].map(([app, strategies]) => ({
          app,
          strategies: strategies ? storedStrategies(strategies) : null,
        })),
      ),
    ],
  );
  await tx.query(
    `INSERT INTO client_instances
       (app_name, instance_id, environment, sdk_version, client_ip, started, interval_ms, connection_id)
     SELECT x.app, x.instance, $2, x.sdk, $3, x.started, x.interval_ms, x.connection
       FROM jsonb_to_recordset($1::jsonb)
         AS x(app text, instance text, sdk text, started text, interval_ms integer, connection text)
     ON CONFLICT (app_name, instance_id, environment) DO UPDATE
       SET last_seen = now(),
           sdk_version = COALESCE(EXCLUDED.sdk_version, client_instances.sdk_version),
           client_ip = EXCLUDED.client_ip,
           started = COALESCE(EXCLUDED.started, client_instances.started),
           interval_ms = COALESCE(EXCLUDED.interval_ms, client_instances.interval_ms),
           connection_id = COALESCE(EXCLUDED.connection_id, client_instances.connection_id)`,
    [
      JSON.stringify(
        [...latest.values()].map((instance) => ({
          app: instance.appName,
          instance: instance.instanceId,
          sdk: instance.sdkVersion,
          started: instance.started,
          interval_ms: instance.intervalMs,
          connection: instance.connectionId,
        })),
      ),
      environment,
      clientIp,
    ],
  );
}
