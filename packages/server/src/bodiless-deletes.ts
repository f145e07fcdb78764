import type { FastifyInstance } from 'fastify';

/**
 * A `DELETE` that says `content-type: application/json` and sends nothing is taken as bodiless,
 * as the Unleash server takes it (admin UIs and scripts set the header on every call). Fastify's
 * JSON parser would refuse the empty body with a 400. Any body that is there is still parsed (and
 * refused when malformed), and other methods keep Fastify's rule: an empty JSON body is a 400.
 */
export function acceptBodilessDeletes(app: FastifyInstance): void {
  // Fastify's own parser with its defaults: `__proto__` and `constructor.prototype` refused.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser(
    'application/json',
    { parseAs: 'string' },
    function parseJsonBody(request, body, done) {
      if (body === '' && request.method === 'DELETE') done(null, undefined);
      else parseJson(request, body as string, done);
    },
  );
}
