import type { Queryable } from '../../db/database.js';

export interface Environment {
  name: string;
  type: string;
  sortOrder: number;
  enabled: boolean;
}

export async function listEnvironments(db: Queryable): Promise<Environment[]> {
  return db.query<Environment>(
    'SELECT name, type, sort_order AS "sortOrder", enabled FROM environments ORDER BY sort_order, name',
  );
}

export async function environmentExists(db: Queryable, name: string): Promise<boolean> {
  return (await db.query('SELECT 1 FROM environments WHERE name = $1', [name])).length > 0;
}

/** Inserts the environment (enabled) and enables it for every project. */
export async function insertEnvironment(
  tx: Queryable,
  environment: Omit<Environment, 'enabled'>,
): Promise<void> {
  await tx.query('INSERT INTO environments (name, type, sort_order) VALUES ($1, $2, $3)', [
    environment.name,
    environment.type,
    environment.sortOrder,
  ]);
  await tx.query(
    'INSERT INTO project_environments (project_id, environment_name) SELECT id, $1 FROM projects',
    [environment.name],
  );
}
