import {
  configSchema,
  group,
  type InCode,
  type OptionRow,
  option,
  splitList,
  Type,
} from '@flags/config';
import { corsOptions } from '@flags/serving';

/**
 * Every flags-server option, once: name, environment variables, the JSON Schema of its value
 * (type, range, enum, format), default and meaning. The types, environment parsing, validation,
 * defaults, `--help` and the README table all come from this schema (`@flags/config`).
 *
 * The server has always read numbers as JavaScript numbers (`1e6` is a million) and booleans as
 * `true`/`1`/`false`/`0`, exactly; those readings are kept so no deployment's values change meaning.
 */

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** The insights snapshot sums the current ISO week's buckets: up to 7 days back. */
export const MIN_METRICS_RETENTION_DAYS = 7;

/**
 * `project:environment.secret`, whose environment is never `*` (`*:development.…` is fine): the
 * form of configured client and frontend tokens.
 */
export const CLIENT_TOKEN_PATTERN = '^([^:]+):(?!\\*\\.)([^.]+)\\.(.+)$';

const number = (raw: string) => Number(raw);

function booleanFromEnv(raw: string): boolean | string {
  if (raw === 'true' || raw === '1') return true;
  return raw === 'false' || raw === '0' ? false : raw;
}

/** `true`, `false`, a hop count, or trusted addresses (any case). */
function trustProxyFromEnv(raw: string): boolean | number | string[] {
  const value = raw.trim().toLowerCase();
  if (value === 'true') return true;
  if (value === 'false') return false;
  return /^\d+$/.test(value) ? Number(value) : splitList(value);
}

/** A whole number of things (bytes, ms, days) greater than 0, at least `minimum`. */
const positive = (minimum = 1) => Type.Integer({ minimum });

