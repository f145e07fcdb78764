import { type CustomStrategy, DEFAULT_MAX_CONTEXT_VALUE_LENGTH } from '@flags/engine';
import type { ClientFeatures, Context } from '@flags/schemas';

/**
 * Every flags-proxy option, one row each: in-code path, environment variable(s), type, default and
 * meaning. `load.ts` parses environment variables and validates in-code options from this table,
 * and the README configuration table is checked against it by a test.
 */
export type OptionType =
  | 'url'
  | 'string'
  | 'secret'
  | 'list'
  | 'secret-list'
  | 'paths'
  | 'ms'
  | 'seconds'
  | 'bytes'
  /** Bytes of memory, 0 meaning none. */
  | 'budget'
  /** A whole number of things, 0 meaning no limit. */
  | 'count'
  /** A positive whole number of characters (a string's `length`). */
  | 'length'
  | 'port'
  | 'status'
  | 'boolean'
  | 'level'
  | 'trust-proxy'
  | 'tags'
  | 'base-path'
  /** An object given in code only (no environment variable). */
  | 'object';

export interface OptionSpec {
  /** Dotted path in the in-code options (`cors.origin`); `undefined` for environment-only settings. */
  readonly option: string;
  /** Environment variables read, first one set wins. Empty for in-code-only options. */
  readonly env: readonly string[];
  readonly type: OptionType;
  /** Default as documented (and parsed like an environment value); undefined = unset. */
  readonly default?: string;
  readonly required?: boolean;
  readonly doc: string;
}

