import { ConfigError, type Environment, type Loaded } from '@flags/config';
import { resolveCors, trustsForwardedAddress } from '@flags/serving';
import {
  CLIENT_TOKEN_PATTERN,
  type ServerOptions,
  serverConfig,
  type serverSchema,
} from './options.js';

export { ConfigError };

type Options = Loaded<typeof serverSchema>;

/** The loaded options in the domain types the server runs with, frozen. */
function resolve(options: Options, overrides: ServerOptions) {
  // In code, `undefined` unsets these two: `dataDir: undefined` is an in-memory PGlite (tests),
  // `databaseUrl: undefined` PGlite whatever `DATABASE_URL` says (the demo).
  const unset = (key: 'databaseUrl' | 'dataDir') =>
    key in overrides && overrides[key] === undefined;
  return Object.freeze({
    port: options.port,
    host: options.host,
    /** PostgreSQL connection string; undefined → embedded PGlite in `dataDir`. */
    databaseUrl: unset('databaseUrl') ? undefined : options.databaseUrl,
    /** PGlite data directory; undefined in code means in-memory (tests). */
    dataDir: unset('dataDir') ? undefined : options.dataDir,
    adminTokens: options.adminTokens,
    clientTokens: options.clientTokens,
    frontendTokens: options.frontendTokens,
    publicUrl: new URL(options.publicUrl),
    logLevel: options.logLevel,
    jsonLogger: options.jsonLogger,
    bodyLimitBytes: options.bodyLimitBytes,
    importBodyLimitBytes: options.importBodyLimitBytes,
    revisionCheckMs: options.revisionCheckMs,
    signupsPerMinute: options.signupsPerMinute,
    /** `POST /edge/validate` requests accepted per client address and minute. */
    edgeValidatePerMinute: options.edgeValidatePerMinute,
    /** Login sessions end this long after the login, or when unused this long. */
    sessionMaxAgeMs: options.sessionMaxAgeMs,
    sessionIdleTimeoutMs: options.sessionIdleTimeoutMs,
    /** Logins per client address (IPv6 by /64) and minute, right or wrong. */
    loginsPerMinute: options.loginsPerMinute,
    /** Failed logins before waits: per user and address, per address, per user (only slows). */
    loginFailuresBeforeDelay: options.loginFailuresBeforeDelay,
    loginAddressFailuresBeforeDelay: options.loginAddressFailuresBeforeDelay,
    loginUserFailuresBeforeSlowing: options.loginUserFailuresBeforeSlowing,
    /** The first wait, doubled per failure up to the longest; when counters are forgotten. */
    loginDelayMs: options.loginDelayMs,
    loginMaxDelayMs: options.loginMaxDelayMs,
    loginFailuresForgottenAfterMs: options.loginFailuresForgottenAfterMs,
    /**
     * Which forwarded-for headers to believe for the client address: `false` (none, the socket's
     * address), `true` (all), a hop count, or the addresses/ranges of the trusted proxies.
     */
    trustProxy: options.trustProxy,
    /** Longest time to receive a whole request, ms; 0: no limit. */
    requestTimeoutMs: options.requestTimeoutMs,
    /** Open connections per socket address (trusted proxies exempt); 0: no limit. */
    maxConnectionsPerAddress: options.maxConnectionsPerAddress,
    /** Serves `/api/frontend/all`; off, it answers 501. */
    enableAllEndpoint: options.enableAllEndpoint,
    frontendAnswerCacheBytes: options.frontendAnswerCacheBytes,
    /** Browser SDK reports (metrics, registrations) accepted per client address and minute. */
    frontendReportsPerMinute: options.frontendReportsPerMinute,
    /** The request address, never the caller's `remoteAddress`, goes into frontend API contexts. */
    ignoreCallerRemoteAddress:
      options.ignoreCallerRemoteAddress ?? trustsForwardedAddress(options.trustProxy),
    /** CORS of the frontend API (`/api/frontend*`), as flags-proxy's. */
    cors: Object.freeze(resolveCors(options.cors)),
    /** SDK instances not seen for this many days are deleted. */
    clientInstanceRetentionDays: options.clientInstanceRetentionDays,
    /** Hourly client-metrics buckets older than this many days are deleted. */
    clientMetricsRetentionDays: options.clientMetricsRetentionDays,
    /** While the database is unreachable, how often it is tried again. */
    databaseRetryMs: options.databaseRetryMs,
    databaseConnectTimeoutMs: options.databaseConnectTimeoutMs,
    /** Usage reports held in memory while the database is unreachable. */
    metricsBufferMaxReports: options.metricsBufferMaxReports,
    metricsBufferMaxBytes: options.metricsBufferMaxBytes,
    /** `/api/client/streaming` connections per process at most (429 beyond). */
    streamingMaxConnections: options.streamingMaxConnections,
    /** Of one client address, and of one token (429 beyond; 0: no own cap). */
    streamingMaxConnectionsPerAddress: options.streamingMaxConnectionsPerAddress,
    streamingMaxConnectionsPerToken: options.streamingMaxConnectionsPerToken,
    streamingKeepAliveMs: options.streamingKeepAliveMs,
    streamingPollingOnClose: options.streamingPollingOnClose,
    /** `fetch-mode: streaming` on `/api/client/features` answers. */
    streamingAdvertise: options.streamingAdvertise,
    changeLogEventsPerEnvironment: options.changeLogEventsPerEnvironment,
    /** The one Admin (user name or e-mail) who may log in with a password while they are off. */
    breakGlassAdmin: options.breakGlassAdmin,
    /** The OpenID Connect settings given at start, written over the stored ones (unset: kept). */
    oidc: Object.freeze({ ...options.oidc }),
  });
}

export type ServerConfig = ReturnType<typeof resolve>;

/**
 * Builds the configuration from environment variables (`env`) and in-code overrides
 * (`overrides` win). Every problem is reported at once in a `ConfigError`.
 */
export function loadConfig(env: Environment = {}, overrides: ServerOptions = {}): ServerConfig {
  return resolve(serverConfig.load(env, overrides), overrides);
}

/** `project:environment.secret` → its scope; `undefined` when the form is wrong. */
export function parseClientTokenScope(
  token: string,
): { project: string; environment: string } | undefined {
  const match = new RegExp(CLIENT_TOKEN_PATTERN, 'u').exec(token);
  if (!match) return undefined;
  return { project: match[1]!, environment: match[2]! };
}

/** Tokens never reach logs or messages whole: keep the scope prefix and 4 characters. */
export function maskToken(token: string): string {
  const dot = token.indexOf('.');
  const prefix = dot >= 0 ? token.slice(0, dot + 1) : '';
  const secret = dot >= 0 ? token.slice(dot + 1) : token;
  return `${prefix}${secret.slice(0, 4)}…`;
}
