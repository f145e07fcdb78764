import type { Queryable, Transaction } from '../../db/database.js';
import { ApiError } from '../../errors.js';
import { type EventTag, tagsOfFlag } from '../events/event-store.js';
import { type FeatureStrategy, listStrategies } from './feature-strategy-store.js';

/** A flag's row. */
export interface FlagRow {
  name: string;
  project: string;
  type: string;
  description: string | null;
  stale: boolean;
  impression_data: boolean;
  archived_at: Date | string | null;
  created_at: Date | string;
  version: string;
}

/** A flag row's columns, its version read from `version` (an expression). */
const flagColumns = (version = 'version') => `name, project, type, description, stale,
  impression_data, archived_at, created_at, (${version})::text AS version`;

const iso = (value: Date | string | null) =>
  value === null ? null : new Date(value).toISOString();

/** A flag whatever its project and state, or `undefined`. */
export async function findFlag(db: Queryable, name: string): Promise<FlagRow | undefined> {
  const rows = await db.query<FlagRow>(`SELECT ${flagColumns()} FROM features WHERE name = $1`, [
    name,
  ]);
  return rows[0];
}

/** The flag's `ETag`: its version, quoted. */
export const flagETag = (flag: Pick<FlagRow, 'version'>) => `"${flag.version}"`;

/**
 * Whether an `If-Match` header admits the flag's current version: `*`, or one of its entity tags
 * (weak or strong) is the flag's `ETag`.
 */
function ifMatchAdmits(header: string, flag: FlagRow): boolean {
  const wanted = flagETag(flag);
  return header
    .split(',')
    .map((tag) => tag.trim().replace(/^W\//, ''))
    .some((tag) => tag === '*' || tag === wanted);
}

/**
 * The active flag `name` of `project`, locked for the rest of the transaction (so the version an
 * `If-Match` names cannot move before the write commits) and its version bumped: the write about
 * to happen is a change of the flag (one statement, where a lock and a bump were two). Answers the
 * row as it was before. 404 when there is none; 412 when `ifMatch` names another version (the
 * transaction then rolls back, bump included).
 */
export async function lockFlag(
  tx: Queryable,
  project: string,
  name: string,
  ifMatch: string | undefined,
): Promise<FlagRow> {
  const rows = await tx.query<FlagRow>(
    `UPDATE features SET version = version + 1
      WHERE name = $1 AND project = $2 AND archived_at IS NULL
      RETURNING ${flagColumns('version - 1')}`,
    [name, project],
  );
  const flag = rows[0];
  if (!flag) {
    throw new ApiError(
      'NOT_FOUND',
      `There is no active feature "${name}" in project "${project}".`,
    );
  }
  if (ifMatch !== undefined && !ifMatchAdmits(ifMatch, flag)) {
    throw new ApiError(
      'PRECONDITION_FAILED',
      `Feature "${name}" is at version ${flagETag(flag)}, not ${ifMatch}: it changed since it was read. Read it again and retry.`,
    );
  }
  return flag;
}

/** Marks a change of the flag, its strategies, variants, environments or dependencies. */
export function bumpFlagVersion(tx: Transaction, name: string): void {
  tx.send('UPDATE features SET version = version + 1 WHERE name = $1', [name]);
}

/** 404 unless the environment exists and is enabled for the project. */
export async function requireProjectEnvironment(
  db: Queryable,
  project: string,
  environment: string,
): Promise<void> {
  const rows = await db.query(
    `SELECT 1 FROM project_environments WHERE project_id = $1 AND environment_name = $2`,
    [project, environment],
  );
  if (rows.length === 0) {
    throw new ApiError(
      'NOT_FOUND',
      `Environment "${environment}" does not exist or is not enabled in project "${project}".`,
    );
  }
}

/** A flag's metadata as events and the admin API carry it. */
export function flagMetadata(flag: FlagRow) {
  return {
    name: flag.name,
    project: flag.project,
    type: flag.type,
    description: flag.description,
    stale: flag.stale,
    impressionData: flag.impression_data,
    createdAt: iso(flag.created_at),
    archived: flag.archived_at !== null,
    ...(flag.archived_at === null ? {} : { archivedAt: iso(flag.archived_at) }),
  };
}

export interface FlagEnvironment {
  name: string;
  environment: string;
  featureName: string;
  type: string;
  enabled: boolean;
  sortOrder: number;
  variantCount: number;
  strategies: FeatureStrategy[];
  variants: unknown[];
  hasStrategies: boolean;
  hasEnabledStrategies: boolean;
  lastSeenAt: null;
}

/** The flag's state in each environment of its project (sort order, then name). */
export async function flagEnvironments(
  db: Queryable,
  flag: Pick<FlagRow, 'name' | 'project'>,
  only?: string,
): Promise<FlagEnvironment[]> {
  const rows = await db.query<{
    name: string;
    type: string;
    sort_order: number;
    enabled: boolean;
    variants: unknown[];
  }>(
    `SELECT e.name, e.type, e.sort_order, COALESCE(fe.enabled, false) AS enabled,
            COALESCE(fe.variants, '[]'::jsonb) AS variants
       FROM project_environments pe
       JOIN environments e ON e.name = pe.environment_name
       LEFT JOIN feature_environments fe ON fe.feature_name = $1 AND fe.environment = e.name
      WHERE pe.project_id = $2${only === undefined ? '' : ' AND e.name = $3'}
      ORDER BY e.sort_order, e.name`,
    only === undefined ? [flag.name, flag.project] : [flag.name, flag.project, only],
  );
  const strategies = await listStrategies(db, flag.name, only);
  return rows.map((row) => {
    const own = strategies.filter((strategy) => strategy.environment === row.name);
    return {
      name: row.name,
      environment: row.name,
      featureName: flag.name,
      type: row.type,
      enabled: row.enabled,
      sortOrder: row.sort_order,
      variantCount: row.variants.length,
      strategies: own.map(({ environment: _, ...strategy }) => strategy),
      variants: row.variants,
      hasStrategies: own.length > 0,
      hasEnabledStrategies: own.some((strategy) => !strategy.disabled),
      lastSeenAt: null,
    };
  });
}

/** `GET /api/admin/projects/:project/features/:feature`: unleash-server's `featureSchema`. */
export async function flagDetail(db: Queryable, flag: FlagRow) {
  const [environments, tags, parents, children] = await Promise.all([
    flagEnvironments(db, flag),
    tagsOfFlag(db, flag.name),
    db.query<{ parent: string; enabled: boolean; variants: string[] }>(
      'SELECT parent, enabled, variants FROM feature_dependencies WHERE child = $1 ORDER BY parent',
      [flag.name],
    ),
    db.query<{ child: string }>(
      'SELECT child FROM feature_dependencies WHERE parent = $1 ORDER BY child',
      [flag.name],
    ),
  ]);
  return {
    ...flagMetadata(flag),
    enabled: environments.some((environment) => environment.enabled),
    favorite: false,
    lastSeenAt: null,
    environments,
    variants: [],
    tags,
    dependencies: parents.map((row) => ({
      feature: row.parent,
      enabled: row.enabled,
      variants: row.variants,
    })),
    children: children.map((row) => row.child),
  };
}

/** The active children of a flag (flags that depend on it). */
export async function activeChildren(db: Queryable, name: string): Promise<string[]> {
  const rows = await db.query<{ child: string }>(
    `SELECT d.child FROM feature_dependencies d JOIN features f ON f.name = d.child
      WHERE d.parent = $1 AND f.archived_at IS NULL ORDER BY d.child`,
    [name],
  );
  return rows.map((row) => row.child);
}

export type { EventTag };