export const options: readonly OptionSpec[] = [
  {
    option: 'flagsUrl',
    env: ['FLAGS_URL'],
    type: 'url',
    required: true,
    doc: 'API URL of the upstream instance (e.g. `http://flags:4242/api`).',
  },
  {
    option: 'flagsApiToken',
    env: ['FLAGS_API_TOKEN'],
    type: 'secret',
    required: true,
    doc: 'Client-type API token for the upstream API, sent as `Authorization`.',
  },
  {
    option: 'clientKeys',
    env: ['FLAGS_PROXY_CLIENT_KEYS'],
    type: 'secret-list',
    required: true,
    doc: 'Comma-separated client keys accepted from callers (required unless `proxySecrets` is set).',
  },
  {
    option: 'proxySecrets',
    env: ['FLAGS_PROXY_SECRETS'],
    type: 'secret-list',
    doc: 'Deprecated alias of `clientKeys`; both lists are accepted.',
  },
  {
    option: 'port',
    env: ['PORT', 'PROXY_PORT'],
    type: 'port',
    default: '3000',
    doc: 'Listening port (`start()` and the `flags-proxy` command).',
  },
  {
    option: 'host',
    env: ['PROXY_HOST'],
    type: 'string',
    default: '0.0.0.0',
    doc: 'Listening address (`start()` and the `flags-proxy` command).',
  },
  {
    option: 'proxyBasePath',
    env: ['PROXY_BASE_PATH'],
    type: 'base-path',
    default: '',
    doc: 'Base path; `/proxy` is appended (`base/path` serves `/base/path/proxy`).',
  },
  {
    option: 'flagsAppName',
    env: ['FLAGS_APP_NAME'],
    type: 'string',
    default: 'flags-proxy',
    doc: 'App name used upstream, and the `appName` of contexts that carry none.',
  },
  {
    option: 'flagsInstanceId',
    env: ['FLAGS_INSTANCE_ID'],
    type: 'string',
    doc: 'Instance id used upstream; generated from host name and process id when unset.',
  },
  {
    option: 'refreshInterval',
    env: ['FLAGS_FETCH_INTERVAL'],
    type: 'ms',
    default: '5000',
    doc: 'Upstream polling interval, ms (> 0).',
  },
  {
    option: 'metricsInterval',
    env: ['FLAGS_METRICS_INTERVAL'],
    type: 'ms',
    default: '30000',
    doc: 'Usage metrics send interval, ms; `0` turns usage metrics off.',
  },
  {
    option: 'metricsJitter',
    env: ['FLAGS_METRICS_JITTER'],
    type: 'ms',
    default: '0',
    doc: 'Random jitter added to the metrics interval, ms (≥ 0).',
  },
  {
    option: 'upstreamTimeoutMs',
    env: ['FLAGS_UPSTREAM_TIMEOUT_MS'],
    type: 'ms',
    default: '10000',
    doc: 'Timeout of each upstream request (connecting, headers and body), ms.',
  },
  {
    option: 'environment',
    env: ['FLAGS_ENVIRONMENT'],
    type: 'string',
    doc: 'Fixed `environment` of every evaluation context; callers cannot override it.',
  },
  {
    option: 'projectName',
    env: ['FLAGS_PROJECT_NAME'],
    type: 'string',
    doc: 'Only features of this project are synced (`?project=` upstream).',
  },
  {
    option: 'namePrefix',
    env: ['FLAGS_NAME_PREFIX'],
    type: 'string',
    doc: 'Only features whose name starts with this prefix are synced (`?namePrefix=`).',
  },
  {
    option: 'tags',
    env: ['FLAGS_TAGS'],
    type: 'tags',
    doc: 'Only features with one of these tags are synced: `tagName:tagValue,tagName2:tagValue2`.',
  },
  {
    option: 'logger',
    env: [],
    type: 'object',
    doc: 'Custom pino-compatible logger (in-code only); `useJsonLogger` and `logLevel` then have no effect.',
  },
  {
    option: 'useJsonLogger',
    env: ['JSON_LOGGER'],
    type: 'boolean',
    default: 'false',
    doc: '`true`: one JSON object per log line; `false`: readable lines.',
  },
  {
    option: 'logLevel',
    env: ['LOG_LEVEL'],
    type: 'level',
    default: 'warn',
    doc: 'One of `debug`, `info`, `warn`, `error`, `fatal`.',
  },
  {
    option: 'customStrategies',
    env: ['FLAGS_CUSTOM_STRATEGIES_FILE'],
    type: 'paths',
    doc: 'Comma-separated JavaScript files (resolved from the working directory), each exporting an array of strategy objects `{ name, isEnabled(parameters, context) }`. In code: strategy objects or paths.',
  },
  {
    option: 'trustProxy',
    env: ['TRUST_PROXY'],
    type: 'trust-proxy',
    default: 'false',
    doc: '`true`/`false`, or comma-separated IPs/CIDRs (or `loopback`, `linklocal`, `uniquelocal`) whose `X-Forwarded-For` is trusted for the caller address.',
  },
  {
    option: 'ignoreCallerRemoteAddress',
    env: ['PROXY_IGNORE_CALLER_REMOTE_ADDRESS'],
    type: 'boolean',
    doc: '`true`: a `remoteAddress` the caller sends (query, body, OFREP context) is ignored and the request address is used, so callers cannot pass IP-restricted flags. Default: `true` when `trustProxy` is set, else `false` (without it, behind a load balancer, the request address is the balancer’s and callers had to send theirs, as with Unleash Proxy).',
  },
  {
    option: 'clientKeysHeaderName',
    env: ['CLIENT_KEY_HEADER_NAME'],
    type: 'string',
    default: 'authorization',
    doc: 'Request header that carries the client key.',
  },
  {
    option: 'storageProvider',
    env: [],
    type: 'object',
    doc: 'Backup storage `{ get(key), set(key, value) }` (in-code only); wins over `redisUrl` and `backupDir`.',
  },
  {
    option: 'backupDir',
    env: ['BACKUP_DIR'],
    type: 'string',
    doc: 'Directory where every new upstream payload is saved (atomic rename) and read back at start when the upstream is down.',
  },
  {
    option: 'redisUrl',
    env: ['REDIS_URL'],
    type: 'url',
    doc: 'Redis URL (`redis://host:6379/0`) where every new upstream payload is saved and read back at start when the upstream is down; wins over `backupDir`.',
  },
  {
    option: 'redisKeyPrefix',
    env: ['REDIS_KEY_PREFIX'],
    type: 'string',
    default: 'flags-proxy:',
    doc: 'Prefix of the Redis backup key (the key is `<prefix>flags-proxy-backup-<flagsAppName>`).',
  },
  {
    option: 'enableOAS',
    env: ['ENABLE_OAS'],
    type: 'boolean',
    default: 'false',
    doc: 'Serves the OpenAPI description and interactive UI under `/docs/openapi`.',
  },
  {
    option: 'enableAllEndpoint',
    env: ['ENABLE_ALL_ENDPOINT'],
    type: 'boolean',
    default: 'false',
    doc: 'Serves `/proxy/all` (enabled and disabled toggles), and flags that are off over OFREP (else answered as not found).',
  },
  {
    option: 'maxBodyBytes',
    env: ['PROXY_MAX_BODY_BYTES'],
    type: 'bytes',
    default: '1048576',
    doc: 'Largest accepted request body, bytes; larger bodies get 413.',
  },
  {
    option: 'answerCacheBytes',
    env: ['PROXY_ANSWER_CACHE_BYTES'],
    type: 'budget',
    default: '16777216',
    doc: 'Memory for answers kept per request (client address and query or body) and reused until the flags change (only answers that depend on the context alone; off with `expCustomEnrichers`); `0` turns it off.',
  },
  {
    option: 'reportsPerMinute',
    env: ['PROXY_REPORT_RATE_LIMIT_PER_MINUTE'],
    type: 'count',
    default: '600',
    doc: 'SDK registrations and usage reports (`POST /proxy/client/register`, `/proxy/client/metrics`, `/proxy/all/client/metrics`, together) accepted per client address and minute; more get 429. A browser sends about 2 a minute, so the default leaves room for ~300 browsers behind one address. `0` turns the limit off.',
  },
  {
    option: 'maxContextValueLength',
    env: ['PROXY_MAX_CONTEXT_VALUE_LENGTH'],
    type: 'length',
    default: String(DEFAULT_MAX_CONTEXT_VALUE_LENGTH),
    doc: 'Longest context value compared, characters: a constraint or strategy on a longer value (a caller can send any) does not match; the rest of the evaluation goes on.',
  },
  {
    option: 'cors.allowedHeaders',
    env: ['CORS_ALLOWED_HEADERS'],
    type: 'list',
    doc: 'Allowed request headers; unset reflects `Access-Control-Request-Headers`.',
  },
  {
    option: 'cors.credentials',
    env: ['CORS_CREDENTIALS'],
    type: 'boolean',
    default: 'false',
    doc: 'Sends `Access-Control-Allow-Credentials: true`.',
  },
  {
    option: 'cors.exposedHeaders',
    env: ['CORS_EXPOSED_HEADERS'],
    type: 'list',
    default: 'ETag',
    doc: 'Response headers exposed to browsers.',
  },
  {
    option: 'cors.maxAge',
    env: ['CORS_MAX_AGE'],
    type: 'seconds',
    default: '172800',
    doc: 'Seconds browsers may cache a preflight result.',
  },
  {
    option: 'cors.methods',
    env: ['CORS_METHODS'],
    type: 'list',
    default: 'GET, POST',
    doc: 'Allowed methods.',
  },
  {
    option: 'cors.optionsSuccessStatus',
    env: ['CORS_OPTIONS_SUCCESS_STATUS'],
    type: 'status',
    default: '204',
    doc: 'Status of a passing preflight.',
  },
  {
    option: 'cors.origin',
    env: ['CORS_ORIGIN'],
    type: 'list',
    default: '*',
    doc: '`*` or comma-separated allowed origins (matching origins are echoed).',
  },
  {
    option: 'cors.preflightContinue',
    env: ['CORS_PREFLIGHT_CONTINUE'],
    type: 'boolean',
    default: 'false',
    doc: 'Leaves `OPTIONS` requests to the routes instead of answering preflights.',
  },
  {
    option: 'httpOptions.rejectUnauthorized',
    env: ['HTTP_OPTIONS_REJECT_UNAUTHORIZED'],
    type: 'boolean',
    default: 'true',
    doc: 'Rejects upstream TLS certificates that do not verify.',
  },
  {
    option: 'httpOptions.httpProxy',
    env: ['HTTP_PROXY', 'http_proxy'],
    type: 'url',
    doc: 'Proxy server for outgoing HTTP requests.',
  },
  {
    option: 'httpOptions.httpsProxy',
    env: ['HTTPS_PROXY', 'https_proxy'],
    type: 'url',
    doc: 'Proxy server for outgoing HTTPS requests.',
  },
  {
    option: 'httpOptions.noProxy',
    env: ['NO_PROXY', 'no_proxy'],
    type: 'list',
    doc: 'Hosts reached directly despite `HTTP_PROXY`/`HTTPS_PROXY`: `*`, host names (with their subdomains), IPs or CIDR ranges, each optionally with `:port`.',
  },
  {
    option: 'expBootstrap.url',
    env: ['EXP_BOOTSTRAP_URL'],
    type: 'url',
    doc: 'Experimental: URL of a client-features payload served until the first upstream sync.',
  },
  {
    option: 'expBootstrap.urlHeaders.Authorization',
    env: ['EXP_BOOTSTRAP_AUTHORIZATION'],
    type: 'secret',
    doc: 'Experimental: `Authorization` header sent when fetching `expBootstrap.url`.',
  },
  {
    option: 'expServerSideSdkConfig.tokens',
    env: ['EXP_SERVER_SIDE_SDK_CONFIG_TOKENS'],
    type: 'secret-list',
    doc: 'Experimental: comma-separated tokens server-side SDKs may use to read `/proxy/client/features`.',
  },
  {
    option: 'expCustomEnrichers',
    env: ['EXP_CUSTOM_ENRICHERS_FILE'],
    type: 'paths',
    doc: 'Experimental: comma-separated JavaScript files exporting arrays of `(context) => context` enrichers, applied in order. In code: functions or paths.',
  },
];

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'fatal';
export const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error', 'fatal'];