export const serverSchema = Type.Object({
  port: option(Type.Integer({ minimum: 0, maximum: 65535 }), {
    env: ['SERVER_PORT', { name: 'PORT', fallback: true }],
    default: 4242,
    fromEnv: number,
    doc: 'TCP port to listen on.',
  }),
  host: option(Type.String(), {
    env: ['SERVER_HOST'],
    default: '0.0.0.0',
    doc: 'Address to listen on.',
  }),
  databaseUrl: option(Type.String(), {
    env: ['DATABASE_URL'],
    secret: true,
    doc: 'PostgreSQL connection string. Unset: embedded PGlite in `DATA_DIR`.',
  }),
  dataDir: option(Type.String(), {
    env: ['DATA_DIR'],
    default: './data',
    doc: 'PGlite data directory (used only without `DATABASE_URL`). One process at a time: a second flags-server or a `migrate` on the same host (or in the same container) as the one using it is refused (its `flags-server.pid` names the holder); containers sharing one volume cannot see one another’s processes, so run one.',
  }),
  adminTokens: option(Type.Array(Type.String()), {
    env: ['FLAGS_ADMIN_TOKENS'],
    secret: true,
    doc: 'Comma-separated admin API tokens created at start (if missing). Set, it also deletes the admin tokens an earlier value created that it no longer lists (a warning each); unset, it deletes none. Secrets under 32 characters get a warning.',
  }),
  clientTokens: option(
    Type.Array(Type.String({ pattern: CLIENT_TOKEN_PATTERN }), {
      title: 'a list of client tokens project:environment.secret',
    }),
    {
      env: ['FLAGS_CLIENT_TOKENS'],
      secret: true,
      doc: 'Comma-separated client tokens `project:environment.secret` (`*` = all projects) created at start (if missing). Set, it also deletes the client tokens an earlier value created that it no longer lists (a warning each); unset, it deletes none. Secrets under 32 characters get a warning.',
    },
  ),
  frontendTokens: option(
    Type.Array(Type.String({ pattern: CLIENT_TOKEN_PATTERN }), {
      title: 'a list of frontend tokens project:environment.secret',
    }),
    {
      env: ['FLAGS_FRONTEND_TOKENS'],
      secret: true,
      doc: 'Comma-separated frontend tokens `project:environment.secret` (`*` = all projects; for frontend SDKs, accepted on the frontend API only) created at start (if missing). Set, it also deletes the frontend tokens an earlier value created that it no longer lists (a warning each); unset, it deletes none. Secrets under 32 characters get a warning.',
    },
  ),
  publicUrl: option(Type.Unsafe<string | URL>(Type.String({ format: 'url' })), {
    env: ['PUBLIC_URL'],
    default: 'http://localhost:4242',
    doc: 'URL under which users reach this server (used in links it generates).',
  }),
  logLevel: option(Type.Enum(LOG_LEVELS), {
    env: ['LOG_LEVEL'],
    default: 'info',
    doc: 'fatal, error, warn, info, debug, trace or silent.',
  }),
  jsonLogger: option(Type.Boolean({ title: 'true or false (or 1 or 0)' }), {
    env: ['JSON_LOGGER'],
    default: true,
    fromEnv: booleanFromEnv,
    doc: 'true: one JSON object per line; false: human-readable (pino-pretty).',
  }),
  bodyLimitBytes: option(positive(), {
    env: ['BODY_LIMIT_BYTES'],
    default: 1048576,
    fromEnv: number,
    doc: 'Largest request body accepted by ordinary routes (larger → 413).',
  }),
  importBodyLimitBytes: option(positive(), {
    env: ['IMPORT_BODY_LIMIT_BYTES'],
    default: 26214400,
    fromEnv: number,
    doc: 'Largest body accepted by `/api/admin/features-batch/*` (25 MiB; larger → 413).',
  }),
  revisionCheckMs: option(positive(), {
    env: ['REVISION_CHECK_MS'],
    default: 1000,
    fromEnv: number,
    doc: 'How long the client API trusts its cached configuration revision before re-reading it (changes made by other server processes show up within this time; changes made by this process at once).',
  }),
  signupsPerMinute: option(positive(), {
    env: ['SIGNUP_RATE_LIMIT_PER_MINUTE'],
    default: 20,
    fromEnv: number,
    doc: 'Public signups (`POST /invite/:token/signup`) accepted per client address and minute; more get 429.',
  }),
  edgeValidatePerMinute: option(positive(), {
    env: ['EDGE_VALIDATE_RATE_LIMIT_PER_MINUTE'],
    default: 600,
    fromEnv: number,
    doc: '`POST /edge/validate` requests (no token needed; up to 500 tokens each) accepted per client address and minute; more get 429.',
  }),
  sessionMaxAgeMs: option(positive(60_000), {
    env: ['SESSION_MAX_AGE_MS'],
    default: 172800000,
    fromEnv: number,
    doc: 'A login session ends this long after the login, however much it is used (48 hours, as unleash-server’s `SESSION_TTL_HOURS`); also the session cookie’s `Max-Age`.',
  }),
  sessionIdleTimeoutMs: option(positive(60_000), {
    env: ['SESSION_IDLE_TIMEOUT_MS'],
    default: 28800000,
    fromEnv: number,
    doc: 'A login session unused this long ends (8 hours: a working day).',
  }),
  loginsPerMinute: option(positive(), {
    env: ['LOGIN_RATE_LIMIT_PER_MINUTE'],
    default: 10,
    fromEnv: number,
    doc: 'Logins (`POST /auth/simple/login`) accepted per client address (IPv6 by /64) and minute, right or wrong; more get 429. Counted per server process. Single sign-on’s `/auth/oidc/login`, `/auth/oidc/callback` and `/auth/oidc/signed-out` are counted alike, each on its own: raise it when many people sign in at once through one address (a company’s NAT).',
  }),
  loginFailuresBeforeDelay: option(positive(), {
    env: ['LOGIN_FAILURES_BEFORE_DELAY'],
    default: 5,
    fromEnv: number,
    doc: 'Failed logins for one user (username or email, any case; a name nobody has counts alike) from one client address (IPv6 by /64) before each further try from it waits `LOGIN_DELAY_MS`, doubled per failure (429 with `Retry-After`); a login from another address is not held up. Counted in the database, for every server on it.',
  }),
  loginAddressFailuresBeforeDelay: option(positive(), {
    env: ['LOGIN_ADDRESS_FAILURES_BEFORE_DELAY'],
    default: 100,
    fromEnv: number,
    doc: 'Failed logins from one client address (IPv6 by /64), for any users, before each further login from it waits `LOGIN_DELAY_MS`, doubled per failure (429 with `Retry-After`): credential stuffing from one address slows down. Counted in the database.',
  }),
  loginUserFailuresBeforeSlowing: option(positive(), {
    env: ['LOGIN_USER_FAILURES_BEFORE_SLOWING'],
    default: 20,
    fromEnv: number,
    doc: 'Failed logins for one user from all addresses after which every address that has failed for that user waits after each of its failures (`LOGIN_DELAY_MS`, doubled per failure); an address without failures for the user is never held up, so nobody can lock a user out. Counted in the database.',
  }),
  loginDelayMs: option(positive(), {
    env: ['LOGIN_DELAY_MS'],
    default: 1000,
    fromEnv: number,
    doc: 'The first wait after the failures `LOGIN_FAILURES_BEFORE_DELAY` and `LOGIN_ADDRESS_FAILURES_BEFORE_DELAY` allow, ms; each further failure doubles it, up to `LOGIN_MAX_DELAY_MS`.',
  }),
  loginMaxDelayMs: option(positive(), {
    env: ['LOGIN_MAX_DELAY_MS'],
    default: 900000,
    fromEnv: number,
    doc: 'The longest wait between failed logins, ms (15 minutes).',
  }),
  loginFailuresForgottenAfterMs: option(positive(60_000), {
    env: ['LOGIN_FAILURES_FORGOTTEN_AFTER_MS'],
    default: 86400000,
    fromEnv: number,
    doc: 'A failed-login counter with no failure for this long starts again from zero, ms (24 hours); its row is deleted at the next failed login. A successful login clears its user and address’s counter at once.',
  }),
  breakGlassAdmin: option(Type.String({ minLength: 1, maxLength: 255 }), {
    env: ['BREAK_GLASS_ADMIN'],
    doc: 'The user name or e-mail of the one Admin who may still log in with a password while password logins are turned off (`POST /api/admin/auth/simple/settings`), so a broken identity provider locks nobody out for good; only while that user is an Admin. Unset: nobody.',
  }),
  oidc: group({
    enabled: option(Type.Boolean({ title: 'true or false (or 1 or 0)' }), {
      env: ['OIDC_ENABLED'],
      fromEnv: booleanFromEnv,
      doc: 'Turns single sign-on with OpenID Connect on or off. Each `OIDC_*` option set is written over the stored setting (`/api/admin/auth/oidc/settings`) at start; unset ones leave it as it is.',
    }),
    discoverUrl: option(Type.String({ format: 'url' }), {
      env: ['OIDC_DISCOVER_URL'],
      doc: 'The provider’s discovery document, `https://…/.well-known/openid-configuration` (plain `http` only on a loopback address).',
    }),
    clientId: option(Type.String({ minLength: 1 }), {
      env: ['OIDC_CLIENT_ID'],
      doc: 'The client (application) ID the provider gave this server.',
    }),
    secret: option(Type.String({ minLength: 1 }), {
      env: ['OIDC_SECRET'],
      secret: true,
      doc: 'The client secret the provider gave this server; stored, never shown.',
    }),
    autoCreate: option(Type.Boolean({ title: 'true or false (or 1 or 0)' }), {
      env: ['OIDC_AUTO_CREATE'],
      fromEnv: booleanFromEnv,
      doc: '`true`: a first sign-in creates the user with `oidc.defaultRootRole`; `false`: only users who already exist (same e-mail) sign in.',
    }),
    defaultRootRole: option(Type.Enum(['Viewer', 'Editor', 'Admin'] as const), {
      env: ['OIDC_DEFAULT_ROOT_ROLE'],
      doc: 'The root role of users a sign-in creates, and of every signed-in user no mapped group matches while group syncing is on (stored default: Editor).',
    }),
    emailDomains: option(Type.String(), {
      env: ['OIDC_EMAIL_DOMAINS'],
      doc: 'Comma-separated e-mail domains allowed to sign in (`example.com,example.org`); empty: any.',
    }),
    enableSingleSignOut: option(Type.Boolean({ title: 'true or false (or 1 or 0)' }), {
      env: ['OIDC_ENABLE_SINGLE_SIGN_OUT'],
      fromEnv: booleanFromEnv,
      doc: '`true`: logging out of a single sign-on session also ends the provider’s (its `end_session_endpoint`).',
    }),
    enableGroupSyncing: option(Type.Boolean({ title: 'true or false (or 1 or 0)' }), {
      env: ['OIDC_ENABLE_GROUP_SYNCING'],
      fromEnv: booleanFromEnv,
      doc: '`true`: the root role follows the provider’s groups at every sign-in, through the groups of `/api/admin/groups` (`mappingsSSO`).',
    }),
    groupJsonPath: option(Type.String(), {
      env: ['OIDC_GROUP_JSON_PATH'],
      doc: 'Where the groups claim is in the ID token or user info, a dotted path (`groups`, `realm_access.roles`).',
    }),
    addGroupsScope: option(Type.Boolean({ title: 'true or false (or 1 or 0)' }), {
      env: ['OIDC_ADD_GROUPS_SCOPE'],
      fromEnv: booleanFromEnv,
      doc: '`true`: asks for the `groups` scope too (providers that send groups only then).',
    }),
    idTokenSigningAlgorithm: option(Type.Enum(['RS256', 'RS384', 'RS512'] as const), {
      env: ['OIDC_ID_TOKEN_SIGNING_ALGORITHM'],
      doc: 'The algorithm the provider signs ID tokens with (stored default: RS256); a token signed otherwise is refused.',
    }),
  }),
  trustProxy: option(
    Type.Union(
      [
        Type.Boolean(),
        Type.Integer({ minimum: 0 }),
        Type.Array(Type.String({ format: 'proxy-address' })),
      ],
      { title: 'true, false, a hop count or IP/CIDR addresses' },
    ),
    {
      env: ['TRUST_PROXY'],
      default: false,
      fromEnv: trustProxyFromEnv,
      doc: 'Client address from `X-Forwarded-For` behind load balancers (for the signup, `/edge/validate` and frontend report limits, registrations, frontend API contexts and logs): `false`, comma-separated IPs/CIDRs of the load balancers in front (`loopback`, `linklocal`, `uniquelocal` allowed), or a hop count (`1`: the one load balancer in front; what a caller put further left is ignored). `true` trusts every sender, so any caller can choose its address: a warning says so at start.',
    },
  ),
  requestTimeoutMs: option(Type.Integer({ minimum: 0 }), {
    env: ['REQUEST_TIMEOUT_MS'],
    default: 60000,
    fromEnv: number,
    doc: 'Longest time to receive a whole request, headers and body, ms (checked every quarter of it); a slower one gets 408 and its connection is closed, so a body trickled byte by byte holds no connection for long. Answers are not bounded: streams stay open. Raise it for imports near `IMPORT_BODY_LIMIT_BYTES` over slow links. `0`: no limit (headers still within 60 s).',
  }),
  maxConnectionsPerAddress: option(Type.Integer({ minimum: 0 }), {
    env: ['MAX_CONNECTIONS_PER_ADDRESS'],
    default: 1000,
    fromEnv: number,
    doc: 'Open connections accepted from one address (the socket’s, never a forwarded one; IPv6 by /64); one more is closed at once and logged at most once a minute. Generous for SDKs behind one NAT. The load balancers `trustProxy` lists are exempt; with `trustProxy` `true` or a hop count none is (every sender would be): raise the cap or list them. `0`: no limit.',
  }),
  enableAllEndpoint: option(Type.Boolean({ title: 'true or false (or 1 or 0)' }), {
    env: ['ENABLE_ALL_ENDPOINT'],
    default: false,
    fromEnv: booleanFromEnv,
    doc: 'Serves `GET`/`POST /api/frontend/all` (enabled and disabled flags, for frontend tokens); off, they answer 501, as flags-proxy does.',
  }),
  frontendAnswerCacheBytes: option(Type.Integer({ minimum: 0 }), {
    env: ['FRONTEND_ANSWER_CACHE_BYTES'],
    default: 16777216,
    fromEnv: number,
    doc: 'Memory for frontend API answers kept per request (client address and query or body), per environment and project set, reused until the flags change; `0` turns it off.',
  }),
  frontendReportsPerMinute: option(positive(), {
    env: ['FRONTEND_REPORT_RATE_LIMIT_PER_MINUTE'],
    default: 600,
    fromEnv: number,
    doc: '`POST /api/frontend/client/metrics` and `/api/frontend/client/register` requests (frontend tokens are public: they ship in every page) accepted per client address and minute, each; more get 429. A browser sends about 2 a minute, so the default leaves room for ~300 browsers behind one address.',
  }),
  ignoreCallerRemoteAddress: option(Type.Boolean({ title: 'true or false (or 1 or 0)' }), {
    env: ['FRONTEND_IGNORE_CALLER_REMOTE_ADDRESS'],
    fromEnv: booleanFromEnv,
    doc: '`true`: a `remoteAddress` a frontend API caller sends is ignored and the request address is used, so callers cannot pass IP-restricted flags. Default: `true` when `trustProxy` is set, else `false` (callers behind a load balancer must then send theirs, as with unleash-server).',
  }),
  cors: corsOptions,
  clientInstanceRetentionDays: option(positive(), {
    env: ['CLIENT_INSTANCE_RETENTION_DAYS'],
    default: 7,
    fromEnv: number,
    doc: 'SDK instances (registrations and metrics senders) not seen for this many days are deleted (checked hourly, in batches), and so are applications not seen for as long once none of their instances is left.',
  }),
  clientMetricsRetentionDays: option(positive(MIN_METRICS_RETENTION_DAYS), {
    env: ['CLIENT_METRICS_RETENTION_DAYS'],
    default: 8,
    fromEnv: number,
    doc: 'Hourly client-metrics buckets (yes/no and variant counts) older than this many days are deleted (checked hourly, in batches); at least 7, as the insights snapshot sums the current week from them.',
  }),
  databaseRetryMs: option(positive(), {
    env: ['DATABASE_RETRY_MS'],
    default: 1000,
    fromEnv: number,
    doc: 'While PostgreSQL is unreachable (at start or later), how often the server tries it again.',
  }),
  databaseConnectTimeoutMs: option(positive(), {
    env: ['DATABASE_CONNECT_TIMEOUT_MS'],
    default: 5000,
    fromEnv: number,
    doc: 'How long opening a PostgreSQL connection may take before the request that needs it fails (the client API then answers from memory).',
  }),
  metricsBufferMaxReports: option(Type.Integer({ minimum: 0 }), {
    env: ['METRICS_BUFFER_MAX_REPORTS'],
    default: 10000,
    fromEnv: number,
    doc: 'Usage reports (`/api/client/metrics`, `/bulk`) held in memory while the database is unreachable and written when it returns; beyond this many the answer is 503 and SDKs keep their counts.',
  }),
  metricsBufferMaxBytes: option(Type.Integer({ minimum: 0 }), {
    env: ['METRICS_BUFFER_MAX_BYTES'],
    default: 64 * 1024 * 1024,
    fromEnv: number,
    doc: 'Memory the usage reports held while the database is unreachable may take, bytes (estimated from their names and entries); beyond it the answer is 503, as beyond `metricsBufferMaxReports`.',
  }),
  streamingMaxConnections: option(Type.Integer({ minimum: 0 }), {
    env: ['STREAMING_MAX_CONNECTIONS'],
    default: 10000,
    fromEnv: number,
    doc: 'Open `/api/client/streaming` connections per process at most; beyond it the answer is 429 and SDKs poll instead. Each one holds a file descriptor (see `ulimit -n`).',
  }),
  streamingMaxConnectionsPerAddress: option(Type.Integer({ minimum: 0 }), {
    env: ['STREAMING_MAX_CONNECTIONS_PER_ADDRESS'],
    default: 100,
    fromEnv: number,
    doc: 'Open `/api/client/streaming` connections per process from one client address (the forwarded one behind `TRUST_PROXY`; IPv6 by /64), a hundredth of `STREAMING_MAX_CONNECTIONS`’ default, so that one caller cannot take every slot; beyond it the answer is 429. Raise it when more SDK processes than this reach the server through one NAT or proxy (a fleet of flags-proxy or Edge instances behind one egress address). 0: no cap beyond `STREAMING_MAX_CONNECTIONS`.',
  }),
  streamingMaxConnectionsPerToken: option(Type.Integer({ minimum: 0 }), {
    env: ['STREAMING_MAX_CONNECTIONS_PER_TOKEN'],
    default: 5000,
    fromEnv: number,
    doc: 'Open `/api/client/streaming` connections per process per client token, half of `STREAMING_MAX_CONNECTIONS`’ default, so that one token cannot take every slot from the others; beyond it the answer is 429. 0: no cap beyond `STREAMING_MAX_CONNECTIONS`.',
  }),
  streamingKeepAliveMs: option(Type.Integer({ minimum: 0 }), {
    env: ['STREAMING_KEEP_ALIVE_MS'],
    default: 30000,
    fromEnv: number,
    doc: 'Interval of the keep-alive comment on every open stream, shorter than the idle timeout of load balancers in front (0: none).',
  }),
  streamingPollingOnClose: option(Type.Boolean({ title: 'true or false (or 1 or 0)' }), {
    env: ['STREAMING_POLLING_ON_CLOSE'],
    default: false,
    fromEnv: booleanFromEnv,
    doc: 'On shutdown, send open streams `event: fetch-mode` `polling` so SDKs switch to polling for good; false: the streams just end and SDKs reconnect (to another process behind the load balancer).',
  }),
  streamingAdvertise: option(Type.Boolean({ title: 'true or false (or 1 or 0)' }), {
    env: ['STREAMING_ADVERTISE'],
    default: false,
    fromEnv: booleanFromEnv,
    doc: 'Adds the `fetch-mode: streaming` header to `/api/client/features` answers: SDKs that support it (unleash-client 6.12 with `experimentalMode`) switch from polling to streaming.',
  }),
  changeLogEventsPerEnvironment: option(positive(), {
    env: ['CHANGE_LOG_EVENTS_PER_ENVIRONMENT'],
    default: 1000,
    fromEnv: number,
    doc: 'Delta events kept per environment (compacted every minute); a client further behind gets a fresh hydration.',
  }),
});

export const serverConfig = configSchema(serverSchema);

/** In-code options of `loadConfig(env, overrides)`. */
export type ServerOptions = InCode<typeof serverSchema>;

/** Every option as documented (README table, `--help`). */
export type OptionSpec = OptionRow;
export const options: readonly OptionSpec[] = serverConfig.options;

export type { ServerConfig } from './load.js';
