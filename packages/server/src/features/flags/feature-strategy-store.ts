import type { Queryable } from '../../db/database.js';
import { ApiError } from '../../errors.js';
import {
  type ConstraintInput,
  constraintProblems,
  legalValuesOf,
  type PayloadInput,
  payloadProblems,
  refuseProblems,
} from '../constraint-rules.js';

/** A strategy of a flag in an environment, as the admin API answers it (`featureStrategySchema`). */
export interface FeatureStrategy {
  id: string;
  name: string;
  title: string | null;
  disabled: boolean;
  featureName: string;
  sortOrder: number;
  segments: number[];
  constraints: unknown[];
  variants: unknown[];
  parameters: Record<string, string>;
}

/** What a write gives for a strategy, defaults applied. */
export interface StrategyInput {
  name: string;
  title: string | null;
  disabled: boolean;
  sortOrder: number;
  segments: number[];
  constraints: unknown[];
  variants: unknown[];
  parameters: Record<string, string>;
}

interface StrategyRow {
  id: string;
  environment: string;
  feature_name: string;
  strategy_name: string;
  title: string | null;
  disabled: boolean;
  sort_order: number;
  segments: number[];
  constraints: unknown[];
  variants: unknown[];
  parameters: Record<string, string>;
}

const COLUMNS = `id, environment, feature_name, strategy_name, title, disabled, sort_order,
  segments, constraints, variants, parameters`;

const fromRow = (row: StrategyRow): FeatureStrategy & { environment: string } => ({
  id: row.id,
  name: row.strategy_name,
  title: row.title,
  disabled: row.disabled,
  featureName: row.feature_name,
  sortOrder: row.sort_order,
  segments: row.segments,
  constraints: row.constraints,
  variants: row.variants,
  parameters: row.parameters,
  environment: row.environment,
});

/** A flag's strategies (of one environment, or all), in the order the client API serves them. */
export async function listStrategies(
  db: Queryable,
  featureName: string,
  environment?: string,
): Promise<(FeatureStrategy & { environment: string })[]> {
  // Two statements, not an optional filter: each is prepared once (`PreparedStatements`).
  const rows = await db.query<StrategyRow>(
    `SELECT ${COLUMNS} FROM feature_strategies
      WHERE feature_name = $1${environment === undefined ? '' : ' AND environment = $2'}
      ORDER BY environment, sort_order, created_at, position, id`,
    environment === undefined ? [featureName] : [featureName, environment],
  );
  return rows.map(fromRow);
}

/** One strategy of the flag in the environment; 404 otherwise. */
export async function findStrategy(
  db: Queryable,
  featureName: string,
  environment: string,
  id: string,
): Promise<FeatureStrategy> {
  const rows = await db.query<StrategyRow>(
    `SELECT ${COLUMNS} FROM feature_strategies
      WHERE id = $1 AND feature_name = $2 AND environment = $3`,
    [id, featureName, environment],
  );
  const row = rows[0];
  if (!row) {
    throw new ApiError(
      'NOT_FOUND',
      `Feature "${featureName}" has no strategy "${id}" in environment "${environment}".`,
    );
  }
  const { environment: _, ...strategy } = fromRow(row);
  return strategy;
}

/**
 * 400 unless the strategy type exists and its constraints and variant payloads keep unleash-server's
 * rules (`constraint-rules.ts`); 404 for a segment that does not exist, 400 for one of another
 * project.
 */
