import { ConfigError, type Loaded } from '@flags/config';
import type { proxySchema } from './options.js';

type Options = Loaded<typeof proxySchema>;

/** Where Redis backups go: one server, or the nodes a Redis Cluster is reached through. */
export interface RedisTarget {
  readonly mode: 'single' | 'cluster';
  /** `single`: one URL; `cluster`: every node given (credentials and TLS already applied). */
  readonly urls: readonly URL[];
  readonly keyPrefix: string;
  readonly readTimeoutMs: number;
  readonly writeTimeoutMs: number;
}

export interface S3Target {
  readonly bucket: string;
  readonly forcePathStyle: boolean;
}

/** The backup store the options name: at most one of a directory, Redis and S3. */
export interface BackupTargets {
  readonly backupDir: string | undefined;
  readonly redis: RedisTarget | undefined;
  readonly s3: S3Target | undefined;
}

/** `REDIS_SCHEME` as a URL scheme (`tcp`/`tls` are Edge's other names of `redis`/`rediss`). */
const SCHEME_PROTOCOLS: Readonly<Record<Options['redisScheme'], string>> = {
  redis: 'redis:',
  tcp: 'redis:',
  rediss: 'rediss:',
  tls: 'rediss:',
  unix: 'unix:',
  'redis-unix': 'redis+unix:',
};

/**
 * The backup store from the options, as Unleash Edge reads its own: `REDIS_URL` (or one built
 * from `REDIS_HOST`), then `REDIS_USERNAME`/`REDIS_PASSWORD`/`REDIS_PORT` replace the URL's,
 * and `REDIS_SECURE` makes it TLS. Throws a `ConfigError` for a combination that names no store
 * or more than one.
 */
export function backupTargets(options: Options): BackupTargets {
  const problems: string[] = [];
  const redisDetails = (
    [
      ['redisPort', 'REDIS_PORT'],
      ['redisUsername', 'REDIS_USERNAME'],
      ['redisPassword', 'REDIS_PASSWORD'],
    ] as const
  ).filter(([key]) => options[key] !== undefined);
  const usesRedis = options.redisUrl !== undefined || options.redisHost !== undefined;
  if (!usesRedis && redisDetails.length > 0)
    problems.push(
      `${redisDetails.map(([key, env]) => `${key} (${env})`).join(', ')} set without redisUrl (REDIS_URL) or redisHost (REDIS_HOST): set one of those too, or remove them`,
    );
  if (options.redisMode === 'cluster' && options.redisUrl === undefined)
    problems.push(
      'redisMode (REDIS_MODE) is cluster but redisUrl (REDIS_URL) is not set: list the cluster’s nodes there, comma-separated (redisHost is for a single server)',
    );
  if (options.redisMode === 'cluster' && options.redisPort !== undefined)
    problems.push(
      'redisPort (REDIS_PORT) cannot apply to a cluster’s nodes: give each node’s port in redisUrl (REDIS_URL) and remove it',
    );
  if (options.s3BucketName === undefined && options.s3ForcePathStyle)
    problems.push('s3ForcePathStyle (S3_FORCE_PATH_STYLE) needs s3BucketName (S3_BUCKET_NAME)');
  const stores = [
    options.backupDir !== undefined ? 'backupDir (BACKUP_DIR)' : undefined,
    usesRedis ? 'redisUrl/redisHost (REDIS_URL/REDIS_HOST)' : undefined,
    options.s3BucketName !== undefined ? 's3BucketName (S3_BUCKET_NAME)' : undefined,
  ].filter((store) => store !== undefined);
  if (stores.length > 1)
    problems.push(
      `${stores.join(' and ')} are set: a proxy keeps its backup in one store (as Unleash Edge, which refuses this too); keep one`,
    );
  if (problems.length > 0) throw new ConfigError(problems);
  return {
    backupDir: options.backupDir,
    redis: usesRedis ? redisTarget(options) : undefined,
    s3:
      options.s3BucketName === undefined
        ? undefined
        : { bucket: options.s3BucketName, forcePathStyle: options.s3ForcePathStyle },
  };
}

function redisTarget(options: Options): RedisTarget {
  const given = options.redisUrl?.map((url) => new URL(url)) ?? [
    // `single` mode only: checked above.
    new URL(`${SCHEME_PROTOCOLS[options.redisScheme]}//${options.redisHost}`),
  ];
  const urls = (options.redisMode === 'cluster' ? given : given.slice(0, 1)).map((url) => {
    if (options.redisUsername !== undefined)
      url.username = encodeURIComponent(options.redisUsername);
    if (options.redisPassword !== undefined)
      url.password = encodeURIComponent(options.redisPassword);
    if (options.redisPort !== undefined) url.port = String(options.redisPort);
    return options.redisSecure ? withProtocol(url, 'rediss:') : url;
  });
  return {
    mode: options.redisMode,
    urls,
    keyPrefix: options.redisKeyPrefix,
    readTimeoutMs: options.redisReadConnectionTimeoutMs,
    writeTimeoutMs: options.redisWriteConnectionTimeoutMs,
  };
}

/**
 * The URL under another scheme. WHATWG URLs refuse to change a non-special scheme in place
 * (`redis:` is one), so the URL is parsed again.
 */
function withProtocol(url: URL, protocol: string): URL {
  return new URL(protocol + url.href.slice(url.protocol.length));
}
