import type { FastifyBaseLogger, FastifyRequest } from 'fastify';

type ChildLoggerArgs = Parameters<FastifyBaseLogger['child']>;

const REDACTED = '<redacted>';

/**
 * Paths whose query string may carry a secret; their whole query is left out of logs.
 * `/insights`: the dashboard's old `?token=<admin token>` links (the token now travels in the
 * fragment, which never reaches a server). `/new-user`: invite links (`?invite=<secret>`) opened
 * on this server instead of the UI they are meant for.
 */
const SECRET_QUERY_PATHS: ReadonlySet<string> = new Set(['/insights', '/new-user']);

/**
 * Paths whose segment after `prefix` is a secret: it logs as `:token`, a known route suffix is
 * kept, anything else after it and the query are left out.
 */
const SECRET_SEGMENT_PATHS: readonly { prefix: string; suffixes: readonly string[] }[] = [
  { prefix: '/invite', suffixes: ['', '/validate', '/signup'] },
  { prefix: '/api/admin/api-tokens', suffixes: [''] },
  { prefix: '/api/admin/invite-link/tokens', suffixes: [''] },
];

/** Query parameters named like a credential: their values are redacted on every path. */
const CREDENTIAL_PARAMS: ReadonlySet<string> = new Set([
  'token',
  'access_token',
  'apikey',
  'api_key',
  'invite',
  'secret',
  'password',
]);

function decoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/**
 * The path as a router might read it, for matching only: percent-decoded, repeated slashes
 * collapsed, lower case, no trailing slash. A typo or a wrong method still carries the secret.
 */
function comparablePath(rawPath: string): string {
  const path = decoded(rawPath)
    .replace(/\/{2,}/g, '/')
    .toLowerCase();
  return path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
}

function redactCredentialParams(query: string): string {
  return query
    .split('&')
    .map((pair) => {
      const equals = pair.indexOf('=');
      const name = equals < 0 ? pair : pair.slice(0, equals);
      return CREDENTIAL_PARAMS.has(decoded(name).toLowerCase()) ? `${name}=${REDACTED}` : pair;
    })
    .join('&');
}

/** A request URL as it may appear in a log line: without the secrets some URLs carry. */
export function redactUrl(url: string): string {
  const mark = url.indexOf('?');
  const rawPath = mark < 0 ? url : url.slice(0, mark);
  const path = comparablePath(rawPath);
  for (const { prefix, suffixes } of SECRET_SEGMENT_PATHS) {
    if (!path.startsWith(`${prefix}/`)) continue;
    const afterSecret = path.indexOf('/', prefix.length + 1);
    const suffix = afterSecret < 0 ? '' : path.slice(afterSecret);
    return `${prefix}/:token${suffixes.includes(suffix) ? suffix : '/…'}`;
  }
  if (mark < 0) return url;
  if (SECRET_QUERY_PATHS.has(path)) return `${rawPath}?${REDACTED}`;
  return `${rawPath}?${redactCredentialParams(url.slice(mark + 1))}`;
}

/** The `req` of request log lines (Fastify's fields, the URL through `redactUrl`). */
export function requestLogSerializer(request: FastifyRequest) {
  return {
    method: request.method,
    url: redactUrl(request.url),
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  };
}

/**
 * Fastify's `childLoggerFactory`: every request's logger, whichever logger the app was built
 * with, serializes `req` through `requestLogSerializer`. A route's own `logSerializers` still win.
 * Each request's logger is a plain child of one logger per app logger that has the serializer: a
 * child given serializers of its own costs several times a plain one, and every request makes one.
 */
export function redactingChildLoggers(): (
  logger: FastifyBaseLogger,
  bindings: ChildLoggerArgs[0],
  options: NonNullable<ChildLoggerArgs[1]>,
) => FastifyBaseLogger {
  const redacting = new WeakMap<FastifyBaseLogger, FastifyBaseLogger>();
  return function redactingChildLogger(logger, bindings, options) {
    if (Object.keys(options).length > 0) {
      return logger.child(bindings, {
        ...options,
        serializers: { req: requestLogSerializer, ...options.serializers },
      });
    }
    let base = redacting.get(logger);
    if (!base) {
      base = logger.child({}, { serializers: { req: requestLogSerializer } });
      redacting.set(logger, base);
    }
    return base.child(bindings);
  };
}
