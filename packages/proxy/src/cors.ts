import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ResolvedCors } from './config/load.js';

/** Whether answers echo the request's `Origin` (an origin list), which then selects them (`Vary`). */
export function echoesOrigin(cors: ResolvedCors): boolean {
  return cors.origin !== '*';
}

/**
 * Cross-origin headers for every response and preflight answers on any path, with the `cors.*`
 * options (defaults: origin `*`, methods `GET, POST`, exposed `ETag`, max age 172800 s, 204).
 */
export function installCors(app: FastifyInstance, cors: ResolvedCors): void {
  const anyOrigin = !echoesOrigin(cors);
  const allowed = cors.origin === '*' ? undefined : cors.origin;
  const maxAge = String(cors.maxAge);

  app.addHook(
    'onRequest',
    function corsHeaders(request: FastifyRequest, reply: FastifyReply, done: () => void) {
      if (anyOrigin) {
        reply.header('access-control-allow-origin', '*');
      } else {
        const origin = request.headers.origin;
        if (origin !== undefined && allowed?.has(origin))
          reply.header('access-control-allow-origin', origin);
        reply.header('vary', 'Origin');
      }
      if (cors.credentials) reply.header('access-control-allow-credentials', 'true');
      if (cors.exposedHeaders !== '')
        reply.header('access-control-expose-headers', cors.exposedHeaders);
      done();
    },
  );

  if (cors.preflightContinue) return;
  app.options('*', function corsPreflight(request, reply) {
    reply.header('access-control-allow-methods', cors.methods);
    if (cors.allowedHeaders !== undefined) {
      reply.header('access-control-allow-headers', cors.allowedHeaders);
    } else {
      const requested = request.headers['access-control-request-headers'];
      reply.header(
        'vary',
        anyOrigin ? 'Access-Control-Request-Headers' : 'Origin, Access-Control-Request-Headers',
      );
      if (requested !== undefined) reply.header('access-control-allow-headers', requested);
    }
    reply.header('access-control-max-age', maxAge);
    reply.header('content-length', '0');
    return reply.code(cors.optionsSuccessStatus).send();
  });
}
