import type { ClientFeatures } from '@flags/schemas';
import type { Redis } from 'ioredis';
import type { Logger, StorageProvider } from '../config/options.js';

/**
 * Backup storage in Redis (`redisUrl`, `REDIS_URL`), so a fleet of proxies shares the last good
 * payload and can start while the upstream is down. Connects on first use; a Redis problem is
 * logged by the caller and never stops the proxy (commands fail fast instead of queueing).
 */
export class RedisBackup implements StorageProvider {
  /** Created on first use: ioredis (~20 MB resident) is only loaded by proxies that use it. */
  private client: Promise<Redis> | undefined;
  private warned = false;

  constructor(
    private readonly url: URL | string,
    private readonly prefix: string,
    private readonly log: Logger,
  ) {}

  private async create(): Promise<Redis> {
    const { Redis } = await import('ioredis');
    const client = new Redis(String(this.url), {
      lazyConnect: true,
      maxRetriesPerRequest: 1,
      connectTimeout: 2000,
      // Give up reconnecting after a few tries; the next command connects again.
      retryStrategy: (times) => (times > 3 ? null : Math.min(times * 200, 1000)),
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

  private async connected(): Promise<Redis> {
    this.client ??= this.create();
    const client = await this.client;
    const status = client.status;
    if (status === 'wait' || status === 'end' || status === 'close') await client.connect();
    return client;
  }

  async get(key: string): Promise<ClientFeatures | undefined> {
    const text = await (await this.connected()).get(this.prefix + key);
    return text === null ? undefined : (JSON.parse(text) as ClientFeatures);
  }

  async set(key: string, value: ClientFeatures): Promise<void> {
    await (await this.connected()).set(this.prefix + key, JSON.stringify(value));
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
