import { mkdirSync } from 'node:fs';
import type { ServerConfig } from '../config/options.js';
import { type Database, openPglite, openPostgres } from './database.js';

/** PostgreSQL when `databaseUrl` is set, otherwise PGlite in `dataDir` (in memory when unset). */
export async function openDatabase(
  config: Pick<ServerConfig, 'databaseUrl' | 'dataDir'> &
    Partial<Pick<ServerConfig, 'databaseConnectTimeoutMs'>>,
): Promise<Database> {
  if (config.databaseUrl) {
    const timeout = config.databaseConnectTimeoutMs;
    return openPostgres(config.databaseUrl, timeout ? { connectTimeoutMs: timeout } : {});
  }
  if (config.dataDir) mkdirSync(config.dataDir, { recursive: true });
  return openPglite(config.dataDir);
}
