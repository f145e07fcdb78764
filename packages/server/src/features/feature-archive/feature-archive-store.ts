import type { Queryable } from '../../db/database.js';

/** Archives the feature if it is active in `project`; whether it was. */
export async function archiveFeature(
  tx: Queryable,
  project: string,
  feature: string,
): Promise<boolean> {
  const rows = await tx.query(
    `UPDATE features SET archived_at = now()
      WHERE name = $1 AND project = $2 AND archived_at IS NULL RETURNING name`,
    [feature, project],
  );
  return rows.length > 0;
}
