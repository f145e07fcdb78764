import type { FastifyInstance } from 'fastify';

/**
 * Every answer carries `X-Content-Type-Options: nosniff`, so a browser takes each body as the
 * type it is sent with (JSON stays JSON, never a script or a page). Set in `onSend`, which every
 * answer passes through: routes, errors, 404s, rate limits and the closing 503.
 */
export function noSniff(app: FastifyInstance): void {
  app.addHook('onSend', (_request, reply, payload, done) => {
    void reply.header('x-content-type-options', 'nosniff');
    done(null, payload);
  });
}
