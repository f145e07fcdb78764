import type { ClientFeatures } from '@flags/schemas';
import type { Cluster, Redis } from 'ioredis';
import type { RedisTarget } from '../config/backup.js';
import type { Logger, StorageProvider } from '../config/options.js';
import { EDGE_REDIS_KEYS, type EdgeBackupSource, type EdgeData } from './edge-backup.js';

/** `redis://host:6379/0`, or a whole target (cluster, timeouts, key prefix). */
type Target = URL | string | RedisTarget;

const DEFAULT_TIMEOUT_MS = 2000;

function targetOf(target: Target, prefix: string): RedisTarget {
  if (typeof target === 'object' && 'mode' in target) return target;
  return {
    mode: 'single',
    urls: [new URL(target)],
    keyPrefix: prefix,
    readTimeoutMs: DEFAULT_TIMEOUT_MS,
    writeTimeoutMs: DEFAULT_TIMEOUT_MS,
  };
}

/** Rejects with a message naming `what` once `ms` have passed without `work` settling. */
async function within<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Backup storage in Redis (`redisUrl`, `REDIS_URL`; a Redis Cluster with `redisMode` `cluster`),
 * so a fleet of proxies shares the last good payload and can start while the upstream is down.
 * Connects on first use; a Redis problem is logged by the caller and never stops the proxy
 * (commands fail fast instead of queueing). Reads Unleash Edge's keys too (`readEdge`).
 */
export class RedisBackup implements StorageProvider, EdgeBackupSource {
  /** Created on first use: ioredis (~20 MB resident) is only loaded by proxies that use it. */
  private client: Promise<Redis | Cluster> | undefined;
  private warned = false;
  private readonly target: RedisTarget;

  constructor(
    target: Target,
    prefix: string,
    private readonly log: Logger,
  ) {
    this.target = targetOf(target, prefix);
  }

  private async create(): Promise<Redis | Cluster> {
    const { Cluster, Redis } = await import('ioredis');
    const connectTimeout = Math.max(this.target.readTimeoutMs, this.target.writeTimeoutMs);
    // Give up reconnecting after a few tries; the next command connects again.
    const retryStrategy = (times: number) => (times > 3 ? null : Math.min(times * 200, 1000));
    const client =
      this.target.mode === 'cluster'
        ? new Cluster(this.target.urls.map(clusterNode), {
            lazyConnect: true,
            clusterRetryStrategy: retryStrategy,
            redisOptions: { ...credentials(this.target.urls[0]), connectTimeout },
          })
        : new Redis(String(this.target.urls[0]), {
            lazyConnect: true,
            maxRetriesPerRequest: 1,
            connectTimeout,
            retryStrategy,
          });
    client.on('error', (error: Error) => {
      if (this.warned) return;
      this.warned = true;
      this.log.warn({ err: error.message }, 'backup Redis connection problem');
    });
    client.on('ready', () => {
      this.warned = false;
    });
    return client;
  }

  private async connected(): Promise<Redis | Cluster> {
    this.client ??= this.create();
    const client = await this.client;
    const status = client.status;
    if (status === 'wait' || status === 'end' || status === 'close') await client.connect();
    return client;
  }

  private async read(key: string): Promise<string | null> {
    const ms = this.target.readTimeoutMs;
    return within((async () => (await this.connected()).get(key))(), ms, 'reading from Redis');
  }

  async get(key: string): Promise<ClientFeatures | undefined> {
    const text = await this.read(this.target.keyPrefix + key);
    return text === null ? undefined : (JSON.parse(text) as ClientFeatures);
  }

  async set(key: string, value: ClientFeatures): Promise<void> {
    const text = JSON.stringify(value);
    const ms = this.target.writeTimeoutMs;
    await within(
      (async () => {
        await (await this.connected()).set(this.target.keyPrefix + key, text);
      })(),
      ms,
      'writing to Redis',
    );
  }

  /** Edge's keys (`unleash-features`, `unleash-tokens`), which Edge writes without a prefix. */
  async readEdge(data: EdgeData): Promise<string | undefined> {
    return (await this.read(EDGE_REDIS_KEYS[data])) ?? undefined;
  }

  /** Closes the connection (on app close). */
  async close(): Promise<void> {
    if (this.client === undefined) return;
    const client = await this.client;
    if (client.status === 'wait' || client.status === 'end') {
      client.disconnect();
      return;
    }
    await client.quit().catch(() => client.disconnect());
  }
}

/** A cluster node as ioredis takes it (`rediss:` nodes are reached over TLS). */
function clusterNode(url: URL): { host: string; port: number; tls?: object } {
  return {
    host: url.hostname,
    port: url.port === '' ? 6379 : Number(url.port),
    ...(url.protocol === 'rediss:' ? { tls: {} } : {}),
  };
}

/** The user, password and TLS of a cluster's nodes (the first URL's: one ACL for the cluster). */
function credentials(url: URL | undefined): { username?: string; password?: string; tls?: object } {
  if (url === undefined) return {};
  return {
    ...(url.username === '' ? {} : { username: decodeURIComponent(url.username) }),
    ...(url.password === '' ? {} : { password: decodeURIComponent(url.password) }),
    ...(url.protocol === 'rediss:' ? { tls: {} } : {}),
  };
}
