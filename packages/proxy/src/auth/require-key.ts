import type { FastifyReply } from 'fastify';
import type { KeyReader } from './access.js';

/**
 * 401 `Unauthorized` in plain text, as Unleash Proxy answers (the wire contract); it says nothing
 * about which keys exist or why the presented one failed.
 */
export function replyUnauthorized(reply: FastifyReply): void {
  void reply.code(401).type('text/plain; charset=utf-8').send('Unauthorized');
}

/** `<key>` of an `Authorization: Bearer <key>` header (scheme case-insensitive, RFC 9110 §11.1). */
export function bearerToken(authorization: string | string[] | undefined): string | undefined {
  return typeof authorization === 'string' && hasBearerScheme(authorization)
    ? authorization.slice(7).trim()
    : undefined;
}

/** `Bearer ` in any case, without a regular expression or a lowercased copy (every request asks). */
function hasBearerScheme(value: string): boolean {
  // 'b' 'e' 'a' 'r' 'e' 'r' with the ASCII case bit set, then a space.
  return (
    value.length > 7 &&
    value.charCodeAt(6) === 0x20 &&
    (value.charCodeAt(0) | 0x20) === 0x62 &&
    (value.charCodeAt(1) | 0x20) === 0x65 &&
    (value.charCodeAt(2) | 0x20) === 0x61 &&
    (value.charCodeAt(3) | 0x20) === 0x72 &&
    (value.charCodeAt(4) | 0x20) === 0x65 &&
    (value.charCodeAt(5) | 0x20) === 0x72
  );
}

/**
 * The key in `headerName` (`clientKeysHeaderName`, lowercase); a repeated header is no key. On
 * `Authorization`, a `Bearer ` prefix is dropped, as unleash-server and Edge do.
 */
export function keyInHeader(headerName: string): KeyReader {
  return (request) => {
    const value = request.headers[headerName];
    if (typeof value !== 'string') return undefined;
    return headerName === 'authorization' ? (bearerToken(value) ?? value) : value;
  };
}

/**
 * OFREP: the key in `headerName`, or in the protocol's two security schemes,
 * `Authorization: Bearer <key>` and `X-API-Key: <key>`.
 */
export function ofrepKey(headerName: string): KeyReader {
  const inHeader = keyInHeader(headerName);
  return (request) => {
    const headers = request.headers;
    const apiKey = headers['x-api-key'];
    return (
      inHeader(request) ??
      bearerToken(headers.authorization) ??
      (typeof apiKey === 'string' ? apiKey : undefined)
    );
  };
}
