import type { ClientMetrics, ClientRegister } from '@flags/schemas';
import type { Database } from '../../db/database.js';

const HOUR_MS = 3_600_000;

/** Epoch ms of a bucket boundary (ISO string or epoch ms); NaN when unparseable. */
function instantMs(value: string | number): number {
  const ms = typeof value === 'number' ? value : Date.parse(value);
  // Buckets outside 1970..9999 are not real measurements (and some cannot be stored).
  return ms >= 0 && ms < 253_402_300_800_000 ? ms : Number.NaN;
}

/**
 * Adds one metrics report into the hourly buckets (keyed by flag, app, environment and the hour
 * the bucket stopped in). Flags unknown to the server and all-zero rows are dropped.
 * Returns false when the bucket dates cannot be parsed.
 */
export async function recordMetrics(
  db: Database,
  environment: string,
  body: ClientMetrics,
): Promise<boolean> {
  const bucket = body.bucket;
  if (!bucket) return true;
  const stop = instantMs(bucket.stop);
  if (Number.isNaN(stop) || Number.isNaN(instantMs(bucket.start))) return false;
  const hour = new Date(Math.floor(stop / HOUR_MS) * HOUR_MS);
  const counts: { name: string; yes: number; no: number }[] = [];
  const variants: { name: string; variant: string; count: number }[] = [];
  for (const [name, toggle] of Object.entries(bucket.toggles)) {
    if (toggle.yes > 0 || toggle.no > 0) counts.push({ name, yes: toggle.yes, no: toggle.no });
    if (toggle.variants) {
      for (const [variant, count] of Object.entries(toggle.variants)) {
        if (count > 0) variants.push({ name, variant, count });
      }
    }
  }
  if (counts.length === 0 && variants.length === 0) return true;
  await db.transaction(async (tx) => {
    if (counts.length > 0) {
      await tx.query(
        `INSERT INTO client_metrics (feature_name, app_name, environment, hour, yes, no)
         SELECT x.name, $2, $3, $4, x.yes, x.no
           FROM jsonb_to_recordset($1::jsonb) AS x(name text, yes bigint, no bigint)
           JOIN features f ON f.name = x.name
         ON CONFLICT (feature_name, app_name, environment, hour)
         DO UPDATE SET yes = client_metrics.yes + EXCLUDED.yes, no = client_metrics.no + EXCLUDED.no`,
        [JSON.stringify(counts), body.appName, environment, hour],
      );
    }
    if (variants.length > 0) {
      await tx.query(
        `INSERT INTO client_metrics_variants (feature_name, app_name, environment, hour, variant, count)
         SELECT x.name, $2, $3, $4, x.variant, x.count
           FROM jsonb_to_recordset($1::jsonb) AS x(name text, variant text, count bigint)
           JOIN features f ON f.name = x.name
         ON CONFLICT (feature_name, app_name, environment, hour, variant)
         DO UPDATE SET count = client_metrics_variants.count + EXCLUDED.count`,
        [JSON.stringify(variants), body.appName, environment, hour],
      );
    }
  });
  return true;
}

/** Records an SDK instance (`POST /api/client/register`, and every metrics report). */
export async function recordInstance(
  db: Database,
  environment: string,
  body: Pick<
    ClientRegister,
    'appName' | 'instanceId' | 'sdkVersion' | 'strategies' | 'started' | 'interval'
  >,
  clientIp: string,
): Promise<void> {
  const instanceId = body.instanceId || 'default';
  await db.transaction(async (tx) => {
    await tx.query(
      `INSERT INTO client_applications (app_name, strategies) VALUES ($1, $2::jsonb)
       ON CONFLICT (app_name) DO UPDATE
         SET seen_at = now(),
             strategies = CASE WHEN $3 THEN EXCLUDED.strategies ELSE client_applications.strategies END`,
      [body.appName, JSON.stringify(body.strategies ?? []), body.strategies !== undefined],
    );
    await tx.query(
      `INSERT INTO client_instances (app_name, instance_id, environment, sdk_version, client_ip, started, interval_ms)
       VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (app_name, instance_id, environment) DO UPDATE
         SET last_seen = now(),
             sdk_version = COALESCE(EXCLUDED.sdk_version, client_instances.sdk_version),
             client_ip = EXCLUDED.client_ip,
             started = COALESCE(EXCLUDED.started, client_instances.started),
             interval_ms = COALESCE(EXCLUDED.interval_ms, client_instances.interval_ms)`,
      [
        body.appName,
        instanceId,
        environment,
        body.sdkVersion ?? null,
        clientIp,
        body.started === undefined ? null : String(body.started),
        body.interval === undefined ? null : Math.min(Math.round(body.interval), 2_147_483_647),
      ],
    );
  });
}
