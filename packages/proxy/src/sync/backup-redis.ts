import type { ClientFeatures } from '@flags/schemas';
import { Redis } from 'ioredis';
import type { Logger, StorageProvider } from '../config/options.js';

/**
 * Backup storage in Redis (`redisUrl`, `REDIS_URL`), so a fleet of proxies shares the last good
 * payload and can start while the upstream is down. Connects on first use; a Redis problem is
 * logged by the caller and never stops the proxy (commands fail fast instead of queueing).
 */
export class RedisBackup implements StorageProvider {
  private readonly client: Redis;
  private warned = false;

  constructor(
    url: URL | string,
    private readonly prefix: string,
    log: Logger,
  ) {
    this.client = new Redis(String(url), {
      lazyConnect: true,
      maxRetriesPerRequest: 1,
      connectTimeout: 2000,
      // Give up reconnecting after a few tries; the next command connects again.
      retryStrategy: (times) => (times > 3 ? null : Math.min(times * 200, 1000)),
    });
    this.client.on('error', (error: Error) => {
      if (this.warned) return;
      this.warned = true;
      log.warn({ err: error.message }, 'backup Redis connection problem');
    });
    this.client.on('ready', () => {
      this.warned = false;
    });
  }

  private async connected(): Promise<Redis> {
    const status = this.client.status;
    if (status === 'wait' || status === 'end' || status === 'close') await this.client.connect();
    return this.client;
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
    if (this.client.status === 'wait' || this.client.status === 'end') {
      this.client.disconnect();
      return;
    }
    await this.client.quit().catch(() => this.client.disconnect());
  }
}
