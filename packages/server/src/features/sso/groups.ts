import type { Queryable } from '../../db/database.js';

/** A group as `/api/admin/groups` answers it (Unleash's `groupSchema`). */
// A type, not an interface: the route's typed answer needs its index signature.
export type Group = {
  id: number;
  name: string;
  description: string | null;
  mappingsSSO: string[];
  rootRole: number | null;
  createdBy: string | null;
  createdAt: string;
  users: never[];
  userCount: number;
};

interface GroupRow {
  id: number;
  name: string;
  description: string | null;
  mappings_sso: string[] | string;
  root_role_id: number | null;
  created_by: string | null;
  created_at: Date | string;
}

const COLUMNS = 'id, name, description, mappings_sso, root_role_id, created_by, created_at';

function groupJson(row: GroupRow): Group {
  const mappings =
    typeof row.mappings_sso === 'string' ? JSON.parse(row.mappings_sso) : row.mappings_sso;
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    mappingsSSO: mappings as string[],
    rootRole: row.root_role_id,
    createdBy: row.created_by,
    createdAt: new Date(row.created_at).toISOString(),
    // Members come from the provider at each sign-in; none are kept here.
    users: [],
    userCount: 0,
  };
}

export async function listGroups(db: Queryable): Promise<Group[]> {
  const rows = await db.query<GroupRow>(`SELECT ${COLUMNS} FROM groups ORDER BY id`);
  return rows.map(groupJson);
}

export async function getGroup(db: Queryable, id: number): Promise<Group | undefined> {
  const [row] = await db.query<GroupRow>(`SELECT ${COLUMNS} FROM groups WHERE id = $1`, [id]);
  return row && groupJson(row);
}

/** What a group is made of. */
export interface GroupFields {
  readonly name: string;
  readonly description: string | null;
  readonly mappingsSSO: readonly string[];
  readonly rootRole: number | null;
}

/** Whether another group (not `exceptId`) has this name (any case). */
export async function groupNameTaken(
  db: Queryable,
  name: string,
  exceptId?: number,
): Promise<boolean> {
  const rows = await db.query('SELECT 1 FROM groups WHERE lower(name) = lower($1) AND id <> $2', [
    name,
    exceptId ?? 0,
  ]);
  return rows.length > 0;
}

export async function insertGroup(
  tx: Queryable,
  fields: GroupFields,
  createdBy: string,
  at: Date,
): Promise<Group> {
  const [row] = await tx.query<GroupRow>(
    `INSERT INTO groups (name, description, mappings_sso, root_role_id, created_by, created_at)
     VALUES ($1, $2, $3::jsonb, $4, $5, $6) RETURNING ${COLUMNS}`,
    [
      fields.name,
      fields.description,
      JSON.stringify(fields.mappingsSSO),
      fields.rootRole,
      createdBy,
      at,
    ],
  );
  return groupJson(row!);
}

export async function updateGroup(tx: Queryable, id: number, fields: GroupFields): Promise<void> {
  await tx.query(
    `UPDATE groups SET name = $2, description = $3, mappings_sso = $4::jsonb, root_role_id = $5
      WHERE id = $1`,
    [id, fields.name, fields.description, JSON.stringify(fields.mappingsSSO), fields.rootRole],
  );
}

export async function deleteGroup(tx: Queryable, id: number): Promise<void> {
  await tx.query('DELETE FROM groups WHERE id = $1', [id]);
}

/** How much each root role may do: the highest of several wins. */
const ROLE_RANK: Readonly<Record<string, number>> = { Viewer: 1, Editor: 2, Admin: 3 };

/**
 * The root role (id and name) the provider's `names` map to: the highest root role of the groups
 * whose `mappingsSSO` holds one of them (exactly, as the provider spells it); undefined when no
 * group with a root role matches.
 */
export async function rootRoleForSsoGroups(
  db: Queryable,
  names: readonly string[],
): Promise<{ id: number; name: string } | undefined> {
  if (names.length === 0) return undefined;
  const rows = await db.query<{ id: number; name: string }>(
    `SELECT DISTINCT r.id, r.name FROM groups g JOIN roles r ON r.id = g.root_role_id
      WHERE r.type = 'root'
        AND EXISTS (SELECT 1 FROM jsonb_array_elements_text(g.mappings_sso) m
                     WHERE m IN (SELECT jsonb_array_elements_text($1::jsonb)))`,
    [JSON.stringify(names)],
  );
  let best: { id: number; name: string } | undefined;
  for (const row of rows) {
    if (!best || (ROLE_RANK[row.name] ?? 0) > (ROLE_RANK[best.name] ?? 0)) best = row;
  }
  return best;
}
