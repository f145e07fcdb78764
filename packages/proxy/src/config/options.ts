import {
  configSchema,
  type EnvVariable,
  group,
  type InCode,
  invertedVariable,
  type OptionRow,
  option,
  secondsVariable,
  splitList,
  Type,
} from '@flags/config';
import { type CustomStrategy, DEFAULT_MAX_CONTEXT_VALUE_LENGTH } from '@flags/engine';
import type { ClientFeatures } from '@flags/schemas';
import { type ContextEnricher, corsOptions, type Logger } from '@flags/serving';

export type { ContextEnricher, Logger };

/**
 * Every flags-proxy option, once: in-code name (the nesting is the in-code nesting), environment
 * variables, the JSON Schema of its value (type, range, enum, format, required), default and
 * meaning. The TypeScript types, environment parsing, validation, defaults, `--help` and the
 * README tables all come from this schema (`@flags/config`); `load.ts` turns the loaded values
 * into the domain types the proxy runs with.
 *
 * Unleash Edge's variable names (its `docs/CLI.md`) are read beside ours wherever they mean the
 * same thing, so that an Edge deployment's environment works unchanged; those in another unit or
 * sense carry their own reading (`secondsVariable`, `invertedVariable`, `upstreamRootVariable`).
 */

/** `project:environment.secret` (`*` or `[]` for the projects), the form Unleash tokens take. */
export const UNLEASH_TOKEN_PATTERN = '^[^:.\\s]+:[^:.\\s]+\\..+$';
/**
 * A `pretrustedTokens` entry, as Unleash Edge takes one: an Unleash-format token, or
 * `secret@environment` (a plain client key bound to an environment). A bare word is refused, as
 * Edge refuses it: trusted without any check, it would be a key anyone could guess (`-p 3064`
 * written after `edge`).
 */
const PRETRUSTED_TOKEN_PATTERN = `(?:${UNLEASH_TOKEN_PATTERN})|^\\S+@[^@\\s]+$`;

/** How the proxy syncs with its upstream (`upstreamStreaming`). */
export const UPSTREAM_SYNC_MODES = ['auto', 'polling'] as const;

/** What the single-flag route answers for a flag that is off (`disabledFeatureAnswer`). */
export const DISABLED_FEATURE_ANSWERS = ['not-found', 'disabled'] as const;

/**
 * The profiles the proxy loads with: `proxy`, Unleash Proxy's defaults (the `flags-proxy` command
 * without a subcommand, and in code); `edge`, Unleash Edge 20's (`flags-proxy edge`, `offline`),
 * given per option as `profiles: { edge: … }`.
 */
export const PROXY_MODES = ['proxy', 'edge'] as const;
export type ProxyMode = (typeof PROXY_MODES)[number];

/** The README's column of Edge-mode defaults. */
export const EDGE_PROFILE_COLUMN = { profile: 'edge', title: 'Default in edge mode' } as const;

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'fatal'] as const;

/** Unleash Edge's `REDIS_MODE`: one server, or a Redis Cluster. */
export const REDIS_MODES = ['single', 'cluster'] as const;

