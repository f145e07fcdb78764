import type { FastifyRequest } from 'fastify';

/** What a user may do on the admin API (unleash-server's root roles). */
export type Role = 'admin' | 'editor' | 'viewer';

/**
 * What an admin route needs: `read` (every role), `edit` (Editor and Admin: flags, strategies,
 * variants, segments, context fields, tags), `admin` (Admin only: tokens, users, environments,
 * projects, …). A route says so in `config.permission`; without it, `read` for GET and HEAD,
 * `admin` for the other methods.
 */
export type Permission = 'read' | 'edit' | 'admin';

/** How an admin request says who makes it. */
export type Credential = 'session' | 'personal-access-token' | 'admin-token';

/** Who makes an admin request: a signed-in user, or a token (admin or personal access token). */
export interface Actor {
  readonly credential: Credential;
  /** The user name, or the token's name, as the event log records it. */
  readonly name: string;
  /** The user behind a session or a personal access token. */
  readonly userId?: number;
  readonly role: Role;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Who makes an admin request (set by the admin guard). */
    actor?: Actor;
  }
  // Also here: a plugin that augments `fastify`'s re-export of this interface (@fastify/swagger
  // does) hides the augmentations of its home module from programs that load that plugin.
  interface FastifyContextConfig {
    permission?: Permission;
  }
}

// Declared where the interface lives (see signup-tokens/routes.ts on NodeNext resolution).
declare module 'fastify/types/context.js' {
  interface FastifyContextConfig {
    /** What the route needs (see `Permission`). */
    permission?: Permission;
  }
}

/** The permission a route needs: its own, else by method. */
export function permissionOf(request: FastifyRequest): Permission {
  // Read through the declared shape: programs that reach this file from outside the package
  // (test/e2e) do not always see the augmentation above.
  const declared = (request.routeOptions.config as { permission?: Permission }).permission;
  if (declared !== undefined) return declared;
  return request.method === 'GET' || request.method === 'HEAD' ? 'read' : 'admin';
}

/**
 * Who makes the request: the actor the admin guard set, else the admin token it admitted (an
 * admin token may do everything).
 */
export function actorOf(request: FastifyRequest): Actor {
  if (request.actor !== undefined) return request.actor;
  const name = (request as { apiToken?: { tokenName: string } }).apiToken?.tokenName;
  return { credential: 'admin-token', name: name ?? 'admin token', role: 'admin' };
}
