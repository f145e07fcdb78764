import { createHash } from 'node:crypto';
import type { Role, User } from '@flags/schemas';
import type { Queryable } from '../../db/database.js';
import { ApiError } from '../../errors.js';

interface RoleRow {
  id: number;
  name: string;
  type: string;
  description: string | null;
  project: string | null;
}

interface UserRow {
  id: number;
  name: string | null;
  username: string | null;
  email: string | null;
  image_url: string | null;
  login_attempts: number;
  email_sent: boolean;
  is_service: boolean;
  scim_id: string | null;
  seen_at: Date | string | null;
  created_at: Date | string;
  root_role: number | null;
  disabled_at: Date | string | null;
}

const ROLE_COLUMNS = 'id, name, type, description, project';

const USER_COLUMNS = `u.id, u.name, u.username, u.email, u.image_url, u.login_attempts, u.email_sent,
  u.is_service, u.scim_id, u.seen_at, u.created_at, u.disabled_at,
  (SELECT ru.role_id FROM role_user ru JOIN roles r ON r.id = ru.role_id
    WHERE ru.user_id = u.id AND r.type = 'root' ORDER BY ru.role_id LIMIT 1) AS root_role`;

export function roleJson(row: RoleRow): Role {
  return {
    id: row.id,
    type: row.type,
    name: row.name,
    ...(row.description === null ? {} : { description: row.description }),
    project: row.project,
  };
}

const iso = (value: Date | string) => new Date(value).toISOString();

/** The avatar URL the Unleash UI shows (a hash of the email; no request is made here). */
function gravatarUrl(email: string | null): string {
  const hash = createHash('md5')
    .update((email ?? '').trim().toLowerCase())
    .digest('hex');
  return `https://gravatar.com/avatar/${hash}?s=42&d=retro&r=g`;
}

export function userJson(row: UserRow): User {
  return {
    id: row.id,
    name: row.name,
    email: row.email ?? '',
    username: row.username,
    imageUrl: row.image_url ?? gravatarUrl(row.email),
    inviteLink: '',
    loginAttempts: row.login_attempts,
    emailSent: row.email_sent,
    ...(row.root_role === null ? {} : { rootRole: row.root_role }),
    seenAt: row.seen_at === null ? null : iso(row.seen_at),
    createdAt: iso(row.created_at),
    accountType: row.is_service ? 'Service Account' : 'User',
    permissions: [],
    ...(row.scim_id === null ? {} : { scimId: row.scim_id }),
    disabled: row.disabled_at !== null,
  };
}

export async function listRoles(db: Queryable): Promise<Role[]> {
  const rows = await db.query<RoleRow>(`SELECT ${ROLE_COLUMNS} FROM roles ORDER BY id`);
  return rows.map(roleJson);
}

export async function getRole(db: Queryable, id: number): Promise<Role | undefined> {
  const [row] = await db.query<RoleRow>(`SELECT ${ROLE_COLUMNS} FROM roles WHERE id = $1`, [id]);
  return row && roleJson(row);
}

/** A root role by id or by (case-insensitive) name; undefined for unknown or project roles. */
export async function findRootRole(
  db: Queryable,
  role: number | string,
): Promise<Role | undefined> {
  const rows =
    typeof role === 'number'
      ? await db.query<RoleRow>(
          `SELECT ${ROLE_COLUMNS} FROM roles WHERE id = $1 AND type = 'root'`,
          [role],
        )
      : await db.query<RoleRow>(
          `SELECT ${ROLE_COLUMNS} FROM roles WHERE lower(name) = lower($1) AND type = 'root'`,
          [role],
        );
  return rows[0] && roleJson(rows[0]);
}

export async function listUsers(db: Queryable): Promise<User[]> {
  const rows = await db.query<UserRow>(
    `SELECT ${USER_COLUMNS} FROM users u WHERE u.deleted_at IS NULL ORDER BY u.id`,
  );
  return rows.map(userJson);
}

export async function getUsers(db: Queryable, ids: readonly number[]): Promise<User[]> {
  if (ids.length === 0) return [];
  const rows = await db.query<UserRow>(
    `SELECT ${USER_COLUMNS} FROM users u
      WHERE u.deleted_at IS NULL AND u.id IN (SELECT jsonb_array_elements_text($1::jsonb)::int)
      ORDER BY u.id`,
    [JSON.stringify(ids)],
  );
  return rows.map(userJson);
}

export interface NewUser {
  name?: string | null;
  email?: string | null;
  username?: string | null;
  /** Already hashed (see `password.ts`); null when the user has no password yet. */
  passwordHash?: string | null;
  rootRoleId: number;
  /** Default: the database's clock. */
  createdAt?: Date;
}

/** Whether a live user already has this email (case-insensitive). */
export async function emailTaken(db: Queryable, email: string): Promise<boolean> {
  const rows = await db.query('SELECT 1 FROM users WHERE lower(email) = lower($1)', [email]);
  return rows.length > 0;
}

