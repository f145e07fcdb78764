import type { FastifyRequest } from 'fastify';
import { ApiError } from '../errors.js';
import type { ApiToken, TokenStore, TokenType } from '../features/api-tokens/token-store.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated API token (set by `tokenGuard`). */
    apiToken: ApiToken;
  }
}

/** An `onRequest` hook that authenticates the request or throws the 401/403 answer. */
export type TokenGuard = (request: FastifyRequest) => Promise<void>;

/** The API each kind of token is for, as the 403 answer names it. */
const API_OF: Readonly<Record<TokenType, string>> = {
  admin: 'the admin API',
  client: 'the client API',
  frontend: 'the frontend API',
};

/** Each kind of token as the 403 answer names it. */
const A_TOKEN_OF: Readonly<Record<TokenType, string>> = {
  admin: 'an admin token',
  client: 'a client token',
  frontend: 'a frontend token',
};

/**
 * An `onRequest` hook admitting only tokens of `type`. Missing or unknown token → 401; a valid
 * token of another type → 403 (so a frontend token, which browsers hold, never reads strategies
 * on the client API, and a client token never evaluates on the frontend API). `Authorization:
 * Bearer <token>` is accepted too.
 */
export function tokenGuard(store: TokenStore, type: TokenType): TokenGuard {
  return async function checkToken(request: FastifyRequest): Promise<void> {
    const header = request.headers.authorization;
    if (!header) throw new ApiError('UNAUTHORIZED');
    const secret = header.startsWith('Bearer ') ? header.slice(7) : header;
    const token = await store.lookup(secret);
    if (!token) throw new ApiError('UNAUTHORIZED');
    if (token.type !== type) throw wrongTokenKind(token.type, type);
    request.apiToken = token;
  };
}

/** The 403 of a valid token of kind `held` on an API that takes kind `wanted`. */
export function wrongTokenKind(held: TokenType, wanted: TokenType): ApiError {
  return new ApiError(
    'FORBIDDEN',
    `${A_TOKEN_OF[held].replace('a', 'A')} cannot be used on ${API_OF[wanted]}; use ${A_TOKEN_OF[wanted]}.`,
  );
}

/** One guard per API: `admin` for `/api/admin`, `client` for `/api/client`, `frontend` for `/api/frontend`. */
export type TokenGuards = Readonly<Record<TokenType, TokenGuard>>;

export function tokenGuards(store: TokenStore): TokenGuards {
  return Object.freeze({
    admin: tokenGuard(store, 'admin'),
    client: tokenGuard(store, 'client'),
    frontend: tokenGuard(store, 'frontend'),
  });
}
