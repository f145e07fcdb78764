import type { FastifyRequest } from 'fastify';
import type { Queryable } from '../../db/database.js';

/** How long logins are kept: a quarter, long enough to look back on an incident. */
export const LOGIN_HISTORY_DAYS = 90;

/** One login, as it is recorded. */
export interface LoginAttempt {
  /** The name as typed (a login with an unknown name is recorded too). */
  readonly username: string;
  /** The user it signed in, or the user the name belongs to; undefined for nobody. */
  readonly userId?: number | undefined;
  /** How: `password`, or `oidc` (single sign-on). */
  readonly authType: 'password' | 'oidc';
  readonly successful: boolean;
  /** Why a failed login failed, in words. */
  readonly failureReason?: string | undefined;
}

/** A login as `GET /api/admin/logins` answers it (Unleash Enterprise's login history shape). */
// A type, not an interface: the route's typed answer needs its index signature.
export type LoginEvent = {
  id: number;
  username: string;
  auth_type: string;
  created_at: string;
  successful: boolean;
  ip: string | null;
  user_agent: string | null;
  failure_reason: string | null;
};

/**
 * Records a login with the address and user agent of `request`; logins older than
 * `LOGIN_HISTORY_DAYS` are deleted on the way (a successful login's, so a flood of failures does
 * not add deletes).
 */
export async function recordLogin(
  db: Queryable,
  request: FastifyRequest,
  attempt: LoginAttempt,
  at: Date,
): Promise<void> {
  const userAgent = request.headers['user-agent']?.slice(0, 512) ?? null;
  await db.query(
    `INSERT INTO login_history
       (username, user_id, auth_type, successful, failure_reason, ip, user_agent, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [
      attempt.username.slice(0, 255),
      attempt.userId ?? null,
      attempt.authType,
      attempt.successful,
      attempt.failureReason ?? null,
      request.ip,
      userAgent,
      at,
    ],
  );
  if (attempt.successful) {
    await db.query('DELETE FROM login_history WHERE created_at < $1', [
      new Date(at.getTime() - LOGIN_HISTORY_DAYS * 86_400_000),
    ]);
  }
}

/** The newest logins first, at most `limit`, from `offset`. */
export async function listLogins(
  db: Queryable,
  limit: number,
  offset: number,
): Promise<LoginEvent[]> {
  const rows = await db.query<
    Omit<LoginEvent, 'created_at' | 'id'> & {
      id: number | string;
      created_at: Date | string;
    }
  >(
    `SELECT id, username, auth_type, created_at, successful, ip, user_agent, failure_reason
       FROM login_history ORDER BY created_at DESC, id DESC LIMIT $1 OFFSET $2`,
    [limit, offset],
  );
  return rows.map((row) => ({
    ...row,
    id: Number(row.id),
    created_at: new Date(row.created_at).toISOString(),
  }));
}