/** Whether a user already has this username (case-insensitive). */
export async function usernameTaken(db: Queryable, username: string): Promise<boolean> {
  const rows = await db.query('SELECT 1 FROM users WHERE lower(username) = lower($1)', [username]);
  return rows.length > 0;
}

/**
 * The 409 for a user who clashes with an existing one: checked before the insert (`emailTaken`,
 * `usernameTaken`) and, for a concurrent insert, from PostgreSQL's unique violation (23505) on
 * `users_email_idx` or `users_username_idx`. Undefined for any other error.
 */
export function userClash(error: unknown): ApiError | undefined {
  const { code, constraint } = error as { code?: string; constraint?: string };
  if (code !== '23505') return undefined;
  return new ApiError(constraint === 'users_username_idx' ? 'USERNAME_EXISTS' : 'USER_EXISTS');
}

/**
 * Inserts a user with its root role. A taken email or username raises PostgreSQL error 23505
 * (the unique indexes on `lower(email)` and `lower(username)`); see `userClash`.
 */
export async function createUser(tx: Queryable, user: NewUser): Promise<User> {
  const [inserted] = await tx.query<{ id: number }>(
    `INSERT INTO users (name, email, username, password_hash, created_at)
     VALUES ($1, $2, $3, $4, COALESCE($5, now())) RETURNING id`,
    [
      user.name ?? null,
      user.email ?? null,
      user.username ?? null,
      user.passwordHash ?? null,
      user.createdAt ?? null,
    ],
  );
  await tx.query(
    'INSERT INTO role_user (role_id, user_id, created_at) VALUES ($1, $2, COALESCE($3, now()))',
    [user.rootRoleId, inserted!.id, user.createdAt ?? null],
  );
  const [created] = await getUsers(tx, [inserted!.id]);
  return created!;
}

/**
 * Locks the Admin root role's row for the caller's transaction: changes that may leave no Admin
 * (a demotion, a deletion, disabling a user) take it first, so two at once cannot each leave the
 * other the last. Returns the number of active (not disabled) Admins.
 */
export async function lockAdminCount(tx: Queryable): Promise<number> {
  await tx.query("SELECT id FROM roles WHERE type = 'root' AND name = 'Admin' FOR UPDATE");
  const [row] = await tx.query<{ n: number }>(
    `SELECT count(DISTINCT u.id)::int AS n FROM users u
       JOIN role_user ru ON ru.user_id = u.id JOIN roles r ON r.id = ru.role_id
      WHERE u.deleted_at IS NULL AND u.disabled_at IS NULL AND r.type = 'root' AND r.name = 'Admin'`,
  );
  return row?.n ?? 0;
}

/** Whether `roleId` is the Admin root role. */
export async function isAdminRoleId(db: Queryable, roleId: number | undefined): Promise<boolean> {
  if (roleId === undefined) return false;
  const rows = await db.query(
    "SELECT 1 FROM roles WHERE id = $1 AND type = 'root' AND name = 'Admin'",
    [roleId],
  );
  return rows.length > 0;
}

/** Gives `userId` the root role `roleId` in place of the one it had. */
export async function setRootRole(tx: Queryable, userId: number, roleId: number): Promise<void> {
  await tx.query(
    `DELETE FROM role_user WHERE user_id = $1
        AND role_id IN (SELECT id FROM roles WHERE type = 'root')`,
    [userId],
  );
  await tx.query('INSERT INTO role_user (role_id, user_id) VALUES ($1, $2)', [roleId, userId]);
}

/** Changes a user's name and email (undefined: unchanged); the 23505 of a taken email: `userClash`. */
export async function updateUserDetails(
  tx: Queryable,
  userId: number,
  change: { name?: string | undefined; email?: string | undefined },
): Promise<void> {
  await tx.query(
    'UPDATE users SET name = COALESCE($2, name), email = COALESCE($3, email) WHERE id = $1',
    [userId, change.name ?? null, change.email ?? null],
  );
}

/**
 * Disables a user (`at`) or enables them again (null). Disabling ends their sessions; their
 * personal access tokens and password links stay but are refused while they are disabled.
 */
export async function setUserDisabled(
  tx: Queryable,
  userId: number,
  at: Date | null,
): Promise<void> {
  await tx.query('UPDATE users SET disabled_at = $2 WHERE id = $1', [userId, at]);
  if (at !== null) await tx.query('DELETE FROM user_sessions WHERE user_id = $1', [userId]);
}

/**
 * Deletes a user: their sessions, personal access tokens, password links and roles go with the row
 * (foreign keys). The event log keeps their name on what they did.
 */
export async function deleteUser(tx: Queryable, userId: number): Promise<void> {
  await tx.query('DELETE FROM users WHERE id = $1', [userId]);
}

/** Sets a user's password hash. */
export async function setPasswordHash(
  tx: Queryable,
  userId: number,
  passwordHash: string,
): Promise<void> {
  await tx.query('UPDATE users SET password_hash = $2 WHERE id = $1', [userId, passwordHash]);
}
