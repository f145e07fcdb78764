import type { Queryable } from '../../db/database.js';

export interface StrategyDefinition {
  name: string;
  title: string | null;
  description: string | null;
  /** The parameter definitions, stored as given. */
  parameters: unknown[];
}

/** A definition as the admin API answers it: only custom ones are `editable`. */
export interface StoredStrategy extends StrategyDefinition {
  displayName: string | null;
  editable: boolean;
  deprecated: boolean;
}

const COLUMNS = `name, title AS "displayName", title, description, parameters,
  NOT built_in AS editable, deprecated`;

/** Built-in strategies first. */
export async function listStrategies(db: Queryable): Promise<StoredStrategy[]> {
  return db.query(`SELECT ${COLUMNS} FROM strategies ORDER BY built_in DESC, name`);
}

export async function findStrategy(
  db: Queryable,
  name: string,
  lock = false,
): Promise<StoredStrategy | undefined> {
  const rows = await db.query<StoredStrategy>(
    `SELECT ${COLUMNS} FROM strategies WHERE name = $1${lock ? ' FOR UPDATE' : ''}`,
    [name],
  );
  return rows[0];
}

/** Inserts a custom strategy. */
export async function insertStrategy(db: Queryable, strategy: StrategyDefinition): Promise<void> {
  await db.query(
    'INSERT INTO strategies (name, title, description, parameters) VALUES ($1, $2, $3, $4::jsonb)',
    [strategy.name, strategy.title, strategy.description, JSON.stringify(strategy.parameters)],
  );
}

export async function updateStrategy(db: Queryable, strategy: StrategyDefinition): Promise<void> {
  await db.query(
    'UPDATE strategies SET title = $2, description = $3, parameters = $4::jsonb WHERE name = $1',
    [strategy.name, strategy.title, strategy.description, JSON.stringify(strategy.parameters)],
  );
}

/** The flags (active or archived) with a strategy of this definition, and where. */
export async function flagsUsingStrategy(
  db: Queryable,
  name: string,
): Promise<{ featureName: string; environment: string }[]> {
  return db.query(
    `SELECT DISTINCT feature_name AS "featureName", environment FROM feature_strategies
      WHERE strategy_name = $1 ORDER BY 1, 2`,
    [name],
  );
}
