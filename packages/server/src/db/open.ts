import { mkdirSync } from 'node:fs';
import type { ServerConfig } from '../config/options.js';
import { lockDataDir } from './data-dir-lock.js';
import { type Database, openPglite, openPostgres } from './database.js';

/**
 * PostgreSQL when `databaseUrl` is set, otherwise PGlite in `dataDir` (in memory when unset),
 * which this process holds until the database is closed: one that another process has open is
 * refused with a `ConfigError`.
 */
export async function openDatabase(
  config: Pick<ServerConfig, 'databaseUrl' | 'dataDir'> &
    Partial<Pick<ServerConfig, 'databaseConnectTimeoutMs'>>,
): Promise<Database> {
  if (config.databaseUrl) {
    const timeout = config.databaseConnectTimeoutMs;
    return openPostgres(config.databaseUrl, timeout ? { connectTimeoutMs: timeout } : {});
  }
  if (!config.dataDir) return openPglite();
  mkdirSync(config.dataDir, { recursive: true });
  const release = lockDataDir(config.dataDir);
  let db: Database;
  try {
    db = await openPglite(config.dataDir);
  } catch (error) {
    release();
    throw error;
  }
  return {
    ...db,
    close: async () => {
      try {
        await db.close();
      } finally {
        release();
      }
    },
  };
}
