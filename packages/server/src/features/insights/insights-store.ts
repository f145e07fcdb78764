import type {
  EnvironmentTypeTrend,
  InstanceInsights,
  MetricsSummaryTrend,
  ProjectFlagTrend,
} from '@flags/schemas';
import type { Queryable } from '../../db/database.js';
import { addDays, endOfDay, isoWeek, utcDay, weekStart } from './calendar.js';

const DAY_MS = 86_400_000;

/** Users seen within this many days count as active. */
export const ACTIVE_USER_DAYS = 60;

/** The event type whose first occurrence in a `production`-type environment ends time to production. */
export const ENABLED_EVENT = 'feature-environment-enabled';

interface ProjectFlags {
  project: string;
  total: number;
  stale: number;
  potentially_stale: number;
  users: number;
}

/**
 * `round(100 − 100·stale/total − 100·potentiallyStale/total)`; 100 for a project without flags
 * (the formula of Unleash's project health rating).
 */
export function health(total: number, stale: number, potentiallyStale: number): number {
  if (total === 0) return 100;
  return Math.round(100 - (100 * stale) / total - (100 * potentiallyStale) / total);
}

/**
 * Mean whole days from creation to the first enabling in a `production`-type environment, per
 * project, over its release flags (archived ones too: they did reach production). One decimal.
 */
async function timeToProduction(tx: Queryable, now: Date): Promise<Map<string, number>> {
  const rows = await tx.query<{
    project: string;
    created_at: Date | string;
    enabled_at: Date | string;
  }>(
    `SELECT f.project, f.created_at, min(e.created_at) AS enabled_at
       FROM features f
       JOIN events e ON e.feature_name = f.name AND e.type = $2
                    AND e.created_at >= f.created_at AND e.created_at <= $1
       JOIN environments env ON env.name = e.environment AND env.type = 'production'
      WHERE f.type = 'release' AND f.created_at <= $1
      GROUP BY f.name, f.project, f.created_at`,
    [now, ENABLED_EVENT],
  );
  const sums = new Map<string, { days: number; flags: number }>();
  for (const row of rows) {
    const days = Math.floor(
      (new Date(row.enabled_at).getTime() - new Date(row.created_at).getTime()) / DAY_MS,
    );
    const sum = sums.get(row.project) ?? { days: 0, flags: 0 };
    sum.days += days;
    sum.flags += 1;
    sums.set(row.project, sum);
  }
  const means = new Map<string, number>();
  for (const [project, sum] of sums) means.set(project, Number((sum.days / sum.flags).toFixed(1)));
  return means;
}

interface MetricsRow {
  project: string;
  total_yes: number;
  total_no: number;
  total_apps: number;
  total_flags: number;
  total_environments: number;
}

interface EnvironmentRow {
  environment_type: string;
  total_updates: number;
}

/** One day's insights rows, as the snapshot tables hold them. */
interface DayRows {
  users: { total: number; active: number };
  flags: (ProjectFlags & { health: number; ttp: number | null })[];
  metrics: MetricsRow[];
  environments: EnvironmentRow[];
}

/**
 * The insights rows of the UTC day of `now`, from current data. Per-day state: users and flags.
 * Week-to-date sums (Monday 00:00 UTC up to `now`): client metrics and configuration updates.
 */
