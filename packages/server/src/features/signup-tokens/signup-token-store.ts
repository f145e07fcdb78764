import { randomBytes } from 'node:crypto';
import type { PublicSignupToken, Role } from '@flags/schemas';
import { hashSecret, idFromKey } from '../../auth/secrets.js';
import { maskToken } from '../../config/load.js';
import type { Queryable } from '../../db/database.js';
import { getUsers, roleJson } from '../users/user-store.js';

interface TokenRow {
  id: number;
  secret_masked: string;
  name: string;
  expires_at: Date | string;
  created_at: Date | string;
  created_by: string | null;
  enabled: boolean;
  allow_admin: boolean;
  role_id: number;
  role_name: string;
  role_type: string;
  role_description: string | null;
  role_project: string | null;
  user_ids: number[];
}

/**
 * A stored token before it is rendered for a given instant and public URL. Its secret is not part
 * of it: only the secret's hash is stored (the link holds the secret).
 */
export interface StoredSignupToken {
  /** Names the token on admin routes once its secret is no longer shown. */
  readonly id: number;
  /** The secret as lists show it: its first 4 characters and `…`. */
  readonly masked: string;
  readonly name: string;
  readonly expiresAt: Date;
  readonly createdAt: Date;
  readonly createdBy: string | null;
  /** As stored; the effective state also depends on `expiresAt` (see `isUsable`). */
  readonly enabled: boolean;
  /** Created with `allowAdmin: true`: the only way a link with the Admin role admits anyone. */
  readonly allowAdmin: boolean;
  readonly role: Role;
  readonly userIds: readonly number[];
}

const SELECT = `SELECT t.id, t.secret_masked, t.name, t.expires_at, t.created_at, t.created_by,
    t.enabled, t.allow_admin,
    r.id AS role_id, r.name AS role_name, r.type AS role_type,
    r.description AS role_description, r.project AS role_project,
    COALESCE((SELECT jsonb_agg(tu.user_id ORDER BY tu.created_at, tu.user_id)
                FROM public_signup_tokens_user tu WHERE tu.token_id = t.id), '[]'::jsonb) AS user_ids
  FROM public_signup_tokens t JOIN roles r ON r.id = t.role_id`;

function toToken(row: TokenRow): StoredSignupToken {
  return {
    id: row.id,
    masked: row.secret_masked,
    name: row.name,
    expiresAt: new Date(row.expires_at),
    createdAt: new Date(row.created_at),
    createdBy: row.created_by,
    enabled: row.enabled,
    allowAdmin: row.allow_admin,
    role: roleJson({
      id: row.role_id,
      name: row.role_name,
      type: row.role_type,
      description: row.role_description,
      project: row.role_project,
    }),
    userIds: row.user_ids,
  };
}

/** 32 hex characters from 16 random bytes: URL-safe as it stands. */
export function newSignupSecret(): string {
  return randomBytes(16).toString('hex');
}

/** Whether `role` is the root Admin role. */
export function isAdminRole(role: Pick<Role, 'name' | 'type'>): boolean {
  return role.type === 'root' && role.name === 'Admin';
}

/** A link whose role is Admin but which was not created with `allowAdmin` (older links). */
export function lacksAdminConsent(token: StoredSignupToken): boolean {
  return isAdminRole(token.role) && !token.allowAdmin;
}

/**
 * Usable for a signup: enabled, not yet expired at `now`, and, when it grants Admin, created with
 * `allowAdmin`.
 */
export function isUsable(token: StoredSignupToken, now: Date): boolean {
  return token.enabled && token.expiresAt.getTime() > now.getTime() && !lacksAdminConsent(token);
}

/** The invite link: `<public URL>/new-user?invite=<secret>` (a path in the public URL is kept). */
export function inviteUrl(publicUrl: URL, secret: string): string {
  return `${publicUrl.href.replace(/\/+$/, '')}/new-user?invite=${encodeURIComponent(secret)}`;
}

