/**
 * Every flags-server option: one row each (env var, default, meaning). `load.ts` parses them,
 * the README table documents them, and a test keeps the two in step.
 */
export interface OptionSpec {
  /** Property name in `ServerConfig`. */
  readonly key: keyof ServerConfig;
  /** Environment variables read, first set wins. */
  readonly env: readonly string[];
  readonly type:
    | 'port'
    | 'string'
    | 'url'
    | 'list'
    | 'level'
    | 'boolean'
    | 'bytes'
    | 'ms'
    | 'days'
    | 'count'
    | 'trust-proxy';
  /** Default as written in the docs (and parsed like an env value); undefined = unset. */
  readonly default?: string;
  /** Smallest value accepted (numeric types; default 1), with the reason in `doc`. */
  readonly min?: number;
  readonly doc: string;
}

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface ServerConfig {
  readonly port: number;
  readonly host: string;
  /** PostgreSQL connection string; undefined → embedded PGlite in `dataDir`. */
  readonly databaseUrl: string | undefined;
  /** PGlite data directory; undefined in code means in-memory (tests). */
  readonly dataDir: string | undefined;
  readonly adminTokens: readonly string[];
  readonly clientTokens: readonly string[];
  readonly publicUrl: URL;
  readonly logLevel: LogLevel;
  readonly jsonLogger: boolean;
  readonly bodyLimitBytes: number;
  readonly importBodyLimitBytes: number;
  readonly revisionCheckMs: number;
  readonly signupsPerMinute: number;
  /**
   * Which forwarded-for headers to believe for the client address: `false` (none, the socket's
   * address), `true` (all), a hop count, or the addresses/ranges of the trusted proxies.
   */
  readonly trustProxy: boolean | number | readonly string[];
  /** SDK instances not seen for this many days are deleted. */
  readonly clientInstanceRetentionDays: number;
  /** Hourly client-metrics buckets older than this many days are deleted. */
  readonly clientMetricsRetentionDays: number;
}

/** The insights snapshot sums the current ISO week's buckets: up to 7 days back. */
export const MIN_METRICS_RETENTION_DAYS = 7;

export const options: readonly OptionSpec[] = [
  {
    key: 'port',
    env: ['SERVER_PORT', 'PORT'],
    type: 'port',
    default: '4242',
    doc: 'TCP port to listen on.',
  },
  {
    key: 'host',
    env: ['SERVER_HOST'],
    type: 'string',
    default: '0.0.0.0',
    doc: 'Address to listen on.',
  },
  {
    key: 'databaseUrl',
    env: ['DATABASE_URL'],
    type: 'string',
    doc: 'PostgreSQL connection string. Unset: embedded PGlite in `DATA_DIR`.',
  },
  {
    key: 'dataDir',
    env: ['DATA_DIR'],
    type: 'string',
    default: './data',
    doc: 'PGlite data directory (used only without `DATABASE_URL`).',
  },
  {
    key: 'adminTokens',
    env: ['FLAGS_ADMIN_TOKENS'],
    type: 'list',
    default: '',
    doc: 'Comma-separated admin API tokens created at start (if missing); a token an earlier value created and this one lacks is deleted at start. Secrets under 32 characters get a warning.',
  },
  {
    key: 'clientTokens',
    env: ['FLAGS_CLIENT_TOKENS'],
    type: 'list',
    default: '',
    doc: 'Comma-separated client tokens `project:environment.secret` (`*` = all projects) created at start (if missing); a token an earlier value created and this one lacks is deleted at start. Secrets under 32 characters get a warning.',
  },
  {
    key: 'publicUrl',
    env: ['PUBLIC_URL'],
    type: 'url',
    default: 'http://localhost:4242',
    doc: 'URL under which users reach this server (used in links it generates).',
  },
  {
    key: 'logLevel',
    env: ['LOG_LEVEL'],
    type: 'level',
    default: 'info',
    doc: 'fatal, error, warn, info, debug, trace or silent.',
  },
  {
    key: 'jsonLogger',
    env: ['JSON_LOGGER'],
    type: 'boolean',
    default: 'true',
    doc: 'true: one JSON object per line; false: human-readable (pino-pretty).',
  },
  {
    key: 'bodyLimitBytes',
    env: ['BODY_LIMIT_BYTES'],
    type: 'bytes',
    default: '1048576',
    doc: 'Largest request body accepted by ordinary routes (larger → 413).',
  },
  {
    key: 'importBodyLimitBytes',
    env: ['IMPORT_BODY_LIMIT_BYTES'],
    type: 'bytes',
    default: '26214400',
    doc: 'Largest body accepted by `/api/admin/features-batch/*` (25 MiB; larger → 413).',
  },
  {
    key: 'revisionCheckMs',
    env: ['REVISION_CHECK_MS'],
    type: 'ms',
    default: '1000',
    doc: 'How long the client API trusts its cached configuration revision before re-reading it (changes made by other server processes show up within this time; changes made by this process at once).',
  },
  {
    key: 'signupsPerMinute',
    env: ['SIGNUP_RATE_LIMIT_PER_MINUTE'],
    type: 'count',
    default: '20',
    doc: 'Public signups (`POST /invite/:token/signup`) accepted per client address and minute; more get 429.',
  },
  {
    key: 'trustProxy',
    env: ['TRUST_PROXY'],
    type: 'trust-proxy',
    default: 'false',
    doc: 'Client address from `X-Forwarded-For` behind load balancers (for the signup limit and logs): `true` (trust all), `false`, a hop count, or comma-separated trusted proxy IPs/CIDRs (`loopback`, `linklocal`, `uniquelocal` allowed).',
  },
  {
    key: 'clientInstanceRetentionDays',
    env: ['CLIENT_INSTANCE_RETENTION_DAYS'],
    type: 'days',
    default: '7',
    doc: 'SDK instances (registrations and metrics senders) not seen for this many days are deleted (checked hourly, in batches).',
  },
  {
    key: 'clientMetricsRetentionDays',
    env: ['CLIENT_METRICS_RETENTION_DAYS'],
    type: 'days',
    default: '8',
    min: MIN_METRICS_RETENTION_DAYS,
    doc: 'Hourly client-metrics buckets (yes/no and variant counts) older than this many days are deleted (checked hourly, in batches); at least 7, as the insights snapshot sums the current week from them.',
  },
];