async function computeDay(db: Queryable, now: Date): Promise<DayRows> {
  const monday = weekStart(now);
  const [[users], flags, ttp, metrics, environments] = await Promise.all([
    db.query<{ total: number; active: number }>(
      `SELECT count(*)::int AS total,
              count(*) FILTER (WHERE seen_at > $1::timestamptz - make_interval(days => $2)
                                 AND seen_at <= $1)::int AS active
         FROM users
        WHERE NOT is_service AND created_at <= $1 AND (deleted_at IS NULL OR deleted_at > $1)`,
      [now, ACTIVE_USER_DAYS],
    ),
    db.query<ProjectFlags>(
      `WITH flags AS (
         SELECT p.id AS project,
                count(f.name)::int AS total,
                count(f.name) FILTER (WHERE f.stale)::int AS stale,
                count(f.name) FILTER (
                  WHERE NOT f.stale AND t.lifetime_days IS NOT NULL
                    AND f.created_at + make_interval(days => t.lifetime_days) < $1)::int AS potentially_stale
           FROM projects p
           LEFT JOIN features f ON f.project = p.id AND f.created_at <= $1
                               AND (f.archived_at IS NULL OR f.archived_at > $1)
           LEFT JOIN feature_types t ON t.id = f.type
          GROUP BY p.id
       ), access AS (
         SELECT p.id AS project, count(DISTINCT u.id)::int AS users
           FROM projects p
           LEFT JOIN role_user ru ON ru.project = p.id OR (ru.project IS NULL AND ru.role_id IN (
                  SELECT id FROM roles WHERE type = 'root' AND name = 'Admin'))
           LEFT JOIN users u ON u.id = ru.user_id AND NOT u.is_service AND u.created_at <= $1
                            AND (u.deleted_at IS NULL OR u.deleted_at > $1)
          GROUP BY p.id
       )
       SELECT flags.*, access.users FROM flags JOIN access USING (project) ORDER BY project`,
      [now],
    ),
    timeToProduction(db, now),
    // Week-to-date client metrics of each project's flags, from the hourly buckets.
    db.query<MetricsRow>(
      `SELECT p.id AS project, COALESCE(sum(m.yes), 0)::float8 AS total_yes,
              COALESCE(sum(m.no), 0)::float8 AS total_no,
              count(DISTINCT m.app_name)::int AS total_apps,
              count(DISTINCT m.feature_name)::int AS total_flags,
              count(DISTINCT m.environment)::int AS total_environments
         FROM projects p
         LEFT JOIN features f ON f.project = p.id
         LEFT JOIN client_metrics m ON m.feature_name = f.name AND m.hour >= $2 AND m.hour <= $1
        GROUP BY p.id ORDER BY p.id`,
      [now, monday],
    ),
    // Week-to-date configuration updates: every event recorded against an environment.
    db.query<EnvironmentRow>(
      `SELECT env.type AS environment_type, count(e.id)::int AS total_updates
         FROM environments env
         LEFT JOIN events e ON e.environment = env.name AND e.created_at >= $2 AND e.created_at <= $1
        GROUP BY env.type ORDER BY env.type`,
      [now, monday],
    ),
  ]);
  return {
    users: users!,
    flags: flags.map((row) => ({
      ...row,
      health: health(row.total, row.stale, row.potentially_stale),
      ttp: ttp.get(row.project) ?? null,
    })),
    metrics,
    environments,
  };
}

/**
 * Writes the snapshot rows of the UTC day of `now` (replacing that day's earlier rows, so running
 * it again the same day changes nothing unless the data changed).
 */
