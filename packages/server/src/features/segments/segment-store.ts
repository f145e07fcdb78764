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

const COLUMNS = 'id, name, description, project, constraints';

export async function listSegments(db: Queryable): Promise<Segment[]> {
  return db.query<Segment>(`SELECT ${COLUMNS} FROM segments ORDER BY id`);
}

export async function findSegment(db: Queryable, id: number): Promise<Segment | undefined> {
  const rows = await db.query<Segment>(`SELECT ${COLUMNS} FROM segments WHERE id = $1`, [id]);
  return rows[0];
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

export async function updateSegment(tx: Queryable, segment: Segment): Promise<void> {
  await tx.query(
    `UPDATE segments SET name = $2, description = $3, project = $4, constraints = $5::jsonb
      WHERE id = $1`,
    [
      segment.id,
      segment.name,
      segment.description,
      segment.project,
      JSON.stringify(segment.constraints),
    ],
  );
}

/** A strategy that uses a segment, as `GET /api/admin/segments/:id/strategies` lists it. */
export interface SegmentStrategy {
  id: string;
  projectId: string;
  featureName: string;
  strategyName: string;
  environment: string;
}

/** The strategies (of active and archived flags) that use the segment. */
export async function strategiesUsingSegment(
  db: Queryable,
  id: number,
): Promise<SegmentStrategy[]> {
  return db.query<SegmentStrategy>(
    `SELECT fs.id, f.project AS "projectId", fs.feature_name AS "featureName",
            fs.strategy_name AS "strategyName", fs.environment
       FROM feature_strategies fs JOIN features f ON f.name = fs.feature_name
      WHERE fs.segments @> jsonb_build_array($1::int)
      ORDER BY fs.feature_name, fs.environment, fs.sort_order, fs.id`,
    [id],
  );
}
