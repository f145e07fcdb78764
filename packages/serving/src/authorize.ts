import type { FastifyReply, FastifyRequest } from 'fastify';
import type { CompiledState } from './state.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The snapshot this request is answered from (the caller's environment and projects). */
    served: CompiledState;
  }
}

/**
 * An `onRequest` hook that admits a request (sets `request.served`, calls `done()`) or answers it;
 * `done(error)` hands an error to the app's error handler instead. Each service brings its own:
 * flags-proxy's checks keys and upstream-validated tokens, flags-server's its stored tokens.
 */
export type AuthorizeHook = (
  request: FastifyRequest,
  reply: FastifyReply,
  done: (error?: Error) => void,
) => void;
