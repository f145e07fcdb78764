import type { FastifyRequest } from 'fastify';

/**
 * Request log serializer for routes whose path carries a secret (`/invite/:token/...`,
 * `/api/admin/api-tokens/:token`): logs the route pattern instead of the URL, so the secret
 * never reaches a log line.
 */
export function maskedSecretRequest(request: FastifyRequest) {
  return {
    method: request.method,
    url: request.routeOptions.url ?? '(secret path)',
    host: request.host,
    remoteAddress: request.ip,
  };
}
