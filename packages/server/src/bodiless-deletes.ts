import type { FastifyInstance } from 'fastify';

// Declared where the interface lives (see signup-tokens/routes.ts on NodeNext resolution), and in
// `fastify` too: a plugin that augments its re-export (@fastify/swagger) hides the first from
// programs that load that plugin.
declare module 'fastify/types/context.js' {
  interface FastifyContextConfig {
    /** An action POST (`/on`, `/off`, revive) that takes no body: an empty JSON body is none. */
    acceptsEmptyBody?: boolean;
  }
}
declare module 'fastify' {
  interface FastifyContextConfig {
    acceptsEmptyBody?: boolean;
  }
}

/**
 * A `DELETE` that says `content-type: application/json` and sends nothing is taken as bodiless,
 * as the Unleash server takes it (admin UIs and scripts set the header on every call). Fastify's
 * JSON parser would refuse the empty body with a 400. Action POSTs that take no body (routes with
 * `config.acceptsEmptyBody`: `/on`, `/off`, revive) are taken the same way, as Unleash's clients
 * send them. Any body that is there is still parsed (and refused when malformed), and other
 * routes keep Fastify's rule: an empty JSON body is a 400.
 */
export function acceptBodilessDeletes(app: FastifyInstance): void {
  // Fastify's own parser with its defaults: `__proto__` and `constructor.prototype` refused.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser(
    'application/json',
    { parseAs: 'string' },
    function parseJsonBody(request, body, done) {
      const bodiless =
        request.method === 'DELETE' || request.routeOptions.config.acceptsEmptyBody === true;
      if (body === '' && bodiless) done(null, undefined);
      else parseJson(request, body as string, done);
    },
  );
}
