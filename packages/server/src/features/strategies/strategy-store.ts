import type { Queryable } from '../../db/database.js';

export interface StrategyDefinition {
  name: string;
  title: string | null;
  description: string | null;
  /** The parameter definitions, stored as given. */
  parameters: unknown[];
}

/** Built-in strategies first; only custom ones are `editable`. */
export async function listStrategies(
  db: Queryable,
): Promise<(StrategyDefinition & { editable: boolean })[]> {
  return db.query(
    `SELECT name, title, description, parameters, NOT built_in AS editable
       FROM strategies ORDER BY built_in DESC, name`,
  );
}

/** Inserts a custom strategy. */
export async function insertStrategy(db: Queryable, strategy: StrategyDefinition): Promise<void> {
  await db.query(
    'INSERT INTO strategies (name, title, description, parameters) VALUES ($1, $2, $3, $4::jsonb)',
    [strategy.name, strategy.title, strategy.description, JSON.stringify(strategy.parameters)],
  );
}
