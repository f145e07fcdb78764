/** The serving library's key of a route's `config` (a service may declare more of its own). */
declare module 'fastify/types/context.js' {
  interface FastifyContextConfig {
    /** OpenAPI-only schema parts (`querystring`, `body`) of routes that parse input by hand. */
    docs?: RouteDocs;
  }
}

/** OpenAPI-only schema parts of a route (`config.docs`). */
export type RouteDocs = Record<string, unknown>;