/** Receives the evaluation context and returns the one to evaluate (in order, after parsing). */
export type ContextEnricher = (context: Context) => Context | Promise<Context>;

/** Backup storage for the last good upstream payload. */
export interface StorageProvider {
  get(key: string): Promise<ClientFeatures | undefined>;
  set(key: string, value: ClientFeatures): Promise<void>;
}

/** The minimal logger interface flags-proxy writes to (pino's). */
export interface Logger {
  debug(obj: unknown, msg?: string): void;
  info(obj: unknown, msg?: string): void;
  warn(obj: unknown, msg?: string): void;
  error(obj: unknown, msg?: string): void;
  fatal(obj: unknown, msg?: string): void;
  isLevelEnabled?(level: string): boolean;
}

export type TrustProxy = boolean | number | string | readonly string[];

export interface TagFilter {
  readonly name: string;
  readonly value: string;
}

export interface CorsOptions {
  readonly origin?: string | readonly string[];
  readonly methods?: string | readonly string[];
  readonly allowedHeaders?: string | readonly string[];
  readonly exposedHeaders?: string | readonly string[];
  readonly credentials?: boolean;
  readonly maxAge?: number;
  readonly preflightContinue?: boolean;
  readonly optionsSuccessStatus?: number;
}

/** In-code options of `createApp`/`start`; names as in the proxy document. */
export interface ProxyOptions {
  flagsUrl?: string | URL;
  flagsApiToken?: string;
  clientKeys?: readonly string[];
  proxySecrets?: readonly string[];
  port?: number;
  host?: string;
  proxyBasePath?: string;
  flagsAppName?: string;
  flagsInstanceId?: string;
  refreshInterval?: number;
  metricsInterval?: number;
  metricsJitter?: number;
  upstreamTimeoutMs?: number;
  environment?: string;
  projectName?: string;
  namePrefix?: string;
  tags?: readonly TagFilter[];
  logger?: Logger;
  useJsonLogger?: boolean;
  logLevel?: LogLevel;
  customStrategies?: readonly (CustomStrategy | string)[];
  trustProxy?: TrustProxy;
  ignoreCallerRemoteAddress?: boolean;
  clientKeysHeaderName?: string;
  storageProvider?: StorageProvider;
  backupDir?: string;
  redisUrl?: string | URL;
  redisKeyPrefix?: string;
  enableOAS?: boolean;
  enableAllEndpoint?: boolean;
  maxBodyBytes?: number;
  answerCacheBytes?: number;
  reportsPerMinute?: number;
  maxContextValueLength?: number;
  cors?: CorsOptions;
  httpOptions?: {
    rejectUnauthorized?: boolean;
    httpProxy?: string | URL;
    httpsProxy?: string | URL;
    noProxy?: readonly string[] | string;
  };
  expBootstrap?: { url?: string | URL; urlHeaders?: { Authorization?: string } };
  expServerSideSdkConfig?: { tokens?: readonly string[] };
  expCustomEnrichers?: readonly (ContextEnricher | string)[];
}
