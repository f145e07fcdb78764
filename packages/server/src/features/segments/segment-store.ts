import type { Constraint } from '@flags/schemas';
import type { Queryable } from '../../db/database.js';

export interface Segment {
  id: number;
  name: string;
  description: string | null;
  /** The only project that may use it; `null`: every project. */
  project: string | null;
  constraints: Constraint[];
}

export async function listSegments(db: Queryable): Promise<Segment[]> {
  return db.query<Segment>(
    'SELECT id, name, description, project, constraints FROM segments ORDER BY id',
  );
}

/** Inserts the segment; its id comes back. */
export async function insertSegment(tx: Queryable, segment: Omit<Segment, 'id'>): Promise<number> {
  const [row] = await tx.query<{ id: number }>(
    `INSERT INTO segments (name, description, project, constraints)
     VALUES ($1, $2, $3, $4::jsonb) RETURNING id`,
    [segment.name, segment.description, segment.project, JSON.stringify(segment.constraints)],
  );
  return row!.id;
}