/**
 * The wire form of tokens at `now`: `enabled` is false once expired, whatever is stored. The
 * users of all the tokens are read in one query. The secret and the link carrying it are shown
 * only in the answer that creates the token (`created`); otherwise `secret` is the masked form
 * and `url` is null.
 */
export async function tokensJson(
  db: Queryable,
  tokens: readonly StoredSignupToken[],
  publicUrl: URL,
  now: Date,
  created?: { secret: string },
): Promise<PublicSignupToken[]> {
  const users = new Map(
    (await getUsers(db, [...new Set(tokens.flatMap((token) => token.userIds))])).map((user) => [
      user.id,
      user,
    ]),
  );
  return tokens.map((token) => ({
    id: token.id,
    secret: created?.secret ?? token.masked,
    url: created ? inviteUrl(publicUrl, created.secret) : null,
    name: token.name,
    enabled: isUsable(token, now),
    expiresAt: token.expiresAt.toISOString(),
    createdAt: token.createdAt.toISOString(),
    createdBy: token.createdBy,
    users: token.userIds.flatMap((id) => users.get(id) ?? []),
    role: token.role,
    allowAdmin: token.allowAdmin,
  }));
}

/** The token whose secret is `secret` (public routes: the link is the credential). */
export async function getSignupToken(
  db: Queryable,
  secret: string,
): Promise<StoredSignupToken | undefined> {
  const [row] = await db.query<TokenRow>(`${SELECT} WHERE t.secret_hash = $1`, [
    hashSecret(secret),
  ]);
  return row && toToken(row);
}

/**
 * The token named on an admin route: by its secret (as Unleash does) or, when no secret matches,
 * by its `id` (the secret is shown only once). Never use this on a public route: the id is no
 * credential.
 */
export async function findSignupToken(
  db: Queryable,
  key: string,
): Promise<StoredSignupToken | undefined> {
  const bySecret = await getSignupToken(db, key);
  const id = idFromKey(key);
  if (bySecret || id === undefined) return bySecret;
  const [row] = await db.query<TokenRow>(`${SELECT} WHERE t.id = $1`, [id]);
  return row && toToken(row);
}

export async function listSignupTokens(db: Queryable): Promise<StoredSignupToken[]> {
  const rows = await db.query<TokenRow>(`${SELECT} ORDER BY t.created_at, t.id`);
  return rows.map(toToken);
}

/** Stores a token (its secret's hash and masked form); returns its id. */
export async function insertSignupToken(
  db: Queryable,
  token: {
    secret: string;
    name: string;
    expiresAt: Date;
    createdAt: Date;
    createdBy: string | null;
    roleId: number;
    allowAdmin: boolean;
  },
): Promise<number> {
  const [row] = await db.query<{ id: number }>(
    `INSERT INTO public_signup_tokens
       (secret_hash, secret_masked, name, expires_at, created_at, created_by, role_id, allow_admin)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`,
    [
      hashSecret(token.secret),
      maskToken(token.secret),
      token.name,
      token.expiresAt,
      token.createdAt,
      token.createdBy,
      token.roleId,
      token.allowAdmin,
    ],
  );
  return row!.id;
}

/** Changes what is given; false when the id is unknown. */
export async function updateSignupToken(
  db: Queryable,
  id: number,
  change: { expiresAt?: Date; enabled?: boolean },
): Promise<boolean> {
  const rows = await db.query(
    `UPDATE public_signup_tokens
        SET expires_at = COALESCE($2, expires_at), enabled = COALESCE($3, enabled)
      WHERE id = $1 RETURNING id`,
    [id, change.expiresAt ?? null, change.enabled ?? null],
  );
  return rows.length > 0;
}

export async function addSignupTokenUser(
  tx: Queryable,
  tokenId: number,
  userId: number,
  at: Date,
): Promise<void> {
  await tx.query(
    'INSERT INTO public_signup_tokens_user (token_id, user_id, created_at) VALUES ($1, $2, $3)',
    [tokenId, userId, at],
  );
}
