#!/usr/bin/env node
// flags-server entry point: the only place that reads process.env, listens and exits.
import { readFileSync } from 'node:fs';
import { outlivingItsReader, USAGE_EXIT_CODE, UsageError, usageMessage } from '@flags/config';
import { parseServerCommandLine } from './config/command-line.js';
import { ConfigError, loadConfig } from './config/load.js';
import { serverConfig } from './config/options.js';

async function main(): Promise<void> {
  // `flags-server migrate …` copies from unleash-server and exits (migrate/command.ts).
  if (process.argv[2] === 'migrate') {
    const { runMigrate } = await import('./migrate/command.js');
    // A reader that stops early (`| head`) must not end a copy half-way.
    outlivingItsReader(process.stdout);
    try {
      process.exitCode = await runMigrate(process.argv.slice(3), {
        env: process.env,
        out: (text) => process.stdout.write(text),
        err: (text) => process.stderr.write(text),
      });
    } catch (error) {
      if (!(error instanceof UsageError)) throw error;
      process.stderr.write(
        usageMessage('flags-server migrate', error.problems, 'its options and examples'),
      );
      process.exit(USAGE_EXIT_CODE);
    }
    return;
  }
  // The command line first: --help, --version and a mistake start nothing (no data directory).
  let command: ReturnType<typeof parseServerCommandLine>;
  try {
    command = parseServerCommandLine(process.argv.slice(2), serverConfig.options);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(
      usageMessage('flags-server', error.problems, 'the variables and examples'),
    );
    process.exit(USAGE_EXIT_CODE);
  }
  if (command === 'help') {
    const { help } = await import('./help.js');
    process.stdout.write(help());
    return;
  }
  if (command === 'version') {
    // src/main.ts and dist/main.js both sit one level under the package.
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
    process.stdout.write(`flags-server ${(pkg as { version: string }).version}\n`);
    return;
  }
  if (typeof command === 'object') {
    const { defaultServerProbeUrl, probeServer } = await import('./probe.js');
    const base = command.url ?? defaultServerProbeUrl(process.env);
    const result = await probeServer(command.probe, base, command.timeoutMs);
    (result.ok ? process.stdout : process.stderr).write(`${result.line}\n`);
    process.exit(result.ok ? 0 : 1);
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
  // Loaded only to serve: a probe every few seconds (`flags-server ready`) loads none of it.
  const [{ buildApp }, { openDatabase }] = await Promise.all([
    import('./app.js'),
    import('./db/open.js'),
  ]);
  let db: Awaited<ReturnType<typeof openDatabase>> | undefined;
  let app: Awaited<ReturnType<typeof buildApp>>;
  try {
    db = await openDatabase(config);
    app = await buildApp(config, { db });
  } catch (error) {
    // A DATA_DIR another process has open, or options that only the stored settings show to be
    // unusable (`OIDC_*`).
    if (error instanceof ConfigError) {
      console.error(error.message);
      await db?.close();
      process.exit(1);
    }
    throw error;
  }
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
