import type { ServerConfig } from '../../config/options.js';
import { ADVISORY_LOCK_KEYS } from '../../db/advisory-locks.js';
import type { Database } from '../../db/database.js';

const DAY_MS = 86_400_000;
/** Rows one delete removes at most: short transactions that never hold many row locks. */
export const RETENTION_BATCH_SIZE = 1000;

export type RetentionSettings = Pick<
  ServerConfig,
  'clientInstanceRetentionDays' | 'clientMetricsRetentionDays'
>;

/** Rows deleted from one table in one run, and how many bounded deletes that took. */
export interface TableRetention {
  deleted: number;
  batches: number;
}

export type RetentionResult = Record<keyof typeof TABLES, TableRetention>;

/**
 * The tables cleaned, each by its timestamp column, rows named by their primary key, in this
 * order (an application goes once its instances have). The insights read the metrics buckets of
 * the current week only (`MIN_METRICS_RETENTION_DAYS`); the instances and applications nothing
 * but the admin's view of connected SDKs.
 */
const TABLES = {
  instances: {
    table: 'client_instances',
    column: 'last_seen',
    key: 'app_name, instance_id, environment',
    days: (settings: RetentionSettings) => settings.clientInstanceRetentionDays,
    keep: undefined,
  },
  metrics: {
    table: 'client_metrics',
    column: 'hour',
    key: 'feature_name, app_name, environment, hour',
    days: (settings: RetentionSettings) => settings.clientMetricsRetentionDays,
    keep: undefined,
  },
  variants: {
    table: 'client_metrics_variants',
    column: 'hour',
    key: 'feature_name, app_name, environment, hour, variant',
    days: (settings: RetentionSettings) => settings.clientMetricsRetentionDays,
    keep: undefined,
  },
  // Every app name a registration or report carries gets a row (issue 40): it expires as its
  // instances do, and only once none is left (an instance seen lately keeps its application).
  applications: {
    table: 'client_applications',
    column: 'seen_at',
    key: 'app_name',
    days: (settings: RetentionSettings) => settings.clientInstanceRetentionDays,
    keep: 'EXISTS (SELECT 1 FROM client_instances i WHERE i.app_name = client_applications.app_name)',
  },
} as const;

/**
 * One bounded delete of rows older than `$1` (and not kept by the table's `keep` condition), at
 * most `$2` of them; the outer condition is checked again because an instance seen meanwhile
 * (its `last_seen` moved) must stay.
 */
const deleteSql = ({ table, column, key, keep }: (typeof TABLES)[keyof typeof TABLES]) => {
  const old = keep === undefined ? `${column} < $1` : `${column} < $1 AND NOT ${keep}`;
  return `
  WITH gone AS (
    DELETE FROM ${table}
     WHERE (${key}) IN (SELECT ${key} FROM ${table} WHERE ${old} LIMIT $2)
       AND ${old}
    RETURNING 1)
  SELECT count(*)::int AS deleted FROM gone`;
};

const DELETES = Object.entries(TABLES).map(([name, spec]) => ({
  name: name as keyof typeof TABLES,
  days: spec.days,
  sql: deleteSql(spec),
}));

/**
 * One batch in its own transaction, under the transaction-scoped advisory lock (keyed by the
 * schema too, as the snapshot's): `undefined` when another server holds it.
 */
async function deleteBatch(
  db: Database,
  sql: string,
  cutoff: Date,
  batchSize: number,
): Promise<number | undefined> {
  return db.transaction(async (tx) => {
    const [lock] = await tx.query<{ locked: boolean }>(
      'SELECT pg_try_advisory_xact_lock($1, hashtext(current_schema())) AS locked',
      [ADVISORY_LOCK_KEYS.retention],
    );
    if (!lock?.locked) return undefined;
    const [row] = await tx.query<{ deleted: number }>(sql, [cutoff, batchSize]);
    return row!.deleted;
  });
}

/**
 * Deletes the SDK instances and applications not seen and the metrics buckets older than their
 * settings allow, relative to `now`, in deletes of at most `batchSize` rows until none is left.
 * Returns `undefined` when the run did not finish: another server holds the lock (it does the work), or
 * `shouldStop` said so between two batches.
 */
export async function runRetention(
  db: Database,
  now: Date,
  settings: RetentionSettings,
  options: { batchSize?: number; shouldStop?: () => boolean } = {},
): Promise<RetentionResult | undefined> {
  const batchSize = options.batchSize ?? RETENTION_BATCH_SIZE;
  const result: Partial<RetentionResult> = {};
  for (const { name, days, sql } of DELETES) {
    const cutoff = new Date(now.getTime() - days(settings) * DAY_MS);
    const table: TableRetention = { deleted: 0, batches: 0 };
    for (;;) {
      if (options.shouldStop?.()) return undefined;
      const deleted = await deleteBatch(db, sql, cutoff, batchSize);
      if (deleted === undefined) return undefined;
      table.deleted += deleted;
      table.batches += 1;
      if (deleted < batchSize) break;
    }
    result[name] = table;
  }
  return result as RetentionResult;
}
