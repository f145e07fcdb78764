import type { Queryable } from '../../db/database.js';

export interface ContextField {
  name: string;
  description: string | null;
  stickiness: boolean;
  sortOrder: number;
  legalValues: { value: string; description?: string }[];
}

export async function listContextFields(db: Queryable): Promise<ContextField[]> {
  return db.query<ContextField>(
    `SELECT name, description, stickiness, sort_order AS "sortOrder", legal_values AS "legalValues"
       FROM context_fields ORDER BY sort_order, name`,
  );
}