export async function captureSnapshot(tx: Queryable, now: Date): Promise<void> {
  const day = utcDay(now);
  const rows = await computeDay(tx, now);
  await tx.query(
    `INSERT INTO insights_user_trends (day, total, active, captured_at) VALUES ($1, $2, $3, $4)
     ON CONFLICT (day) DO UPDATE
       SET total = EXCLUDED.total, active = EXCLUDED.active, captured_at = EXCLUDED.captured_at`,
    [day, rows.users.total, rows.users.active, now],
  );
  await tx.query(
    `DELETE FROM insights_flag_trends
      WHERE day = $1 AND project NOT IN (SELECT jsonb_array_elements_text($2::jsonb))`,
    [day, JSON.stringify(rows.flags.map((row) => row.project))],
  );
  await tx.query(
    `INSERT INTO insights_flag_trends
       (day, project, total, stale, potentially_stale, health, time_to_production, users, captured_at)
     SELECT $1, x.project, x.total, x.stale, x.potentially_stale, x.health, x.ttp, x.users, $3
       FROM jsonb_to_recordset($2::jsonb) AS x(project text, total int, stale int,
              potentially_stale int, health int, ttp double precision, users int)
     ON CONFLICT (day, project) DO UPDATE
       SET total = EXCLUDED.total, stale = EXCLUDED.stale,
           potentially_stale = EXCLUDED.potentially_stale, health = EXCLUDED.health,
           time_to_production = EXCLUDED.time_to_production, users = EXCLUDED.users,
           captured_at = EXCLUDED.captured_at`,
    [day, JSON.stringify(rows.flags), now],
  );
  await tx.query(
    `DELETE FROM insights_metrics_trends
      WHERE day = $1 AND project NOT IN (SELECT jsonb_array_elements_text($2::jsonb))`,
    [day, JSON.stringify(rows.metrics.map((row) => row.project))],
  );
  await tx.query(
    `INSERT INTO insights_metrics_trends
       (day, project, total_yes, total_no, total_apps, total_flags, total_environments, captured_at)
     SELECT $1, x.project, x.total_yes, x.total_no, x.total_apps, x.total_flags,
            x.total_environments, $3
       FROM jsonb_to_recordset($2::jsonb) AS x(project text, total_yes bigint,
              total_no bigint, total_apps int, total_flags int, total_environments int)
     ON CONFLICT (day, project) DO UPDATE
       SET total_yes = EXCLUDED.total_yes, total_no = EXCLUDED.total_no,
           total_apps = EXCLUDED.total_apps, total_flags = EXCLUDED.total_flags,
           total_environments = EXCLUDED.total_environments, captured_at = EXCLUDED.captured_at`,
    [day, JSON.stringify(rows.metrics), now],
  );
  await tx.query(
    `DELETE FROM insights_environment_trends
      WHERE day = $1 AND environment_type NOT IN (SELECT jsonb_array_elements_text($2::jsonb))`,
    [day, JSON.stringify(rows.environments.map((row) => row.environment_type))],
  );
  await tx.query(
    `INSERT INTO insights_environment_trends (day, environment_type, total_updates, captured_at)
     SELECT $1, x.environment_type, x.total_updates, $3
       FROM jsonb_to_recordset($2::jsonb) AS x(environment_type text, total_updates int)
     ON CONFLICT (day, environment_type) DO UPDATE
       SET total_updates = EXCLUDED.total_updates, captured_at = EXCLUDED.captured_at`,
    [day, JSON.stringify(rows.environments), now],
  );
}

/**
 * Keeps, per week and key, the row of the latest day (rows arrive ordered by day); sorted by
 * week, then key. Week strings sort in time order (`2026-53` < `2027-01`).
 */
function latestPerWeek<T extends { week: string }>(rows: T[], key: (row: T) => string): T[] {
  const latest = new Map<string, T>();
  for (const row of rows) latest.set(`${row.week}\u0000${key(row)}`, row);
  return [...latest.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, row]) => row);
}

/**
 * The insights of the days `from`..`to` (inclusive, `yyyy-MM-dd`): daily series for users and
 * flags; weekly series (ISO week of the capture day) for the rest, each from the latest capture
 * of that week within the range. Past days come from the snapshots; today (the UTC day of `now`),
 * when in the range, is computed from current data, so a change shows at once instead of at the
 * next hourly snapshot (issue 18).
 */
