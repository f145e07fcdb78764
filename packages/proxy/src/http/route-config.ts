/**
 * The proxy's own keys of a route's `config`, declared in one augmentation: TypeScript did not
 * merge two augmentations of this interface from two of our files (one hid the other).
 */
declare module 'fastify/types/context.js' {
  interface FastifyContextConfig {
    /** OpenAPI-only schema parts (`querystring`, `body`) of routes that parse input by hand. */
    docs?: Record<string, unknown>;
    /**
     * Answered before the first sync too (the readiness hook lets it through): the operations
     * routes that report the proxy's state, which an orchestrator reads while the proxy starts.
     */
    beforeReady?: boolean;
  }
}

export {};
