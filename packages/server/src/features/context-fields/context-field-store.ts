import type { Queryable } from '../../db/database.js';

export interface LegalValue {
  value: string;
  description?: string;
}

export interface ContextField {
  name: string;
  description: string | null;
  stickiness: boolean;
  sortOrder: number;
  legalValues: LegalValue[];
}

const COLUMNS = `name, description, stickiness, sort_order AS "sortOrder", legal_values AS "legalValues"`;

export async function listContextFields(db: Queryable): Promise<ContextField[]> {
  return db.query<ContextField>(`SELECT ${COLUMNS} FROM context_fields ORDER BY sort_order, name`);
}

export async function findContextField(
  db: Queryable,
  name: string,
): Promise<ContextField | undefined> {
  const rows = await db.query<ContextField>(
    `SELECT ${COLUMNS} FROM context_fields WHERE name = $1`,
    [name],
  );
  return rows[0];
}

export async function insertContextField(tx: Queryable, field: ContextField): Promise<void> {
  await tx.query(
    `INSERT INTO context_fields (name, description, stickiness, sort_order, legal_values)
     VALUES ($1, $2, $3, $4, $5::jsonb)`,
    [
      field.name,
      field.description,
      field.stickiness,
      field.sortOrder,
      JSON.stringify(field.legalValues),
    ],
  );
}

export async function updateContextField(tx: Queryable, field: ContextField): Promise<void> {
  await tx.query(
    `UPDATE context_fields SET description = $2, stickiness = $3, sort_order = $4,
            legal_values = $5::jsonb
      WHERE name = $1`,
    [
      field.name,
      field.description,
      field.stickiness,
      field.sortOrder,
      JSON.stringify(field.legalValues),
    ],
  );
}

/** A strategy whose constraints name a context field. */
export interface ContextFieldStrategy {
  id: string;
  projectId: string;
  featureName: string;
  strategyName: string;
  environment: string;
}

/** The strategies (of active and archived flags) with a constraint on the field. */
export async function strategiesUsingContextField(
  db: Queryable,
  name: string,
): Promise<ContextFieldStrategy[]> {
  return db.query<ContextFieldStrategy>(
    `SELECT fs.id, f.project AS "projectId", fs.feature_name AS "featureName",
            fs.strategy_name AS "strategyName", fs.environment
       FROM feature_strategies fs JOIN features f ON f.name = fs.feature_name
      WHERE EXISTS (SELECT 1 FROM jsonb_array_elements(fs.constraints) c
                     WHERE c->>'contextName' = $1)
      ORDER BY fs.feature_name, fs.environment, fs.sort_order, fs.id`,
    [name],
  );
}

/** The segments with a constraint on the field. */
export async function segmentsUsingContextField(
  db: Queryable,
  name: string,
): Promise<{ id: number; name: string }[]> {
  return db.query(
    `SELECT s.id, s.name FROM segments s
      WHERE EXISTS (SELECT 1 FROM jsonb_array_elements(s.constraints) c
                     WHERE c->>'contextName' = $1)
      ORDER BY s.id`,
    [name],
  );
}