export async function readInsights(
  db: Queryable,
  from: string,
  to: string,
  now: Date,
): Promise<InstanceInsights> {
  const today = utcDay(now);
  const live = from <= today && today <= to;
  const range = [from, live ? addDays(today, -1) : to];
  const [users, flagDays, projects, metrics, environments, todayRows] = await Promise.all([
    db.query<{ day: string; total: number; active: number }>(
      `SELECT to_char(day, 'YYYY-MM-DD') AS day, total, active FROM insights_user_trends
        WHERE day BETWEEN $1 AND $2 ORDER BY day`,
      range,
    ),
    db.query<{ day: string; total: number; stale: number; potentially_stale: number }>(
      `SELECT to_char(day, 'YYYY-MM-DD') AS day, sum(total)::int AS total,
              sum(stale)::int AS stale, sum(potentially_stale)::int AS potentially_stale
         FROM insights_flag_trends WHERE day BETWEEN $1 AND $2 GROUP BY day ORDER BY day`,
      range,
    ),
    db.query<{
      day: string;
      project: string;
      total: number;
      stale: number;
      potentially_stale: number;
      health: number;
      time_to_production: number | null;
      users: number;
    }>(
      `SELECT to_char(day, 'YYYY-MM-DD') AS day, project, total, stale, potentially_stale, health,
              time_to_production, users
         FROM insights_flag_trends WHERE day BETWEEN $1 AND $2 ORDER BY day, project`,
      range,
    ),
    db.query<MetricsRow & { day: string }>(
      `SELECT to_char(day, 'YYYY-MM-DD') AS day, project, total_yes::float8 AS total_yes,
              total_no::float8 AS total_no, total_apps, total_flags, total_environments
         FROM insights_metrics_trends WHERE day BETWEEN $1 AND $2 ORDER BY day, project`,
      range,
    ),
    db.query<EnvironmentRow & { day: string }>(
      `SELECT to_char(day, 'YYYY-MM-DD') AS day, environment_type, total_updates
         FROM insights_environment_trends WHERE day BETWEEN $1 AND $2
        ORDER BY day, environment_type`,
      range,
    ),
    live ? computeDay(db, now) : undefined,
  ]);
  if (todayRows) {
    users.push({ day: today, ...todayRows.users });
    const sum = (key: 'total' | 'stale' | 'potentially_stale') =>
      todayRows.flags.reduce((total, row) => total + row[key], 0);
    flagDays.push({
      day: today,
      total: sum('total'),
      stale: sum('stale'),
      potentially_stale: sum('potentially_stale'),
    });
    for (const row of todayRows.flags) {
      projects.push({ day: today, ...row, time_to_production: row.ttp });
    }
    for (const row of todayRows.metrics) metrics.push({ day: today, ...row });
    for (const row of todayRows.environments) environments.push({ day: today, ...row });
  }

  const projectFlagTrends = latestPerWeek(
    projects.map(
      (row): ProjectFlagTrend => ({
        week: isoWeek(row.day),
        project: row.project,
        date: endOfDay(row.day),
        total: row.total,
        active: row.total - row.stale - row.potentially_stale,
        stale: row.stale,
        potentiallyStale: row.potentially_stale,
        health: row.health,
        ...(row.time_to_production === null ? {} : { timeToProduction: row.time_to_production }),
        users: row.users,
      }),
    ),
    (row) => row.project,
  );
  const metricsSummaryTrends = latestPerWeek(
    metrics.map(
      (row): MetricsSummaryTrend => ({
        week: isoWeek(row.day),
        date: endOfDay(row.day),
        project: row.project,
        totalRequests: row.total_yes + row.total_no,
        totalYes: row.total_yes,
        totalNo: row.total_no,
        totalApps: row.total_apps,
        totalFlags: row.total_flags,
        totalEnvironments: row.total_environments,
      }),
    ),
    (row) => row.project,
  );
  const environmentTypeTrends = latestPerWeek(
    environments.map(
      (row): EnvironmentTypeTrend => ({
        date: endOfDay(row.day),
        week: isoWeek(row.day),
        environmentType: row.environment_type,
        totalUpdates: row.total_updates,
      }),
    ),
    (row) => row.environmentType,
  );

  return {
    userTrends: users.map((row) => ({
      date: endOfDay(row.day),
      total: row.total,
      active: row.active,
      inactive: row.total - row.active,
    })),
    flagTrends: flagDays.map((row) => ({
      date: endOfDay(row.day),
      total: row.total,
      active: row.total - row.stale - row.potentially_stale,
      stale: row.stale,
      potentiallyStale: row.potentially_stale,
    })),
    projectFlagTrends,
    metricsSummaryTrends,
    environmentTypeTrends,
  };
}
