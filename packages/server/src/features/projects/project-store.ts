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
