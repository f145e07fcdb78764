import type { FastifyRequest } from 'fastify';
import { ApiError } from '../errors.js';
import type { ApiToken, TokenStore } from '../features/api-tokens/token-store.js';
import { type Actor, type Permission, permissionOf, type Role } from './actor.js';
import { isCrossOrigin } from './same-origin.js';
import { readSessionCookie } from './session-cookie.js';
import type { SessionStore } from './sessions.js';
import { wrongTokenKind } from './token-guard.js';

/**
 * Personal access tokens: a user's own tokens for scripts, acting with the user's role. The admin
 * guard asks this after the API tokens; undefined for a secret that is none.
 */
export interface PersonalAccessTokens {
  /** `touch` false: not counted as a use of the token. */
  lookup(secret: string, touch?: boolean): Promise<Actor | undefined>;
}

/** What each role may do. */
const ALLOWED: Readonly<Record<Role, ReadonlySet<Permission>>> = {
  admin: new Set(['read', 'edit', 'admin']),
  editor: new Set(['read', 'edit']),
  viewer: new Set(['read']),
};

/** Whether `role` may do what `permission` asks. */
export function allows(role: Role, permission: Permission): boolean {
  return ALLOWED[role].has(permission);
}

export interface AdminGuardOptions {
  readonly tokens: TokenStore;
  readonly sessions: SessionStore;
  /** Absent until personal access tokens exist. */
  readonly personalTokens?: PersonalAccessTokens;
  /** The origin of `PUBLIC_URL`: browser writes from it are the UI's own. */
  readonly publicOrigin: string;
}

const isRead = (method: string) => method === 'GET' || method === 'HEAD' || method === 'OPTIONS';

/** What an admin request says about who makes it: a token header, else a session cookie. */
export interface Credentials {
  /** The `Authorization` header's token (without `Bearer `). */
  readonly token?: string;
  /** The session cookie's value. */
  readonly session?: string;
}

/** The credentials `request` carries. */
export function credentialsOf(request: FastifyRequest): Credentials {
  const header = request.headers.authorization;
  if (header) return { token: header.startsWith('Bearer ') ? header.slice(7) : header };
  const session = readSessionCookie(request);
  return session === undefined ? {} : { session };
}

/** The `onRequest` hook of admin routes, and the identity check it is built on. */
export interface AdminGuard {
  (request: FastifyRequest): Promise<void>;
  /**
   * Who `credentials` name now, or undefined when nobody (ended session, deleted token or user).
   * With `touch` false the check is not counted as a use (open streams are checked again).
   * Another kind of API token throws its 403.
   */
  identify(credentials: Credentials, touch?: boolean): Promise<Actor | undefined>;
}

/**
 * The `onRequest` hook of every admin route. Who: an `Authorization` header names an admin token
 * (role admin) or a personal access token (its user's role); without one, the session cookie names
 * a signed-in user. Nobody → 401; another kind of API token → 403 as before. A cookie-authenticated
 * write whose browser says it comes from another site → 403 (tokens are never sent by browsers on
 * their own, so token requests are not checked). Then the route's permission (`permissionOf`)
 * against the role → 403. Sets `request.actor`.
 */
export function adminGuard(options: AdminGuardOptions): AdminGuard {
  const { tokens, sessions, personalTokens, publicOrigin } = options;

  /** The actor, and the admin token when it is one (routes read `request.apiToken`). */
  async function resolve(
    credentials: Credentials,
    touch: boolean,
  ): Promise<{ actor: Actor; apiToken?: ApiToken } | undefined> {
    if (credentials.token !== undefined) {
      const token = await tokens.lookup(credentials.token);
      if (token?.type === 'admin') {
        const actor: Actor = { credential: 'admin-token', name: token.tokenName, role: 'admin' };
        return { actor, apiToken: token };
      }
      if (token) throw wrongTokenKind(token.type, 'admin');
      const actor = await personalTokens?.lookup(credentials.token, touch);
      return actor && { actor };
    }
    if (credentials.session === undefined) return undefined;
    const user = await sessions.lookup(credentials.session, touch);
    return (
      user && {
        actor: { credential: 'session', name: user.name, userId: user.userId, role: user.role },
      }
    );
  }

  async function checkAdmin(request: FastifyRequest): Promise<void> {
    const found = await resolve(credentialsOf(request), true);
    if (!found) throw new ApiError('UNAUTHORIZED');
    const { actor, apiToken } = found;
    if (apiToken) request.apiToken = apiToken;
    if (
      actor.credential === 'session' &&
      !isRead(request.method) &&
      isCrossOrigin(request, publicOrigin)
    ) {
      throw new ApiError('CROSS_ORIGIN');
    }
    request.actor = actor;
    const needed = permissionOf(request);
    if (!allows(actor.role, needed))
      throw new ApiError('ROLE_FORBIDDEN', roleMessage(actor, needed));
  }

  const identify = async (credentials: Credentials, touch = true) =>
    (await resolve(credentials, touch))?.actor;
  return Object.assign(checkAdmin, { identify });
}

const ROLE_NAME: Readonly<Record<Role, string>> = {
  admin: 'Admin',
  editor: 'Editor',
  viewer: 'Viewer',
};

function roleMessage(actor: Actor, needed: Permission): string {
  const needs = needed === 'edit' ? 'the Editor or Admin role' : 'the Admin role';
  return `This needs ${needs}; ${actor.name} has the ${ROLE_NAME[actor.role]} role.`;
}
