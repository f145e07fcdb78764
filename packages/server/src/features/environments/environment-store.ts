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

export async function findEnvironment(
  db: Queryable,
  name: string,
): Promise<Environment | undefined> {
  const rows = await db.query<Environment>(
    'SELECT name, type, sort_order AS "sortOrder", enabled FROM environments WHERE name = $1',
    [name],
  );
  return rows[0];
}

/**
 * The flags (active or archived) that an environment still holds something of: enabled there,
 * or with strategies there; of one project when `project` is given.
 */
export async function flagsUsingEnvironment(
  db: Queryable,
  environment: string,
  project?: string,
): Promise<{ name: string; project: string }[]> {
  return db.query(
    `SELECT f.name, f.project FROM features f
      WHERE ($2::text IS NULL OR f.project = $2)
        AND (EXISTS (SELECT 1 FROM feature_environments fe
                      WHERE fe.feature_name = f.name AND fe.environment = $1 AND fe.enabled)
             OR EXISTS (SELECT 1 FROM feature_strategies fs
                         WHERE fs.feature_name = f.name AND fs.environment = $1))
      ORDER BY f.name`,
    [environment, project ?? null],
  );
}

/** The API tokens scoped to the environment. */
export async function tokensOfEnvironment(
  db: Queryable,
  environment: string,
): Promise<{ id: number; tokenName: string }[]> {
  return db.query(
    `SELECT id, token_name AS "tokenName" FROM api_tokens WHERE environment = $1 ORDER BY id`,
    [environment],
  );
}
