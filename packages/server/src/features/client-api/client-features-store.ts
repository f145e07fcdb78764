import type { ClientFeature, Constraint, Segment, Strategy } from '@flags/schemas';
import type { Queryable } from '../../db/database.js';

/** What a client API request may see: the token's scope narrowed by the query filters. */
export interface FeatureQuery {
  readonly environment: string;
  /** `undefined` = every project. */
  readonly projects: readonly string[] | undefined;
  readonly namePrefix: string | undefined;
  /** `type:value` pairs; a flag carrying any of them is kept. */
  readonly tags: readonly (readonly [string, string])[] | undefined;
  /** Old SDKs (no `Unleash-Client-Spec` ≥ 4.2.0) get segment constraints inlined. */
  readonly inlineSegmentConstraints: boolean;
  /** Only these flags (the change log diffing what a write changed); `undefined` = all. */
  readonly names?: readonly string[] | undefined;
}

/**
 * The client API's view of every project of one environment, as a current SDK reads it (segments
 * by reference); with `names`, of those flags only (a write's diff).
 */
export function everyProject(environment: string, names?: readonly string[]): FeatureQuery {
  return {
    environment,
    projects: undefined,
    namePrefix: undefined,
    tags: undefined,
    inlineSegmentConstraints: false,
    names,
  };
}

interface FeatureRow {
  name: string;
  type: string;
  project: string;
  stale: boolean;
  description: string | null;
  impression_data: boolean;
  enabled: boolean;
  variants: ClientFeature['variants'];
}

interface StrategyRow {
  feature_name: string;
  strategy_name: string;
  parameters: Record<string, unknown>;
  constraints: Constraint[];
  variants: Strategy['variants'];
  segments: number[];
}

interface DependencyRow {
  child: string;
  parent: string;
  enabled: boolean;
  variants: string[];
}

interface SegmentRow {
  id: number;
  name: string;
  constraints: Constraint[];
}

export interface ClientConfiguration {
  features: ClientFeature[];
  /** Present when segments are sent by reference. */
  segments: Segment[] | undefined;
}

const stringParameters = (parameters: Record<string, unknown>): Record<string, string> => {
  const out: Record<string, string> = {};
  for (const key of Object.keys(parameters)) out[key] = String(parameters[key]);
  return out;
};

/**
 * `column` is one of `names`: the filter with a placeholder, and the value bound to it. One name (a
 * toggle's diff) is `= $n`: its generic plan is the index lookup, so PostgreSQL plans that
 * statement once and no more at each execution; an array's generic plan is costed for any length,
 * so `= ANY($n)` is planned again each time (most of what those reads cost on PostgreSQL).
 */
export function oneOfNames(
  column: string,
  names: readonly string[],
): { readonly value: unknown; readonly filter: (placeholder: string) => string } {
  return names.length === 1
    ? { value: names[0], filter: (placeholder) => `${column} = ${placeholder}` }
    : { value: [...names], filter: (placeholder) => `${column} = ANY(${placeholder}::text[])` };
}

/**
 * The flags of `query` and their state in its environment: the statement and its parameters.
 * Only the filters the query sets are in the text, so that each combination is a statement of its
 * own, prepared once and planned as what it is (a read of a few named flags is an index lookup,
 * a read of all of them a scan).
 */
function featuresStatement(query: FeatureQuery): [string, unknown[]] {
  const parameters: unknown[] = [query.environment];
  const filters = ['f.archived_at IS NULL'];
  const parameter = (value: unknown) => {
    parameters.push(value);
    return `$${parameters.length}`;
  };
  if (query.projects) {
    filters.push(
      `f.project IN (SELECT jsonb_array_elements_text(${parameter(JSON.stringify(query.projects))}::jsonb))`,
    );
  }
  if (query.namePrefix !== undefined) {
    const prefix = parameter(query.namePrefix);
    filters.push(`left(f.name, length(${prefix}::text)) = ${prefix}::text`);
  }
  if (query.tags) {
    const keys = JSON.stringify(query.tags.map(([type, value]) => `${type}:${value}`));
    filters.push(`EXISTS (
      SELECT 1 FROM feature_tags t
       WHERE t.feature_name = f.name
         AND t.tag_type || ':' || t.tag_value IN (SELECT jsonb_array_elements_text(${parameter(keys)}::jsonb)))`);
  }
  // Not a subquery: = ANY of a known array is an index lookup.
  if (query.names) {
    const named = oneOfNames('f.name', query.names);
    filters.push(named.filter(parameter(named.value)));
  }
  return [
    `SELECT f.name, f.type, f.project, f.stale, f.description, f.impression_data,
            COALESCE(fe.enabled, false) AS enabled, COALESCE(fe.variants, '[]'::jsonb) AS variants
       FROM features f
       LEFT JOIN feature_environments fe ON fe.feature_name = f.name AND fe.environment = $1
      WHERE ${filters.join('\n        AND ')}
      ORDER BY f.name`,
    parameters,
  ];
}

/**
 * The enabled strategies and the dependencies of the flags `names`: a few names (`oneOfNames`,
 * which the index finds: the planner takes a jsonb subquery for 100 rows and, on tables not
 * analyzed since an import, scans the environment's every strategy), or the JSON of every name
 * read (a read of everything keeps the subquery).
 */
