import type { FastifyRequest } from 'fastify';
import { ApiError } from '../errors.js';
import type { ApiToken, TokenStore, TokenType } from '../features/api-tokens/token-store.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated API token (set by `tokenGuard`). */
    apiToken: ApiToken;
  }
}

/**
 * An `onRequest` hook admitting only tokens of `type`. Missing or unknown token → 401; a valid
 * token of the other type → 403. `Authorization: Bearer <token>` is accepted too.
 */
export function tokenGuard(store: TokenStore, type: TokenType) {
  return async function checkToken(request: FastifyRequest): Promise<void> {
    const header = request.headers.authorization;
    if (!header) throw new ApiError('UNAUTHORIZED');
    const secret = header.startsWith('Bearer ') ? header.slice(7) : header;
    const token = await store.lookup(secret);
    if (!token) throw new ApiError('UNAUTHORIZED');
    if (token.type !== type) {
      throw new ApiError(
        'FORBIDDEN',
        type === 'admin'
          ? 'A client token cannot be used on the admin API; use an admin token.'
          : 'An admin token cannot be used on the client API; use a client token.',
      );
    }
    request.apiToken = token;
  };
}
