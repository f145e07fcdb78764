import type { FastifyRequest } from 'fastify';
import { ApiError } from '../errors.js';
import type { TokenStore } from '../features/api-tokens/token-store.js';
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
  lookup(secret: string): Promise<Actor | undefined>;
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

/**
 * The `onRequest` hook of every admin route. Who: an `Authorization` header names an admin token
 * (role admin) or a personal access token (its user's role); without one, the session cookie names
 * a signed-in user. Nobody → 401; another kind of API token → 403 as before. A cookie-authenticated
 * write whose browser says it comes from another site → 403 (tokens are never sent by browsers on
 * their own, so token requests are not checked). Then the route's permission (`permissionOf`)
 * against the role → 403. Sets `request.actor`.
 */
export function adminGuard(options: AdminGuardOptions) {
  const { tokens, sessions, personalTokens, publicOrigin } = options;

  async function authenticate(request: FastifyRequest): Promise<Actor> {
    const header = request.headers.authorization;
    if (header) {
      const secret = header.startsWith('Bearer ') ? header.slice(7) : header;
      const token = await tokens.lookup(secret);
      if (token?.type === 'admin') {
        request.apiToken = token;
        return { type: 'token', name: token.tokenName, role: 'admin' };
      }
      if (token) throw wrongTokenKind(token.type, 'admin');
      const personal = await personalTokens?.lookup(secret);
      if (personal) return personal;
      throw new ApiError('UNAUTHORIZED');
    }
    const session = readSessionCookie(request);
    const user = session === undefined ? undefined : await sessions.lookup(session);
    if (!user) throw new ApiError('UNAUTHORIZED');
    if (!isRead(request.method) && isCrossOrigin(request, publicOrigin)) {
      throw new ApiError('CROSS_ORIGIN');
    }
    return { type: 'user', name: user.name, userId: user.userId, role: user.role };
  }

  return async function checkAdmin(request: FastifyRequest): Promise<void> {
    const actor = await authenticate(request);
    request.actor = actor;
    const needed = permissionOf(request);
    if (!allows(actor.role, needed))
      throw new ApiError('ROLE_FORBIDDEN', roleMessage(actor, needed));
  };
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