function readDetails(
  db: Queryable,
  environment: string,
  names: { readonly few: readonly string[] } | { readonly json: string },
): Promise<[StrategyRow[], DependencyRow[]]> {
  const named = (column: string) =>
    'few' in names
      ? oneOfNames(column, names.few)
      : {
          value: names.json,
          filter: (placeholder: string) =>
            `${column} IN (SELECT jsonb_array_elements_text(${placeholder}::jsonb))`,
        };
  const strategies = named('feature_name');
  const dependencies = named('child');
  return Promise.all([
    db.query<StrategyRow>(
      `SELECT feature_name, strategy_name, parameters, constraints, variants, segments
         FROM feature_strategies
        WHERE environment = $1 AND NOT disabled AND ${strategies.filter('$2')}
        ORDER BY feature_name, sort_order, created_at, position, id`,
      [environment, strategies.value],
    ),
    db.query<DependencyRow>(
      `SELECT child, parent, enabled, variants FROM feature_dependencies
        WHERE ${dependencies.filter('$1')}
        ORDER BY child, parent`,
      [dependencies.value],
    ),
  ]);
}

/**
 * Reads the configuration one client API query can see, in the client API shape
 * (`GET /api/client/features`): non-archived flags ordered by name, their enabled strategies in
 * `sortOrder`, variants of the environment, dependencies, and the segments the strategies use.
 */
export async function readClientConfiguration(
  db: Queryable,
  query: FeatureQuery,
): Promise<ClientConfiguration> {
  const featuresRead = db.query<FeatureRow>(...featuresStatement(query));
  // A read of named flags (a write's diff) asks for their strategies and dependencies with the
  // flags, in one round trip on PostgreSQL; those of a name that is archived are left out.
  const [features, named] = await Promise.all([
    featuresRead,
    query.names ? readDetails(db, query.environment, { few: query.names }) : undefined,
  ]);
  if (features.length === 0) {
    return { features: [], segments: query.inlineSegmentConstraints ? undefined : [] };
  }
  const featureNames = features.map((feature) => feature.name);
  let strategies: StrategyRow[];
  let dependencies: DependencyRow[];
  if (named === undefined) {
    [strategies, dependencies] = await readDetails(db, query.environment, {
      json: JSON.stringify(featureNames),
    });
  } else {
    const active = new Set(featureNames);
    strategies = named[0].filter((row) => active.has(row.feature_name));
    dependencies = named[1].filter((row) => active.has(row.child));
  }
  const segmentIds = new Set<number>();
  for (const strategy of strategies) for (const id of strategy.segments) segmentIds.add(id);
  const segmentRows =
    segmentIds.size === 0
      ? []
      : await db.query<SegmentRow>(
          `SELECT id, name, constraints FROM segments
            WHERE id IN (SELECT (jsonb_array_elements_text($1::jsonb))::int) ORDER BY id`,
          [JSON.stringify([...segmentIds])],
        );
  const segmentsById = new Map(segmentRows.map((row) => [row.id, row]));

  const strategiesByFeature = new Map<string, Strategy[]>();
  for (const row of strategies) {
    const segments = [...row.segments].sort((a, b) => a - b);
    let constraints = row.constraints;
    if (query.inlineSegmentConstraints && segments.length > 0) {
      constraints = [...constraints];
      for (const id of segments) constraints.push(...(segmentsById.get(id)?.constraints ?? []));
    }
    const strategy: Strategy = {
      name: row.strategy_name,
      constraints,
      parameters: stringParameters(row.parameters),
      variants: row.variants ?? [],
    };
    if (!query.inlineSegmentConstraints && segments.length > 0) strategy.segments = segments;
    const list = strategiesByFeature.get(row.feature_name);
    if (list) list.push(strategy);
    else strategiesByFeature.set(row.feature_name, [strategy]);
  }
  const dependenciesByChild = new Map<string, NonNullable<ClientFeature['dependencies']>>();
  for (const row of dependencies) {
    const dependency: NonNullable<ClientFeature['dependencies']>[number] = {
      feature: row.parent,
      enabled: row.enabled,
    };
    // unleash-server lists the parent's variants (maybe none) when the parent must be enabled.
    if (row.enabled) dependency.variants = row.variants;
    const list = dependenciesByChild.get(row.child);
    if (list) list.push(dependency);
    else dependenciesByChild.set(row.child, [dependency]);
  }

  return {
    features: features.map((row) => {
      const feature: ClientFeature = {
        name: row.name,
        type: row.type,
        enabled: row.enabled,
        project: row.project,
        stale: row.stale,
        strategies: strategiesByFeature.get(row.name) ?? [],
        variants: row.variants ?? [],
        description: row.description,
        impressionData: row.impression_data,
      };
      const parents = dependenciesByChild.get(row.name);
      if (parents) feature.dependencies = parents;
      return feature;
    }),
    segments: query.inlineSegmentConstraints
      ? undefined
      : segmentRows.map((row) => ({ id: row.id, name: row.name, constraints: row.constraints })),
  };
}
