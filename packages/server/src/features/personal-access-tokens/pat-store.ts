import { randomBytes } from 'node:crypto';
import type { Actor, Role } from '../../auth/actor.js';
import { hashSecret } from '../../auth/secrets.js';
import { roleOfRootRole } from '../../auth/sessions.js';
import type { Queryable } from '../../db/database.js';

/** unleash-server's cap on the personal access tokens of one user. */
export const PATS_PER_USER = 10;

/** How often a token's last use is written (not on every request). */
const TOUCH_EVERY_MS = 60_000;

/** A personal access token as its owner lists it (never its secret). */
export interface PersonalAccessToken {
  id: number;
  description: string;
  expiresAt: string;
  createdAt: string;
  seenAt: string | null;
  userId: number;
}

interface PatRow {
  id: number;
  description: string;
  expires_at: Date | string;
  created_at: Date | string;
  seen_at: Date | string | null;
  user_id: number;
}

const iso = (value: Date | string) => new Date(value).toISOString();

const toPat = (row: PatRow): PersonalAccessToken => ({
  id: row.id,
  description: row.description,
  expiresAt: iso(row.expires_at),
  createdAt: iso(row.created_at),
  seenAt: row.seen_at === null ? null : iso(row.seen_at),
  userId: row.user_id,
});

const COLUMNS = 'id, description, expires_at, created_at, seen_at, user_id';

/** A new secret in unleash-server's form: `user:` and 56 hex characters. */
export function newPatSecret(): string {
  return `user:${randomBytes(28).toString('hex')}`;
}

export async function listPats(db: Queryable, userId: number): Promise<PersonalAccessToken[]> {
  const rows = await db.query<PatRow>(
    `SELECT ${COLUMNS} FROM personal_access_tokens WHERE user_id = $1 ORDER BY id`,
    [userId],
  );
  return rows.map(toPat);
}

/** Stores the token (the secret's hash only). */
export async function insertPat(
  tx: Queryable,
  pat: { userId: number; description: string; expiresAt: Date; secret: string },
): Promise<PersonalAccessToken> {
  const [row] = await tx.query<PatRow>(
    `INSERT INTO personal_access_tokens (user_id, description, secret_hash, expires_at)
     VALUES ($1, $2, $3, $4) RETURNING ${COLUMNS}`,
    [pat.userId, pat.description, hashSecret(pat.secret), pat.expiresAt],
  );
  return toPat(row!);
}

/** Deletes the user's token `id`; the deleted token, or undefined when the user has none such. */
export async function deletePat(
  tx: Queryable,
  userId: number,
  id: number,
): Promise<PersonalAccessToken | undefined> {
  const [row] = await tx.query<PatRow>(
    `DELETE FROM personal_access_tokens WHERE id = $1 AND user_id = $2 RETURNING ${COLUMNS}`,
    [id, userId],
  );
  return row ? toPat(row) : undefined;
}

/** Who a personal access token acts for: its user, with the user's root role as it is now. */
export interface PatUser {
  readonly userId: number;
  readonly userName: string;
  readonly role: Role;
}

/**
 * The user behind an unexpired personal access token of a user not deleted, or undefined. The
 * secret is hashed and looked up by its hash, as API tokens are. Its last use is recorded at
 * most once a minute, unless `touch` is false (a check that is no use of the token).
 */
export async function findPersonalAccessToken(
  db: Queryable,
  secret: string,
  now: Date = new Date(),
  touch = true,
): Promise<PatUser | undefined> {
  const [row] = await db.query<{
    id: number;
    seen_at: Date | string | null;
    user_id: number;
    username: string | null;
    email: string | null;
    name: string | null;
    role_name: string | null;
  }>(
    `SELECT p.id, p.seen_at, u.id AS user_id, u.username, u.email, u.name,
            (SELECT r.name FROM role_user ru JOIN roles r ON r.id = ru.role_id
              WHERE ru.user_id = u.id AND r.type = 'root' ORDER BY ru.role_id LIMIT 1) AS role_name
       FROM personal_access_tokens p JOIN users u ON u.id = p.user_id
              AND u.deleted_at IS NULL AND u.disabled_at IS NULL
      WHERE p.secret_hash = $1 AND p.expires_at > $2`,
    [hashSecret(secret), now],
  );
  if (!row) return undefined;
  const due =
    row.seen_at === null || now.getTime() - new Date(row.seen_at).getTime() >= TOUCH_EVERY_MS;
  if (touch && due) {
    await db.query('UPDATE personal_access_tokens SET seen_at = $2 WHERE id = $1', [row.id, now]);
  }
  return {
    userId: row.user_id,
    userName: row.username ?? row.email ?? row.name ?? `user ${row.user_id}`,
    role: roleOfRootRole(row.role_name),
  };
}

/** The admin guard's view of personal access tokens (`PersonalAccessTokens` in admin-guard.ts). */
export function personalAccessTokens(db: Queryable, now: () => Date = () => new Date()) {
  return {
    async lookup(secret: string, touch = true): Promise<Actor | undefined> {
      const user = await findPersonalAccessToken(db, secret, now(), touch);
      return (
        user && {
          credential: 'personal-access-token',
          name: user.userName,
          userId: user.userId,
          role: user.role,
        }
      );
    },
  };
}
