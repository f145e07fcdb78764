/**
 * The proxy's own key of a route's `config` (the serving library declares `docs`).
 */
declare module 'fastify/types/context.js' {
  interface FastifyContextConfig {
    /**
     * Answered before the first sync too (the readiness hook lets it through): the operations
     * routes that report the proxy's state, which an orchestrator reads while the proxy starts.
     */
    beforeReady?: boolean;
  }
}

export {};