/** Unleash Edge's `REDIS_SCHEME` values (`tcp` and `tls` are other names of `redis` and `rediss`). */
export const REDIS_SCHEMES = ['redis', 'rediss', 'tcp', 'tls', 'unix', 'redis-unix'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Backup storage for the last good upstream payload. */
export interface StorageProvider {
  get(key: string): Promise<ClientFeatures | undefined>;
  set(key: string, value: ClientFeatures): Promise<void>;
}

/** A URL, in code also a `URL` object. */
const url = () => Type.Unsafe<string | URL>(Type.String({ format: 'url' }));
const list = () => Type.Array(Type.String());
const lowerCase = (raw: string) => raw.trim().toLowerCase();

/** `tagName:tagValue,tagName2:tagValue2`; an entry without a colon has an empty value (refused). */
function tagsFromEnv(raw: string): { name: string; value: string }[] {
  return splitList(raw).map((pair) => {
    const colon = pair.indexOf(':');
    return colon === -1
      ? { name: pair, value: '' }
      : { name: pair.slice(0, colon).trim(), value: pair.slice(colon + 1).trim() };
  });
}

/** Edge's `UPSTREAM_URL`: the server's root URL, under which the API is at `/api`. */
function upstreamRootVariable(name: string): EnvVariable {
  return {
    name,
    note: 'server root URL; `/api` is added',
    fromEnv: (raw) => {
      if (!URL.canParse(raw)) return raw;
      const url = new URL(raw);
      url.pathname = `${url.pathname.replace(/\/+$/, '')}/api`;
      return url.href;
    },
  };
}

/** Edge's `LOG_FORMAT`: `json` is one JSON object per line; `plain` and `pretty` are readable lines. */
/** Edge's `STREAMING` (a boolean): `true` streams where the upstream allows (`auto`), `false` polls. */
function streamingVariable(name: string): EnvVariable {
  const modes: Readonly<Record<string, string>> = { true: 'auto', false: 'polling' };
  return {
    name,
    note: '`true` (`auto`) or `false` (`polling`)',
    takes: 'true or false',
    fromEnv: (raw) => modes[lowerCase(raw)] ?? raw,
  };
}

function logFormatVariable(name: string): EnvVariable {
  const formats: Readonly<Record<string, boolean>> = { json: true, plain: false, pretty: false };
  return {
    name,
    note: '`json`, or `plain`/`pretty` for readable lines',
    takes: 'one of plain, json, pretty',
    fromEnv: (raw) => formats[lowerCase(raw)] ?? raw,
  };
}

/**
 * Headers the proxy sets on upstream requests itself, or that frame the request: custom headers
 * may not name them, so that none is replaced without a word. The header that carries the
 * upstream token (`upstreamAuthHeader`, `authorization` unless set) is refused too, in `load.ts`:
 * `authorization` is free for a gateway's credential when the token travels in another header.
 */
export const PROXY_SET_HEADERS = [
  'user-agent',
  'unleash-appname',
  'unleash-instanceid',
  'unleash-connection-id',
  'unleash-sdk',
  'unleash-client-spec',
  'unleash-interval',
  'if-none-match',
  // The upstream event stream's (`sync/upstream-stream.ts`).
  'accept',
  'cache-control',
  'last-event-id',
  'accept-encoding',
  'content-type',
  'content-length',
  'content-encoding',
  'transfer-encoding',
  'host',
  'connection',
  'keep-alive',
  'te',
  'trailer',
  'upgrade',
  'expect',
] as const;

/** The source of a regular expression that matches `word` in any letter case (JSON Schema patterns take no flags). */
function anyCase(word: string): string {
  return word.replace(/[a-z]/g, (letter) => `[${letter}${letter.toUpperCase()}]`);
}

/**
 * An RFC 9110 field name (a token) that is not one the proxy sets, and a field value: visible
 * characters with inner spaces or tabs, no line breaks.
 */
const HEADER_NAME = `^(?!(?:${PROXY_SET_HEADERS.map(anyCase).join('|')})$)[-!#$%&'*+.^_\`|~0-9A-Za-z]+$`;
const HEADER_VALUE =
  '^(?:[\\x21-\\x7e\\x80-\\xff](?:[\\t\\x20-\\x7e\\x80-\\xff]*[\\x21-\\x7e\\x80-\\xff])?)?$';

/**
 * `Name: value, Other:value` (Edge's `CUSTOM_CLIENT_HEADERS`: each entry split at its first colon,
 * both sides trimmed). An entry without a name, or a name given twice, leaves the string for ajv
 * to refuse.
 */
function headersFromEnv(raw: string): Record<string, string> | string {
  const headers: Record<string, string> = {};
  const seen = new Set<string>();
  for (const entry of splitList(raw)) {
    const colon = entry.indexOf(':');
    const name = entry.slice(0, colon).trim();
    if (colon < 1 || name === '' || seen.has(name.toLowerCase())) return raw;
    seen.add(name.toLowerCase());
    headers[name] = entry.slice(colon + 1).trim();
  }
  return headers;
}

/** `true`/`false` (any case; blank is `false`), a hop count (`1`), else the addresses. */
function trustProxyFromEnv(raw: string): boolean | number | string[] {
  const word = lowerCase(raw);
  if (word === 'true') return true;
  if (/^\d+$/.test(word)) return Number(word);
  return word === 'false' || word === '' ? false : splitList(raw);
}

/**
 * The variables of the options the client key requirement names (below the options): named there
 * as the options' own messages name them, Unleash Proxy's included.
 */
const FLAGS_API_TOKEN_ENV = ['FLAGS_API_TOKEN', 'UNLEASH_API_TOKEN', 'TOKENS'];
const CLIENT_KEYS_ENV = ['FLAGS_PROXY_CLIENT_KEYS', 'UNLEASH_PROXY_CLIENT_KEYS'];
const PROXY_SECRETS_ENV = ['FLAGS_PROXY_SECRETS', 'UNLEASH_PROXY_SECRETS'];

export const proxySchema = Type.Object(
  {
    flagsUrl: option(url(), {
      env: ['FLAGS_URL', 'UNLEASH_URL', upstreamRootVariable('UPSTREAM_URL')],
      required: true,
      doc: 'API URL of the upstream instance (e.g. `http://flags:4242/api`).',
    }),
    flagsApiToken: option(Type.Array(Type.String({ minLength: 1 }), { minItems: 1 }), {
      env: FLAGS_API_TOKEN_ENV,
      required: true,
      secret: true,
      doc: 'Comma-separated client tokens of the upstream, sent as `Authorization`: one environment is synced per token. Unleash-format tokens (`project:environment.secret`) name their environment; the first token’s environment serves plain client keys.',
    }),
    pretrustedTokens: option(
      Type.Array(Type.String({ pattern: PRETRUSTED_TOKEN_PATTERN }), {
        title:
          'a list, each an Unleash-format frontend token (`project:environment.secret`) or `secret@environment`',
      }),
      {
        env: ['FLAGS_PRETRUSTED_TOKENS', 'PRETRUSTED_TOKENS'],
        secret: true,
        doc: 'Comma-separated keys accepted without asking the upstream: Unleash-format frontend tokens, or `secret@environment` (a plain client key bound to an environment).',
      },
    ),
    tokenRevalidationInterval: option(Type.Integer({ exclusiveMinimum: 0 }), {
      env: [
        'FLAGS_TOKEN_REVALIDATION_INTERVAL',
        secondsVariable('TOKEN_REVALIDATION_INTERVAL_SECONDS'),
      ],
      default: 3_600_000,
      doc: 'How often tokens validated upstream (`/edge/validate`) are checked again, ms: a token revoked upstream stops working at the next check.',
    }),
    strictTokens: option(Type.Boolean(), {
      env: ['FLAGS_STRICT_TOKENS', 'STRICT'],
      default: false,
      profiles: { edge: true },
      doc: '`true`: only what the startup tokens (`flagsApiToken`) cover is served, and a valid token outside it gets 403 (Unleash Edge 20 has only this); `false`: a valid client token of another environment starts syncing it.',
    }),
    clientKeys: option(list(), {
      env: CLIENT_KEYS_ENV,
      secret: true,
      doc: 'Comma-separated client keys accepted from callers (required unless `proxySecrets` is set).',
    }),
    proxySecrets: option(list(), {
      env: PROXY_SECRETS_ENV,
      secret: true,
      doc: 'Deprecated alias of `clientKeys`; both lists are accepted.',
    }),
    port: option(Type.Integer({ minimum: 0, maximum: 65535 }), {
      env: ['PORT', 'PROXY_PORT'],
      default: 3000,
      profiles: { edge: 3063 },
      doc: 'Listening port (`start()` and the `flags-proxy` command).',
    }),
    host: option(Type.String(), {
      env: ['PROXY_HOST', 'INTERFACE'],
      default: '0.0.0.0',
      profiles: { edge: '::' },
      doc: 'Listening address (`start()` and the `flags-proxy` command): `::` takes IPv6 and IPv4 (dual stack); on a host without IPv6, set `0.0.0.0`.',
    }),
    tls: group({
      enable: option(Type.Boolean(), {
        env: ['TLS_ENABLE'],
        default: false,
        doc: '`true`: serves HTTPS on `tls.serverPort` with `tls.serverCert` and `tls.serverKey`, and, as Unleash Edge 20, no plain HTTP on `port` (only redirects there, with `tls.redirectHttpToHttps`). The files are read at start; one missing or unusable stops it.',
      }),
      serverCert: option(Type.String({ minLength: 1 }), {
        env: ['TLS_SERVER_CERT'],
        doc: 'PEM file of the HTTPS certificate, intermediate certificates after it (`tls.enable`).',
      }),
      serverKey: option(Type.String({ minLength: 1 }), {
        env: ['TLS_SERVER_KEY'],
        doc: 'PEM file of the HTTPS certificate’s private key (PKCS#8 as Edge takes it; PKCS#1 and SEC1 work too).',
      }),
      serverPort: option(Type.Integer({ minimum: 0, maximum: 65535 }), {
        env: ['TLS_SERVER_PORT'],
        default: 3043,
        doc: 'HTTPS port (`tls.enable`), on the interface of `host`.',
      }),
      redirectHttpToHttps: option(Type.Boolean(), {
        env: ['REDIRECT_HTTP_TO_HTTPS'],
        default: false,
        doc: 'With `tls.enable`: `port` also listens, and answers every plain HTTP request with `308 Permanent Redirect` to the same path and query on `https://<Host>:<tls.serverPort>`, as Edge.',
      }),
    }),
    proxyBasePath: option(Type.String(), {
      env: ['PROXY_BASE_PATH', 'BASE_PATH'],
      default: '',
      doc: 'Base path of every route (`base/path` serves `/base/path/proxy`, `/base/path/api/frontend`, `/base/path/internal-backstage/…`).',
    }),
    flagsAppName: option(Type.String(), {
      env: ['FLAGS_APP_NAME', 'UNLEASH_APP_NAME', 'APP_NAME'],
      default: 'flags-proxy',
      doc: 'App name used upstream, and the `appName` of contexts that carry none.',
    }),
    flagsInstanceId: option(Type.String(), {
      env: ['FLAGS_INSTANCE_ID', 'UNLEASH_INSTANCE_ID', 'INSTANCE_ID'],
      doc: 'Instance id used upstream; generated from host name and process id when unset.',
    }),
    refreshInterval: option(Type.Integer({ exclusiveMinimum: 0 }), {
      env: [
        'FLAGS_FETCH_INTERVAL',
        'UNLEASH_FETCH_INTERVAL',
        secondsVariable('FEATURES_REFRESH_INTERVAL_SECONDS'),
      ],
      default: 5000,
      profiles: { edge: 15000 },
      doc: 'Upstream polling interval, ms (> 0).',
    }),
    upstreamStreaming: option(Type.Enum(UPSTREAM_SYNC_MODES), {
      env: ['FLAGS_UPSTREAM_STREAMING', streamingVariable('STREAMING')],
      default: 'auto',
      fromEnv: lowerCase,
      doc: 'How each environment syncs with the upstream: `auto` streams (`/client/streaming`, Server-Sent Events) when the upstream offers it and polls otherwise (no stream at the first request, 404/501 or an error status from a relay without streaming: said once at info level, asked again every 120 refresh intervals, at most hourly) or while a stream that worked keeps failing; `polling` only polls. A feed with `projectName`, `namePrefix` or `tags` filters always polls.',
    }),
    metricsInterval: option(Type.Integer({ minimum: 0 }), {
      env: [
        'FLAGS_METRICS_INTERVAL',
        'UNLEASH_METRICS_INTERVAL',
        secondsVariable('METRICS_INTERVAL_SECONDS'),
      ],
      default: 30000,
      profiles: { edge: 60000 },
      doc: 'Usage metrics send interval, ms; `0` turns usage metrics off.',
    }),
    metricsJitter: option(Type.Integer({ minimum: 0 }), {
      env: ['FLAGS_METRICS_JITTER', 'UNLEASH_METRICS_JITTER'],
      default: 0,
      doc: 'Random jitter added to the metrics interval, ms (≥ 0).',
    }),
    usageMaxPendingBytes: option(Type.Integer({ exclusiveMinimum: 0 }), {
      env: ['FLAGS_USAGE_MAX_PENDING_BYTES'],
      default: 16777216,
      doc: 'Memory all pending usage metrics (counts, variant names, registrations, impact metrics not yet sent upstream, a send in flight included) may take, bytes (estimated); beyond it new entries are dropped and counted (`flags_proxy_usage_dropped_total`).',
    }),
    upstreamTimeoutMs: option(Type.Integer({ exclusiveMinimum: 0 }), {
      env: [
        'FLAGS_UPSTREAM_TIMEOUT_MS',
        secondsVariable('UPSTREAM_SOCKET_TIMEOUT'),
        // Edge's connect timeout: the nearest bound there is here, when its total one is unset.
        { ...secondsVariable('UPSTREAM_REQUEST_TIMEOUT'), fallback: true },
      ],
      default: 10000,
      profiles: { edge: 5000 },
      doc: 'Timeout of each upstream request (connecting, headers and body), ms.',
    }),
    customHeaders: option(
      Type.Unsafe<Readonly<Record<string, string>>>({
        type: 'object',
        propertyNames: { pattern: HEADER_NAME },
        additionalProperties: { type: 'string', pattern: HEADER_VALUE },
        title: `comma-separated Name: value headers (in code an object), valid HTTP names and values, none of ${PROXY_SET_HEADERS.join(', ')}`,
      }),
      {
        env: ['FLAGS_CUSTOM_HEADERS', 'CUSTOM_CLIENT_HEADERS'],
        secret: true,
        fromEnv: headersFromEnv,
        doc: 'Extra headers sent on every upstream request (an API gateway’s key, say): `Name: value, Other: value`. Headers the proxy sets itself are refused at start, the one carrying the upstream token (`upstreamAuthHeader`) above all; `Authorization` may be set when `upstreamAuthHeader` names another header (Edge lets a custom header replace the token; here the token header stays the token’s).',
      },
    ),
    upstreamAuthHeader: option(
      Type.String({
        pattern: HEADER_NAME,
        title: `an HTTP header name, none of ${PROXY_SET_HEADERS.join(', ')}`,
      }),
      {
        env: ['FLAGS_UPSTREAM_AUTH_HEADER', 'UPSTREAM_AUTH_HEADER', 'TOKEN_HEADER'],
        default: 'authorization',
        fromEnv: (raw) => raw.trim(),
        doc: 'Header that carries the client token (`flagsApiToken`, or the token of the SDK whose registration is forwarded) on upstream requests. Edge’s `TOKEN_HEADER` sets it and `clientKeysHeaderName` together.',
      },
    ),
    environment: option(Type.String(), {
      env: ['FLAGS_ENVIRONMENT', 'UNLEASH_ENVIRONMENT'],
      doc: 'Fixed `environment` of every evaluation context; callers cannot override it.',
    }),
    projectName: option(Type.String(), {
      env: ['FLAGS_PROJECT_NAME', 'UNLEASH_PROJECT_NAME'],
      doc: 'Only features of this project are synced (`?project=` upstream).',
    }),
    namePrefix: option(Type.String(), {
      env: ['FLAGS_NAME_PREFIX', 'UNLEASH_NAME_PREFIX'],
      doc: 'Only features whose name starts with this prefix are synced (`?namePrefix=`).',
    }),
    tags: option(
      Type.Array(
        Type.Object({ name: Type.String({ minLength: 1 }), value: Type.String({ minLength: 1 }) }),
        { title: 'a list of tagName:tagValue pairs, both parts non-empty' },
      ),
      {
        env: ['FLAGS_TAGS', 'UNLEASH_TAGS'],
        fromEnv: tagsFromEnv,
        doc: 'Only features with one of these tags are synced: `tagName:tagValue,tagName2:tagValue2`.',
      },
    ),
    logger: option(Type.Unsafe<Logger>({}), {
      env: [],
      doc: 'Custom pino-compatible logger (in-code only); `useJsonLogger` and `logLevel` then have no effect.',
    }),
    publicSecrets: option(Type.Array(Type.String()), {
      env: [],
      secret: true,
      doc: 'Client keys and tokens that are public on purpose, as a demo’s well-known ones (in-code only): no warning at start that they are short.',
    }),
    useJsonLogger: option(Type.Boolean(), {
      env: ['JSON_LOGGER', logFormatVariable('LOG_FORMAT')],
      default: false,
      doc: '`true`: one JSON object per log line; `false`: readable lines.',
    }),
    logLevel: option(Type.Enum(LOG_LEVELS), {
      env: ['LOG_LEVEL'],
      default: 'warn',
      fromEnv: lowerCase,
      doc: 'One of `debug`, `info`, `warn`, `error`, `fatal`.',
    }),
    customStrategies: option(
      Type.Unsafe<readonly (CustomStrategy | string)[]>({
        type: 'array',
        items: { anyOf: [{ type: 'string' }, { type: 'object' }] },
        title: 'a list of file paths (in code also strategy objects)',
      }),
      {
        env: ['FLAGS_CUSTOM_STRATEGIES_FILE', 'UNLEASH_CUSTOM_STRATEGIES_FILE'],
        doc: 'Comma-separated JavaScript files (resolved from the working directory), each exporting an array of strategy objects `{ name, isEnabled(parameters, context) }`. In code: strategy objects or paths.',
      },
    ),
    trustProxy: option(
      Type.Union(
        [
          Type.Boolean(),
          Type.Integer({ minimum: 0 }),
          Type.Array(Type.String({ format: 'proxy-address' })),
        ],
        {
          title:
            'true, false, a hop count, or IP/CIDR addresses (or loopback, linklocal, uniquelocal)',
        },
      ),
      {
        env: [
          'TRUST_PROXY',
          {
            name: 'PROXY_TRUSTED_SERVERS',
            note: 'with `TRUST_PROXY=true`: the only senders trusted, as Edge reads it',
            fromEnv: splitList,
          },
        ],
        default: false,
        fromEnv: trustProxyFromEnv,
        doc: 'Whose `X-Forwarded-For` gives the caller address (for `allowList`/`denyList`, the report rate limit and contexts): comma-separated IPs/CIDRs of the load balancers in front (or `loopback`, `linklocal`, `uniquelocal`), or a hop count (`1`: the one load balancer in front; the address it saw is used, anything a caller put further left is not). `true` trusts every sender, so any caller can choose its address: a warning says so at start.',
      },
    ),
    allowList: option(Type.Array(Type.String({ format: 'proxy-address' })), {
      env: ['FLAGS_ALLOW_LIST', 'ALLOW_LIST'],
      fromEnv: splitList,
      default: [],
      doc: 'Comma-separated IPs/CIDRs (or `loopback`, `linklocal`, `uniquelocal`): only callers at these addresses are answered, on every route, health included; others get 403 (add `loopback` for the `flags-proxy ready` and `health` probes run in the container). The address is the request’s (with `trustProxy`, the forwarded one). Empty: every address.',
    }),
    denyList: option(Type.Array(Type.String({ format: 'proxy-address' })), {
      env: ['FLAGS_DENY_LIST', 'DENY_LIST'],
      fromEnv: splitList,
      default: [],
      doc: 'Comma-separated IPs/CIDRs (or `loopback`, `linklocal`, `uniquelocal`) whose callers get 403 on every route; wins over `allowList`.',
    }),
    compression: option(Type.Boolean(), {
      env: ['PROXY_COMPRESSION'],
      default: false,
      profiles: { edge: true },
      doc: '`true`: answers over 1 KB are compressed (br, gzip or deflate, as the caller accepts), as Unleash Proxy and Edge always do. A never-seen context’s evaluation answer is sent in gzip where the caller takes it, joined from pieces compressed once per flag result (a few µs: the benchmark’s 200-flag answer goes from 15 KB to ~3.9 KB), else compressed at the fastest level (brotli quality 1, zlib level 1: ~20–40 µs of CPU); an answer the cache keeps is compressed once per `Accept-Encoding` its callers send, smaller (brotli 5, zlib 6: under 1 KB), and then sent as is. Off by default: compress at the load balancer, or turn it on where none does.',
    }),
    ignoreCallerRemoteAddress: option(Type.Boolean(), {
      env: ['PROXY_IGNORE_CALLER_REMOTE_ADDRESS'],
      doc: '`true`: a `remoteAddress` the caller sends (query, body, OFREP context) is ignored and the request address is used, so callers cannot pass IP-restricted flags. Default: `true` when `trustProxy` is set, else `false` (without it, behind a load balancer, the request address is the balancer’s and callers had to send theirs, as with Unleash Proxy).',
    }),
    clientKeysHeaderName: option(Type.String(), {
      env: ['CLIENT_KEY_HEADER_NAME', 'EDGE_AUTH_HEADER', 'TOKEN_HEADER'],
      default: 'authorization',
      doc: 'Request header that carries the client key.',
    }),
    storageProvider: option(Type.Unsafe<StorageProvider>({}), {
      env: [],
      doc: 'Backup storage `{ get(key), set(key, value) }` (in-code only); wins over `redisUrl`, `s3BucketName` and `backupDir`.',
    }),
    backupDir: option(Type.String(), {
      env: ['BACKUP_DIR', 'BACKUP_FOLDER'],
      doc: 'Directory where every new upstream payload is saved (atomic rename) and read back at start when the upstream is down (Unleash Edge’s files too, see Backups). At most one of `backupDir`, `redisUrl`/`redisHost` and `s3BucketName`.',
    }),
    redisUrl: option(Type.Array(Type.String({ format: 'url' }), { minItems: 1 }), {
      env: ['REDIS_URL'],
      doc: 'Redis URL (`redis://host:6379/0`, `rediss://` for TLS) where every new upstream payload is saved and read back at start when the upstream is down (Unleash Edge’s keys too, see Backups). With `redisMode` `cluster`, a comma-separated list of the cluster’s nodes; otherwise only the first URL is used.',
    }),
    redisMode: option(Type.Enum(REDIS_MODES), {
      env: ['REDIS_MODE'],
      fromEnv: lowerCase,
      default: 'single',
      doc: '`single`: one Redis server. `cluster`: a Redis Cluster reached through the nodes `redisUrl` lists (keys are spread over its shards).',
    }),
    redisHost: option(Type.String({ minLength: 1 }), {
      env: ['REDIS_HOST'],
      doc: 'Redis host, when `redisUrl` is not set: the URL is built from `redisScheme`, this host, `redisPort`, `redisUsername` and `redisPassword` (`single` mode only).',
    }),
    redisPort: option(Type.Integer({ minimum: 1, maximum: 65535 }), {
      env: ['REDIS_PORT'],
      doc: 'Redis port; replaces the port of `redisUrl` (single mode) or goes with `redisHost`. Default: the URL’s, else 6379.',
    }),
    redisUsername: option(Type.String({ minLength: 1 }), {
      env: ['REDIS_USERNAME'],
      doc: 'Redis user (ACL); replaces the one in `redisUrl` (for every node in `cluster` mode).',
    }),
    redisPassword: option(Type.String({ minLength: 1 }), {
      env: ['REDIS_PASSWORD'],
      secret: true,
      doc: 'Redis password; replaces the one in `redisUrl` (for every node in `cluster` mode).',
    }),
    redisScheme: option(Type.Enum(REDIS_SCHEMES), {
      env: ['REDIS_SCHEME'],
      fromEnv: lowerCase,
      default: 'redis',
      doc: 'Scheme of the URL built from `redisHost`: `redis`/`tcp` plain, `rediss`/`tls` TLS, `unix`/`redis-unix` a socket (the host is then its path).',
    }),
    redisSecure: option(Type.Boolean(), {
      env: ['REDIS_SECURE'],
      default: false,
      doc: '`true`: Redis is reached over TLS (`rediss://`) whatever the scheme of `redisUrl` or `redisScheme`.',
    }),
    redisReadConnectionTimeoutMs: option(Type.Integer({ exclusiveMinimum: 0 }), {
      env: ['REDIS_READ_CONNECTION_TIMEOUT_MILLISECONDS'],
      default: 2000,
      doc: 'Longest wait, ms, to connect to Redis and read a backup at start; past it the read counts as failed (logged) and the proxy goes on without the backup.',
    }),
    redisWriteConnectionTimeoutMs: option(Type.Integer({ exclusiveMinimum: 0 }), {
      env: ['REDIS_WRITE_CONNECTION_TIMEOUT_MILLISECONDS'],
      default: 2000,
      doc: 'Longest wait, ms, to connect to Redis and save a backup; past it the write counts as failed (logged).',
    }),
    redisKeyPrefix: option(Type.String(), {
      env: ['REDIS_KEY_PREFIX'],
      default: 'flags-proxy:',
      doc: 'Prefix of the Redis backup key (the key is `<prefix>flags-proxy-backup-<flagsAppName>`).',
    }),
    s3BucketName: option(Type.String({ minLength: 1 }), {
      env: ['S3_BUCKET_NAME'],
      doc: 'S3 bucket where every new upstream payload is saved (object `flags-proxy-backup-<flagsAppName>.json`) and read back at start when the upstream is down (Unleash Edge’s objects too, see Backups). Region, credentials and endpoint come from the standard AWS settings (`AWS_REGION`, `AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY`, `AWS_PROFILE`, roles, `AWS_ENDPOINT_URL_S3` for an S3-compatible store).',
    }),
    s3ForcePathStyle: option(Type.Boolean(), {
      env: ['S3_FORCE_PATH_STYLE'],
      default: false,
      doc: '`true`: the bucket goes in the path (`https://host/bucket/key`), not the host name, as most S3-compatible stores (MinIO, …) need.',
    }),
    enableOAS: option(Type.Boolean(), {
      env: ['ENABLE_OAS'],
      default: false,
      profiles: { edge: true },
      doc: 'Serves the OpenAPI description and interactive UI under `/docs/openapi`.',
    }),
    enableAllEndpoint: option(Type.Boolean(), {
      env: ['ENABLE_ALL_ENDPOINT', invertedVariable('DISABLE_ALL_ENDPOINT')],
      default: false,
      profiles: { edge: true },
      doc: 'Serves the `/all` routes (`/proxy/all`, `/api/frontend/all`, `/api/proxy/all`: enabled and disabled toggles), and flags that are off over OFREP (else answered as not found). On in edge mode, as Unleash Edge serves them unless `DISABLE_ALL_ENDPOINT=true`; off otherwise, as Unleash Proxy.',
    }),
    enableTokensEndpoint: option(Type.Boolean(), {
      env: ['PROXY_ENABLE_TOKENS_ENDPOINT', invertedVariable('DISABLE_TOKENS_ENDPOINT')],
      default: true,
      doc: 'Serves `GET /internal-backstage/tokens` without a key, in Unleash Edge’s shape: the client tokens synced with and the tokens validated, with their environments and projects, secrets masked as Edge masks them. `false` answers 404 there (Edge’s `--disable-tokens-endpoint`).',
    }),
    enableMetricsEndpoint: option(Type.Boolean(), {
      env: ['PROXY_ENABLE_METRICS_ENDPOINT', invertedVariable('DISABLE_METRICS_ENDPOINT')],
      default: true,
      doc: 'Serves the Prometheus metrics (ours and Unleash Edge’s names) at `GET /internal-backstage/metrics` without a key. `false`: that route does not exist (404), as Edge’s `--disable-metrics-endpoint`; Unleash Proxy’s `/proxy/internal-backstage/prometheus` stays.',
    }),
    prometheusRemoteWriteUrl: option(url(), {
      env: ['PROMETHEUS_REMOTE_WRITE_URL'],
      doc: 'Prometheus remote-write endpoint: when set, every metric of the metrics endpoint is pushed there every `prometheusPushInterval` (snappy-compressed protobuf `WriteRequest`), labelled `app_name`, `client_id` (`self-hosted`) and `instance_id`, as Unleash Edge pushes.',
    }),
    prometheusPushInterval: option(Type.Integer({ exclusiveMinimum: 0 }), {
      env: ['FLAGS_PROMETHEUS_PUSH_INTERVAL', secondsVariable('PROMETHEUS_PUSH_INTERVAL')],
      default: 60_000,
      doc: 'Time between two remote-write pushes, ms (`prometheusRemoteWriteUrl`); the first push is one interval after start.',
    }),
    prometheusUsername: option(Type.String(), {
      env: ['PROMETHEUS_USERNAME'],
      doc: 'User name of the remote-write endpoint (HTTP basic auth, with `prometheusPassword`, empty if unset).',
    }),
    prometheusPassword: option(Type.String(), {
      env: ['PROMETHEUS_PASSWORD'],
      secret: true,
      doc: 'Password of the remote-write endpoint (`prometheusUsername`).',
    }),
    prometheusHostname: option(Type.String(), {
      env: ['HOSTNAME'],
      doc: 'The `hostname` label of every remote-written series (`prometheusRemoteWriteUrl`), as Unleash Edge adds it; containers set `HOSTNAME` themselves. Unset: no such label.',
    }),
    disabledFeatureAnswer: option(Type.Enum(DISABLED_FEATURE_ANSWERS), {
      env: ['PROXY_DISABLED_FEATURE_ANSWER'],
      default: 'not-found',
      profiles: { edge: 'disabled' },
      fromEnv: lowerCase,
      doc: 'What `/api/frontend/features/:name` (and `/api/proxy/…`) answers for a flag that is off for the context: `not-found` (404, as for an unknown flag), or `disabled` (200 with `enabled: false` and its variant, as Unleash Edge).',
    }),
    enableFeaturesEndpoint: option(Type.Boolean(), {
      env: ['PROXY_ENABLE_FEATURES_ENDPOINT', invertedVariable('DISABLE_FEATURES_ENDPOINT')],
      default: false,
      profiles: { edge: true },
      doc: 'Serves `GET /internal-backstage/features` without a key, as Unleash Edge does: every synced environment’s whole flag configuration (strategies, constraints, segments, variants). Anyone who reaches the port can read it: on in edge mode, as Edge serves it unless `DISABLE_FEATURES_ENDPOINT=true`; off otherwise, as Unleash Proxy exposed no flag configuration without a key. Where it is on, keep `/internal-backstage` off the public network if that configuration is not public. Off: 404 there.',
    }),
    enableMetricsBatchEndpoint: option(Type.Boolean(), {
      env: [
        'PROXY_ENABLE_METRICS_BATCH_ENDPOINT',
        invertedVariable('DISABLE_METRICS_BATCH_ENDPOINT'),
      ],
      default: true,
      doc: 'Serves `GET /internal-backstage/metricsbatch` without a key, as Unleash Edge does: the usage metrics waiting for the next upstream send (application and flag names, counts). `false` answers 404 there (Edge’s `--disable-metrics-batch-endpoint`).',
    }),
    enableInstanceDataEndpoint: option(Type.Boolean(), {
      env: [
        'PROXY_ENABLE_INSTANCE_DATA_ENDPOINT',
        invertedVariable('DISABLE_INSTANCE_DATA_ENDPOINT'),
      ],
      default: true,
      doc: 'Serves `GET /internal-backstage/instancedata` without a key, as Unleash Edge does: the instance data this proxy sends upstream and what downstream relays sent it. `false` answers 404 there (Edge’s `--disable-instance-data-endpoint`).',
    }),
    maxBodyBytes: option(Type.Integer({ exclusiveMinimum: 0 }), {
      env: ['PROXY_MAX_BODY_BYTES'],
      default: 1048576,
      doc: 'Largest accepted request body, bytes; larger bodies get 413.',
    }),
    requestTimeoutMs: option(Type.Integer({ minimum: 0 }), {
      env: ['PROXY_REQUEST_TIMEOUT_MS', secondsVariable('REQUEST_TIMEOUT')],
      default: 30000,
      doc: 'Longest time to receive a whole request, headers and body, ms (checked every quarter of it); a slower one gets 408 and its connection is closed, so a body trickled byte by byte holds no connection for long. Answers are not bounded: event streams stay open. `0`: no limit (headers still within 60 s). Edge 20 accepts `REQUEST_TIMEOUT` and ignores it.',
    }),
    maxConnectionsPerAddress: option(Type.Integer({ minimum: 0 }), {
      env: ['PROXY_MAX_CONNECTIONS_PER_ADDRESS'],
      default: 1000,
      doc: 'Open connections accepted from one address (the socket’s, never a forwarded one; IPv6 by /64); one more is closed at once, counted in `flags_proxy_connections_refused_total` and logged at most once a minute. Generous for browsers behind one NAT (an open event stream is a connection each). The load balancers `trustProxy` lists are exempt; with `trustProxy` `true` or a hop count none is (every sender would be): raise the cap or list them. `0`: no limit.',
    }),
    answerCacheBytes: option(Type.Integer({ minimum: 0 }), {
      env: ['PROXY_ANSWER_CACHE_BYTES'],
      default: 16777216,
      doc: 'Memory for answers kept per request (client address and query or body) and reused until the flags change (only answers that depend on the context alone; off with `expCustomEnrichers`); `0` turns it off. A request is kept from its second sighting on, so contexts seen once (a new session per browser) take none of it; a sixteenth of it remembers which requests were seen.',
    }),
    evaluationMemoBytes: option(Type.Integer({ minimum: 0 }), {
      env: ['PROXY_EVALUATION_MEMO_BYTES'],
      default: 0,
      doc: 'Memory for flag results kept per user, for each environment (and each project scope of one); `0`, the default, keeps none. With it, a user who comes back in a new session (a new `sessionId`, the rest of the context as before) gets most flags without evaluating them: those whose answer depends only on fields other than `sessionId` and the clock (no random draw, no custom strategy), kept by the values of those fields for contexts with a `userId`, a few bits a flag (~170 bytes a user at 200 flags). A user is kept from the second sighting on; an eighth of it remembers which were seen. Trades memory for CPU (figures in docs/performance.md): e.g. 8388608 for ~20,000 returning users at 200 flags.',
    }),
    reportsPerMinute: option(Type.Integer({ minimum: 0 }), {
      env: ['PROXY_REPORT_RATE_LIMIT_PER_MINUTE'],
      default: 600,
      doc: 'SDK registrations and usage reports (every `…/client/register`, `…/client/metrics` and `/api/client/metrics/bulk` route, together) accepted per client address and minute; more get 429. A browser sends about 2 a minute, so the default leaves room for ~300 browsers behind one address (behind a load balancer, set `trustProxy`, or all browsers share its address: a warning says so once the limit is reached by an address that sends `X-Forwarded-For`). `0` turns the limit off.',
    }),
    streamingMaxConnections: option(Type.Integer({ minimum: 0 }), {
      env: ['PROXY_STREAMING_MAX_CONNECTIONS'],
      default: 10000,
      doc: 'Open `/api/client/streaming` connections (Server-Sent Events) accepted at once; beyond them the answer is 429 and the Node SDK falls back to polling. Each holds a socket: keep the file-descriptor limit above it. `0` turns streaming off (every stream is refused).',
    }),
    streamingMaxConnectionsPerAddress: option(Type.Integer({ minimum: 0 }), {
      env: ['PROXY_STREAMING_MAX_CONNECTIONS_PER_ADDRESS'],
      default: 100,
      doc: 'Open `/api/client/streaming` connections accepted at once from one client address (the forwarded one behind `trustProxy`; IPv6 by /64), a hundredth of `streamingMaxConnections`’ default, so that one caller cannot take every slot; beyond it the answer is 429. Raise it when more SDK processes than this reach the proxy through one NAT or load balancer. `0`: no cap beyond `streamingMaxConnections`.',
    }),
    streamingMaxConnectionsPerToken: option(Type.Integer({ minimum: 0 }), {
      env: ['PROXY_STREAMING_MAX_CONNECTIONS_PER_TOKEN'],
      default: 5000,
      doc: 'Open `/api/client/streaming` connections accepted at once per client token, half of `streamingMaxConnections`’ default, so that one token cannot take every slot from the others; beyond it the answer is 429. `0`: no cap beyond `streamingMaxConnections`.',
    }),
    streamingKeepAliveMs: option(Type.Integer({ minimum: 0 }), {
      env: ['PROXY_STREAMING_KEEP_ALIVE_MS'],
      default: 30000,
      doc: 'Interval of the keep-alive comment sent on every open event stream (`/api/client/streaming`, `/ofrep/v1/events`), ms, so that load balancers and SDKs (whose read timeout is 60 s) keep idle streams open; `0`: none.',
    }),
    deltaEventsRetained: option(Type.Integer({ exclusiveMinimum: 0 }), {
      env: ['PROXY_DELTA_EVENTS_RETAINED'],
      default: 1000,
      doc: 'Change events kept per environment for `/api/client/delta` and for streams resuming with `Last-Event-ID`; a client further behind gets a full hydration.',
    }),
    ofrepEventStreams: option(Type.Boolean(), {
      env: ['PROXY_OFREP_EVENT_STREAMS'],
      default: true,
      doc: 'Bulk OFREP answers carry `eventStreams`: a Server-Sent Events URL (`GET /ofrep/v1/events`) that tells OpenFeature web providers to evaluate again when the flags of their environment change. `false`: no streams (providers then see changes only on a context change, a page becoming visible or their own polling).',
    }),
    ofrepEventCredentialMinutes: option(Type.Integer({ exclusiveMinimum: 0 }), {
      env: ['PROXY_OFREP_EVENT_CREDENTIAL_MINUTES'],
      default: 15,
      doc: 'How long the credential in an OFREP event-stream URL opens streams, minutes (it is valid for this long to one and a half times as long; an open stream stays open). A credential claiming a later expiry is refused.',
    }),
    ofrepEventSecret: option(Type.String({ minLength: 1 }), {
      env: ['PROXY_OFREP_EVENT_SECRET'],
      secret: true,
      doc: 'The secret OFREP event-stream credentials are signed with (HMAC-SHA256); callers never see it. Proxies behind one load balancer need the same one to accept each other’s credentials. Unset: derived from the upstream tokens (`flagsApiToken`), so proxies with the same tokens agree, but whoever holds those tokens (server-side SDKs given the same token) could sign credentials too; set a long random value (`openssl rand -hex 32`) to depend on nothing callers hold.',
    }),
    ofrepEventStreamsMax: option(Type.Integer({ minimum: 0 }), {
      env: ['PROXY_OFREP_MAX_EVENT_STREAMS'],
      default: 10000,
      doc: 'OFREP event streams open at once per process; more get 429 (providers then retry with backoff).',
    }),
    ofrepEventStreamsMaxPerAddress: option(Type.Integer({ minimum: 0 }), {
      env: ['PROXY_OFREP_MAX_EVENT_STREAMS_PER_ADDRESS'],
      default: 100,
      doc: 'OFREP event streams open at once from one client address (the forwarded one behind `trustProxy`; IPv6 by /64), a hundredth of `ofrepEventStreamsMax`’ default, so that one caller cannot take every slot; more get 429. Raise it when more browser tabs than this reach the proxy through one NAT (an office). `0`: no cap beyond `ofrepEventStreamsMax`.',
    }),
    ofrepEventStreamsMaxPerKey: option(Type.Integer({ minimum: 0 }), {
      env: ['PROXY_OFREP_MAX_EVENT_STREAMS_PER_KEY'],
      default: 0,
      doc: 'OFREP event streams open at once per client key; more get 429. A client key is public and every browser of an app shares it, so a cap per key bounds nothing an attacker holds apart from that app’s own visitors: set it (e.g. to half of `ofrepEventStreamsMax`) when several apps’ keys share a proxy, so that one app’s streams cannot take every slot from the others. `0` (default): no cap beyond `ofrepEventStreamsMax` and `ofrepEventStreamsMaxPerAddress`.',
    }),
    ofrepInactivityDelaySec: option(Type.Integer({ minimum: 0 }), {
      env: ['PROXY_OFREP_INACTIVITY_DELAY_SECONDS'],
      default: 120,
      doc: '`inactivityDelaySec` of the event streams: seconds a hidden page keeps its stream open before closing it (it evaluates again when visible).',
    }),
    maxContextValueLength: option(Type.Integer({ exclusiveMinimum: 0 }), {
      env: ['PROXY_MAX_CONTEXT_VALUE_LENGTH'],
      default: DEFAULT_MAX_CONTEXT_VALUE_LENGTH,
      doc: 'Longest context value compared, characters: a constraint or strategy on a longer value (a caller can send any) does not match; the rest of the evaluation goes on.',
    }),
    cors: corsOptions,
    httpOptions: group({
      rejectUnauthorized: option(Type.Boolean(), {
        env: ['HTTP_OPTIONS_REJECT_UNAUTHORIZED', invertedVariable('SKIP_SSL_VERIFICATION')],
        default: true,
        doc: 'Rejects upstream TLS certificates that do not verify.',
      }),
      httpProxy: option(url(), {
        env: ['HTTP_PROXY', 'http_proxy'],
        doc: 'Proxy server for outgoing HTTP requests.',
      }),
      httpsProxy: option(url(), {
        env: ['HTTPS_PROXY', 'https_proxy'],
        doc: 'Proxy server for outgoing HTTPS requests.',
      }),
      noProxy: option(list(), {
        env: ['NO_PROXY', 'no_proxy'],
        doc: 'Hosts reached directly despite `HTTP_PROXY`/`HTTPS_PROXY`: `*`, host names (with their subdomains), IPs or CIDR ranges, each optionally with `:port`.',
      }),
      upstreamCertificateFile: option(Type.String({ minLength: 1 }), {
        env: ['FLAGS_UPSTREAM_CERTIFICATE_FILE', 'UPSTREAM_CERTIFICATE_FILE'],
        doc: 'PEM file of a certificate authority (a private CA, or the upstream’s self-signed certificate) trusted for the upstream besides the usual ones.',
      }),
      clientCertificateFile: option(Type.String({ minLength: 1 }), {
        env: ['FLAGS_CLIENT_CERTIFICATE_FILE', 'PKCS8_CLIENT_CERTIFICATE_FILE'],
        doc: 'Mutual TLS with the upstream: PEM file of the proxy’s client certificate, leaf first, then the intermediates the upstream needs (with `httpOptions.clientKeyFile`).',
      }),
      clientKeyFile: option(Type.String({ minLength: 1 }), {
        env: ['FLAGS_CLIENT_KEY_FILE', 'PKCS8_CLIENT_KEY_FILE'],
        doc: 'Mutual TLS: PEM file of the client certificate’s private key (PKCS#8).',
      }),
      clientIdentityFile: option(Type.String({ minLength: 1 }), {
        env: ['FLAGS_CLIENT_IDENTITY_FILE', 'PKCS12_IDENTITY_FILE'],
        doc: 'Mutual TLS: PKCS#12 file (`.pfx`/`.p12`) holding the client certificate and its key; used instead of the PKCS#8 files when both are set, as in Edge.',
      }),
      clientPemFile: option(Type.String({ minLength: 1 }), {
        env: ['FLAGS_CLIENT_PEM_FILE', 'PEM_CERT_FILE'],
        doc: 'Mutual TLS: one PEM file holding the client certificate and its private key; used when neither `httpOptions.clientIdentityFile` nor `httpOptions.clientCertificateFile` is set, as in Edge.',
      }),
      clientIdentityPassphrase: option(Type.String(), {
        env: ['FLAGS_CLIENT_IDENTITY_PASSPHRASE', 'PKCS12_PASSPHRASE'],
        secret: true,
        doc: 'Passphrase of `httpOptions.clientIdentityFile` (none: an unencrypted file).',
      }),
      keepAliveMs: option(Type.Integer({ exclusiveMinimum: 0 }), {
        env: ['FLAGS_UPSTREAM_KEEPALIVE_MS', secondsVariable('CLIENT_KEEPALIVE_TIMEOUT')],
        default: 15000,
        doc: 'Idle time after which TCP keep-alive probes check an upstream connection, ms (as Edge’s `CLIENT_KEEPALIVE_TIMEOUT`, seconds there).',
      }),
    }),
    expBootstrap: group({
      url: option(url(), {
        env: ['EXP_BOOTSTRAP_URL'],
        doc: 'Experimental: URL of a client-features payload served until the first upstream sync.',
      }),
      urlHeaders: group({
        Authorization: option(Type.String(), {
          env: ['EXP_BOOTSTRAP_AUTHORIZATION'],
          secret: true,
          doc: 'Experimental: `Authorization` header sent when fetching `expBootstrap.url`.',
        }),
      }),
    }),
    expServerSideSdkConfig: group({
      tokens: option(list(), {
        env: ['EXP_SERVER_SIDE_SDK_CONFIG_TOKENS'],
        secret: true,
        doc: 'Experimental: comma-separated tokens server-side SDKs may use to read `/proxy/client/features`.',
      }),
    }),
    expCustomEnrichers: option(
      Type.Unsafe<readonly (ContextEnricher | string)[]>({
        type: 'array',
        items: { anyOf: [{ type: 'string' }, { typeof: 'function' }] },
        title: 'a list of file paths (in code also functions)',
      }),
      {
        env: ['EXP_CUSTOM_ENRICHERS_FILE'],
        doc: 'Experimental: comma-separated JavaScript files exporting arrays of `(context) => context` enrichers, applied in order. In code: functions or paths.',
      },
    ),
  },
  {
    // Client keys are required, under either name (`proxySecrets` is the deprecated one), unless
    // a startup token is Unleash-format: then frontend tokens are validated upstream.
    anyOf: [
      ...(
        [
          ['clientKeys', CLIENT_KEYS_ENV],
          ['proxySecrets', PROXY_SECRETS_ENV],
        ] as const
      ).map(([name, env]) => ({
        description: `the ${name} option (${env.join(' or ')})`,
        type: 'object',
        required: [name],
        properties: { [name]: { type: 'array', minItems: 1 } },
      })),
      {
        description: `an Unleash-format token (\`project:environment.secret\`) in flagsApiToken (${FLAGS_API_TOKEN_ENV.join(' or ')})`,
        type: 'object',
        required: ['flagsApiToken'],
        properties: {
          flagsApiToken: {
            type: 'array',
            contains: { type: 'string', pattern: UNLEASH_TOKEN_PATTERN },
          },
        },
      },
    ],
  },
);

export const proxyConfig = configSchema(proxySchema);

/** In-code options of `createProxy`/`createApp`/`start`; names as in the proxy document. */
export type ProxyOptions = InCode<typeof proxySchema>;

/** The options as documented (README table, `--help`), in the shape this table has always had. */
export const options: readonly (Pick<OptionRow, 'env' | 'default' | 'doc'> & {
  readonly option: string;
})[] = proxyConfig.options.map((row) => ({
  option: row.key,
  env: row.env,
  default: row.default,
  doc: row.doc,
}));
