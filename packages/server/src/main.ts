#!/usr/bin/env node
import { helpText } from '@flags/config';
// flags-server entry point: the only place that reads process.env, listens and exits.
import { buildApp } from './app.js';
import { ConfigError, loadConfig } from './config/load.js';
import { serverConfig } from './config/options.js';
import { openDatabase } from './db/open.js';

async function main(): Promise<void> {
  if (process.argv.includes('--help') || process.argv.includes('-h')) {
    process.stdout.write(
      helpText(
        'flags-server',
        'feature-flag storage, Unleash-compatible client API and admin API.',
        serverConfig.options,
      ),
    );
    return;
  }
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  }
  const db = await openDatabase(config);
  const app = await buildApp(config, { db });
  app.log.info(
    { storage: db.kind === 'postgres' ? 'postgres' : `pglite (${config.dataDir})` },
    'storage configured',
  );
  await app.listen({ port: config.port, host: config.host });

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down');
    try {
      await app.close();
      await db.close();
      process.exit(0);
    } catch (error) {
      app.log.error({ err: error }, 'shutdown failed');
      process.exit(1);
    }
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
