import { randomBytes } from 'node:crypto';
import type { Queryable } from '../db/database.js';
import type { Role } from './actor.js';
import { hashSecret } from './secrets.js';

export interface SessionLimits {
  /** A session ends this long after the login, used or not. */
  readonly maxAgeMs: number;
  /** A session ends when unused this long. */
  readonly idleTimeoutMs: number;
}

/** How a session was opened. */
export type SessionAuthType = 'password' | 'oidc';

/** The signed-in user a live session belongs to. */
export interface SessionUser {
  readonly userId: number;
  /** What the event log records: the username, else the email, else the name. */
  readonly name: string;
  readonly role: Role;
}

interface SessionRow {
  user_id: number;
  last_seen_at: Date | string;
  username: string | null;
  email: string | null;
  name: string | null;
  role_name: string | null;
}

/** unleash-server's root role names; a user with another (or none) may only read. */
const ROLE_OF: Readonly<Record<string, Role>> = {
  Admin: 'admin',
  Editor: 'editor',
  Viewer: 'viewer',
};

/** The root role of a user, as the admin guard checks it. */
export function roleOfRootRole(name: string | null): Role {
  return (name !== null && ROLE_OF[name]) || 'viewer';
}

/**
 * Login sessions in the database: they survive a restart and every server process on the
 * database honours them. The cookie holds a random secret; the table holds its SHA-256, so a
 * copy of the database opens no session. Expiry is absolute and idle; the last use is written
 * at most every `touchEveryMs` so a busy UI does not write on every request.
 */
export class SessionStore {
  private readonly touchEveryMs: number;

  constructor(
    private readonly db: Queryable,
    private readonly limits: SessionLimits,
    private readonly now: () => Date,
  ) {
    this.touchEveryMs = Math.min(60_000, Math.floor(limits.idleTimeoutMs / 4));
  }

  /**
   * Opens a session for `userId` and returns its secret (the cookie value); `authType` says how
   * the user signed in (`password`, `oidc`), for the logout.
   */
  async create(userId: number, authType: SessionAuthType = 'password'): Promise<string> {
    const secret = randomBytes(32).toString('base64url');
    const at = this.now();
    // Ended sessions are deleted here, at each login, rather than by a job.
    await this.db.query('DELETE FROM user_sessions WHERE expires_at <= $1 OR last_seen_at <= $2', [
      at,
      new Date(at.getTime() - this.limits.idleTimeoutMs),
    ]);
    await this.db.query(
      `INSERT INTO user_sessions (id_hash, user_id, created_at, last_seen_at, expires_at, auth_type)
       VALUES ($1, $2, $3, $3, $4, $5)`,
      [hashSecret(secret), userId, at, new Date(at.getTime() + this.limits.maxAgeMs), authType],
    );
    return secret;
  }

  /**
   * The user of a live session, or undefined. Its last use is recorded unless `touch` is false (a
   * check that is no use of the session, such as an open page's stream being checked again).
   */
  async lookup(secret: string, touch = true): Promise<SessionUser | undefined> {
    const at = this.now();
    const [row] = await this.db.query<SessionRow>(
      `SELECT s.user_id, s.last_seen_at, u.username, u.email, u.name,
              (SELECT r.name FROM role_user ru JOIN roles r ON r.id = ru.role_id
                WHERE ru.user_id = u.id AND r.type = 'root' ORDER BY ru.role_id LIMIT 1) AS role_name
         FROM user_sessions s JOIN users u ON u.id = s.user_id
              AND u.deleted_at IS NULL AND u.disabled_at IS NULL
        WHERE s.id_hash = $1 AND s.expires_at > $2 AND s.last_seen_at > $3`,
      [hashSecret(secret), at, new Date(at.getTime() - this.limits.idleTimeoutMs)],
    );
    if (!row) return undefined;
    if (touch && at.getTime() - new Date(row.last_seen_at).getTime() >= this.touchEveryMs) {
      await this.db.query('UPDATE user_sessions SET last_seen_at = $2 WHERE id_hash = $1', [
        hashSecret(secret),
        at,
      ]);
    }
    return {
      userId: row.user_id,
      name: row.username ?? row.email ?? row.name ?? `user ${row.user_id}`,
      role: roleOfRootRole(row.role_name),
    };
  }

  /**
   * Ends the session `secret` names and every other session of its user; returns the user id and
   * how that session was opened.
   */
  async endAllOf(
    secret: string,
  ): Promise<{ userId: number; authType: SessionAuthType } | undefined> {
    const [row] = await this.db.query<{ user_id: number; auth_type: SessionAuthType }>(
      'SELECT user_id, auth_type FROM user_sessions WHERE id_hash = $1',
      [hashSecret(secret)],
    );
    if (!row) return undefined;
    await endSessionsOf(this.db, row.user_id);
    return { userId: row.user_id, authType: row.auth_type };
  }
}

/**
 * Ends every session of `userId` but the one `keep` names (a password change keeps the session
 * that made it), in the caller's transaction.
 */
export async function endSessionsOf(tx: Queryable, userId: number, keep?: string): Promise<void> {
  await tx.query('DELETE FROM user_sessions WHERE user_id = $1 AND id_hash IS DISTINCT FROM $2', [
    userId,
    keep === undefined ? null : hashSecret(keep),
  ]);
}
