import type { Queryable } from '../../db/database.js';

export interface Project {
  id: string;
  name: string;
  description: string | null;
}

export async function listProjects(db: Queryable): Promise<Project[]> {
  return db.query<Project>('SELECT id, name, description FROM projects ORDER BY id');
}

export async function projectExists(db: Queryable, id: string): Promise<boolean> {
  return (await db.query('SELECT 1 FROM projects WHERE id = $1', [id])).length > 0;
}

/** Inserts the project with every environment enabled for it. */
export async function insertProject(tx: Queryable, project: Project): Promise<void> {
  await tx.query('INSERT INTO projects (id, name, description) VALUES ($1, $2, $3)', [
    project.id,
    project.name,
    project.description,
  ]);
  await tx.query(
    `INSERT INTO project_environments (project_id, environment_name)
     SELECT $1, name FROM environments`,
    [project.id],
  );
}

export async function findProject(db: Queryable, id: string): Promise<Project | undefined> {
  const rows = await db.query<Project>('SELECT id, name, description FROM projects WHERE id = $1', [
    id,
  ]);
  return rows[0];
}

/** The flags of the project, archived ones included. */
export async function flagsOfProject(
  db: Queryable,
  id: string,
): Promise<{ name: string; archived: boolean }[]> {
  return db.query(
    `SELECT name, archived_at IS NOT NULL AS archived FROM features WHERE project = $1 ORDER BY name`,
    [id],
  );
}

/** The API tokens naming the project (tokens of every project do not). */
export async function tokensOfProject(
  db: Queryable,
  id: string,
): Promise<{ id: number; tokenName: string }[]> {
  return db.query(
    `SELECT id, token_name AS "tokenName" FROM api_tokens
      WHERE projects @> jsonb_build_array($1::text) ORDER BY id`,
    [id],
  );
}

/** The environments enabled for the project. */
export async function environmentsOfProject(db: Queryable, id: string): Promise<string[]> {
  const rows = await db.query<{ environment_name: string }>(
    `SELECT pe.environment_name FROM project_environments pe
       JOIN environments e ON e.name = pe.environment_name
      WHERE pe.project_id = $1 ORDER BY e.sort_order, e.name`,
    [id],
  );
  return rows.map((row) => row.environment_name);
}
