import { createHash } from 'node:crypto';
import { errorResponses, OPERATIONAL_TAG, textResponse } from '@flags/serving';
import type { FastifyInstance } from 'fastify';

const BODY = 'ok';
const ETAG = `W/"${BODY.length.toString(16)}-${createHash('sha1').update(BODY).digest('base64').slice(0, 27)}"`;

/** `GET /proxy/health`: 200 `ok` once ready (the readiness hook answers 503 before). No key needed. */
export function healthRoutes(app: FastifyInstance, _options: unknown, done: () => void): void {
  const schema = {
    summary: 'Whether the proxy is ready (synchronized with the upstream).',
    tags: [OPERATIONAL_TAG],
    security: [],
    response: { 200: textResponse('`ok`', 'text/html'), ...errorResponses(503) },
  };
  app.get('/proxy/health', { schema }, function operationalGetHealth(_request, reply) {
    return reply.code(200).type('text/html; charset=utf-8').header('etag', ETAG).send(BODY);
  });
  done();
}
