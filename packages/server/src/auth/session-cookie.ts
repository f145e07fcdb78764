import type { FastifyRequest } from 'fastify';

/** The session cookie's name: unleash-server's, so scripts written for it find the cookie. */
export const SESSION_COOKIE = 'unleash-session';

/** The session cookie's value in `request`, if it sent one (the first, if several). */
export function readSessionCookie(request: FastifyRequest): string | undefined {
  const header = request.headers.cookie;
  if (header === undefined) return undefined;
  for (const pair of header.split(';')) {
    const equals = pair.indexOf('=');
    if (equals < 0 || pair.slice(0, equals).trim() !== SESSION_COOKIE) continue;
    const value = pair.slice(equals + 1).trim();
    return value === '' ? undefined : value;
  }
  return undefined;
}

/**
 * The `Set-Cookie` value of a session: HttpOnly (no script reads it), SameSite=Lax (browsers
 * leave it off cross-site writes; a link from elsewhere still opens the UI signed in), `Secure`
 * when the request came over HTTPS (directly, or per `X-Forwarded-Proto` from a trusted proxy).
 * `maxAgeMs` 0 clears it.
 */
export function sessionCookie(
  request: FastifyRequest,
  value: string,
  maxAgeMs: number,
  path: string,
): string {
  const secure = request.protocol === 'https' ? '; Secure' : '';
  const maxAge = Math.floor(maxAgeMs / 1000);
  return `${SESSION_COOKIE}=${value}; Path=${path}; Max-Age=${maxAge}; HttpOnly; SameSite=Lax${secure}`;
}

/** The cookie path: the public URL's path, so a server under `/flags` keeps its cookie there. */
export function cookiePath(publicUrl: URL): string {
  return publicUrl.pathname.replace(/\/+$/, '') || '/';
}
