import { randomBytes } from 'node:crypto';
import type { Actor } from '../../auth/actor.js';
import { hashSecret } from '../../auth/secrets.js';
import type { Queryable, Transaction } from '../../db/database.js';
import { recordEvent } from '../events/event-store.js';
import { EVENT_TYPES } from '../events/event-types.js';

/**
 * One-time links that set a user's password: `reset` links an Admin makes for a user
 * (`/reset-password?token=…`), `welcome` links of users an Admin created without a password
 * (`/new-user?token=…`), as unleash-server words them. The database keeps the secret's hash.
 */
export type PasswordLinkKind = 'reset' | 'welcome';

/** How long a link works: a reset link a day, a welcome link a week. */
const LIFETIME_MS: Readonly<Record<PasswordLinkKind, number>> = {
  reset: 24 * 3_600_000,
  welcome: 7 * 24 * 3_600_000,
};

/** The page each kind of link opens. */
const PAGE: Readonly<Record<PasswordLinkKind, string>> = {
  reset: 'reset-password',
  welcome: 'new-user',
};

/** The user a live link sets the password of, as `GET /auth/reset/validate` answers. */
export interface PasswordLinkUser {
  readonly userId: number;
  readonly name: string | null;
  readonly email: string | null;
  readonly username: string | null;
  readonly createdBy: string;
  readonly roleId: number | null;
}

/**
 * Makes a link for `userId` in the caller's transaction and returns its URL under `publicUrl`;
 * records `user-password-link-created` (never the secret). Older links of the user stop working:
 * only the newest one an Admin handed out sets the password.
 */
export async function issuePasswordLink(
  tx: Transaction,
  link: {
    userId: number;
    kind: PasswordLinkKind;
    by: Pick<Actor, 'name' | 'userId'>;
    at: Date;
    publicUrl: URL;
  },
): Promise<string> {
  const { userId, kind, by, at } = link;
  const secret = randomBytes(32).toString('base64url');
  await endPasswordLinks(tx, userId);
  await tx.query(
    `INSERT INTO password_links (secret_hash, user_id, kind, created_by, created_at, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6)`,
    [hashSecret(secret), userId, kind, by.name, at, new Date(at.getTime() + LIFETIME_MS[kind])],
  );
  recordEvent(tx, { type: EVENT_TYPES.userPasswordLinkCreated, by, data: { id: userId, kind } });
  // As invite links: a path in the public URL is kept.
  return `${link.publicUrl.href.replace(/\/+$/, '')}/${PAGE[kind]}?token=${secret}`;
}

/**
 * The user of an unexpired link, or undefined (a used link is deleted). With `lock`, the link's row is
 * locked for the caller's transaction (a link sets a password once, even when used twice at once).
 */
export async function findPasswordLink(
  db: Queryable,
  secret: string,
  at: Date,
  lock = false,
): Promise<PasswordLinkUser | undefined> {
  const [row] = await db.query<{
    user_id: number;
    name: string | null;
    email: string | null;
    username: string | null;
    created_by: string;
    role_id: number | null;
  }>(
    `SELECT l.user_id, u.name, u.email, u.username, l.created_by,
            (SELECT ru.role_id FROM role_user ru JOIN roles r ON r.id = ru.role_id
              WHERE ru.user_id = u.id AND r.type = 'root' ORDER BY ru.role_id LIMIT 1) AS role_id
       FROM password_links l JOIN users u ON u.id = l.user_id
              AND u.deleted_at IS NULL AND u.disabled_at IS NULL
      WHERE l.secret_hash = $1 AND l.expires_at > $2
      ${lock ? 'FOR UPDATE OF l' : ''}`,
    [hashSecret(secret), at],
  );
  return (
    row && {
      userId: row.user_id,
      name: row.name,
      email: row.email,
      username: row.username,
      createdBy: row.created_by,
      roleId: row.role_id,
    }
  );
}

/** Ends every link of `userId` (its password was set another way). */
export async function endPasswordLinks(tx: Queryable, userId: number): Promise<void> {
  await tx.query('DELETE FROM password_links WHERE user_id = $1', [userId]);
}