export async function checkStrategyReferences(
  db: Queryable,
  project: string,
  input: Pick<StrategyInput, 'name' | 'segments' | 'constraints' | 'variants'>,
): Promise<void> {
  const types = await db.query('SELECT 1 FROM strategies WHERE name = $1', [input.name]);
  if (types.length === 0) {
    throw new ApiError('BAD_DATA', `There is no strategy type "${input.name}".`);
  }
  const constraints = input.constraints as ConstraintInput[];
  const legal = await legalValuesOf(
    db,
    constraints.map((constraint) => constraint.contextName),
  );
  refuseProblems([
    ...constraintProblems(constraints, legal, 'body/constraints'),
    ...payloadProblems(input.variants as PayloadInput[], 'body/variants'),
  ]);
  if (input.segments.length === 0) return;
  const found = await db.query<{ id: number; project: string | null }>(
    `SELECT id, project FROM segments
      WHERE id IN (SELECT (jsonb_array_elements_text($1::jsonb))::int)`,
    [JSON.stringify(input.segments)],
  );
  const known = new Map(found.map((row) => [row.id, row.project]));
  // An unknown segment is a 404, as unleash-server answers it; another project's a 400.
  const missing = input.segments.filter((id) => !known.has(id));
  if (missing.length > 0) {
    throw new ApiError(
      'NOT_FOUND',
      `There is no segment ${missing.join(', ')}.`,
      missing.map((id) => `There is no segment ${id}.`),
    );
  }
  const foreign = input.segments.filter((id) => ![null, project].includes(known.get(id) ?? null));
  if (foreign.length > 0) {
    throw new ApiError(
      'BAD_DATA',
      `These segments belong to another project: ${foreign.join(', ')}.`,
    );
  }
}

export async function insertStrategy(
  tx: Queryable,
  featureName: string,
  environment: string,
  input: StrategyInput,
): Promise<FeatureStrategy> {
  const rows = await tx.query<{ id: string }>(
    `INSERT INTO feature_strategies
       (feature_name, environment, strategy_name, title, disabled, sort_order, parameters,
        constraints, variants, segments)
     VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8::jsonb, $9::jsonb, $10::jsonb) RETURNING id`,
    [featureName, environment, ...strategyValues(input)],
  );
  return findStrategy(tx, featureName, environment, rows[0]!.id);
}

export async function updateStrategy(
  tx: Queryable,
  featureName: string,
  environment: string,
  id: string,
  input: StrategyInput,
): Promise<FeatureStrategy> {
  await tx.query(
    `UPDATE feature_strategies
        SET strategy_name = $4, title = $5, disabled = $6, sort_order = $7, parameters = $8::jsonb,
            constraints = $9::jsonb, variants = $10::jsonb, segments = $11::jsonb
      WHERE id = $1 AND feature_name = $2 AND environment = $3`,
    [id, featureName, environment, ...strategyValues(input)],
  );
  return findStrategy(tx, featureName, environment, id);
}

const strategyValues = (input: StrategyInput) => [
  input.name,
  input.title,
  input.disabled,
  input.sortOrder,
  JSON.stringify(input.parameters),
  JSON.stringify(input.constraints),
  JSON.stringify(input.variants),
  JSON.stringify(input.segments),
];

export async function deleteStrategy(tx: Queryable, id: string): Promise<void> {
  await tx.query('DELETE FROM feature_strategies WHERE id = $1', [id]);
}

/** The sort order a new strategy gets when none is given: after the last one. */
export async function nextSortOrder(
  db: Queryable,
  featureName: string,
  environment: string,
): Promise<number> {
  const rows = await db.query<{ next: number }>(
    `SELECT COALESCE(max(sort_order) + 1, 0)::int AS next FROM feature_strategies
      WHERE feature_name = $1 AND environment = $2`,
    [featureName, environment],
  );
  return rows[0]?.next ?? 0;
}

export async function setSortOrders(
  tx: Queryable,
  featureName: string,
  environment: string,
  orders: readonly { id: string; sortOrder: number }[],
): Promise<void> {
  await tx.query(
    `UPDATE feature_strategies s SET sort_order = x."sortOrder"
       FROM jsonb_to_recordset($3::jsonb) AS x(id text, "sortOrder" integer)
      WHERE s.id = x.id AND s.feature_name = $1 AND s.environment = $2`,
    [featureName, environment, JSON.stringify(orders)],
  );
}
