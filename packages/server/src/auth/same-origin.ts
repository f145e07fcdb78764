import type { FastifyRequest } from 'fastify';

/**
 * Whether a browser sent `request` from another site: `Sec-Fetch-Site: cross-site`, or an
 * `Origin` that is neither the public URL's nor the one the request was addressed to (scheme and
 * `Host`, as a trusted proxy forwards them). Browsers send `Origin` with every write, so a
 * request without either header comes from a script, which the session cookie does not follow
 * anyway. `Origin: null` (sandboxed frames, some redirects) is foreign.
 */
export function isCrossOrigin(request: FastifyRequest, publicOrigin: string): boolean {
  if (request.headers['sec-fetch-site'] === 'cross-site') return true;
  const origin = request.headers.origin;
  if (origin === undefined) return false;
  return origin !== publicOrigin && origin !== `${request.protocol}://${request.host}`;
}
