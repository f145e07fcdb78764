import type { FastifyReply, FastifyRequest } from 'fastify';
import type { KeyChecker } from './client-keys.js';

/** An `onRequest` hook that lets a request through only with an accepted key. */
export type Authenticate = (request: FastifyRequest, reply: FastifyReply, done: () => void) => void;

/**
 * 401 `Unauthorized` in plain text, as Unleash Proxy answers (the wire contract); it says nothing
 * about which keys exist or why the presented one failed.
 */
export function replyUnauthorized(reply: FastifyReply): void {
  void reply.code(401).type('text/plain; charset=utf-8').send('Unauthorized');
}

/** `<key>` of an `Authorization: Bearer <key>` header (scheme case-insensitive, RFC 9110 §11.1). */
export function bearerToken(authorization: string | string[] | undefined): string | undefined {
  return typeof authorization === 'string' && /^bearer /i.test(authorization)
    ? authorization.slice(7).trim()
    : undefined;
}

/** Whether a request presents, in `headerName` (`clientKeysHeaderName`, lowercase), a key `checker` accepts. */
export function presentsKey(
  checker: KeyChecker,
  headerName: string,
): (request: FastifyRequest) => boolean {
  return (request) => checker.accepts(request.headers[headerName]);
}

/**
 * The key must come in `headerName` (`clientKeysHeaderName`, lowercase). Readiness is checked
 * before it and the input after it (unlike Unleash Proxy, which validates first), so callers
 * without a key learn nothing about validation.
 */
export function requireKey(checker: KeyChecker, headerName: string): Authenticate {
  const accepted = presentsKey(checker, headerName);
  return function checkClientKey(request, reply, done) {
    if (accepted(request)) {
      done();
      return;
    }
    replyUnauthorized(reply);
  };
}

/**
 * OFREP: the key in `headerName`, or in the protocol's two security schemes,
 * `Authorization: Bearer <key>` and `X-API-Key: <key>`.
 */
export function requireOfrepKey(checker: KeyChecker, headerName: string): Authenticate {
  return function checkOfrepKey(request, reply, done) {
    const headers = request.headers;
    const bearer = bearerToken(headers.authorization);
    if (
      checker.accepts(headers[headerName]) ||
      (bearer !== undefined && checker.accepts(bearer)) ||
      checker.accepts(headers['x-api-key'])
    ) {
      done();
      return;
    }
    replyUnauthorized(reply);
  };
}
