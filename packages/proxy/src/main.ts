#!/usr/bin/env node
import { isProbeName, probeCommand } from './probe.js';

/**
 * The `flags-proxy` command: configuration from the environment, listen, stop on signals; or, as
 * `flags-proxy ready|health`, a probe of a running proxy. The probes import only what they use,
 * so that an orchestrator calling them every few seconds does not load the server each time.
 */
async function main(): Promise<void> {
  const args = process.argv.slice(2);
  if (args.includes('--help') || args.includes('-h')) {
    const { help } = await import('./help.js');
    process.stdout.write(help());
    return;
  }
  const [command, ...rest] = args;
  if (isProbeName(command)) {
    const result = await probeCommand(command, rest);
    (result.ok ? process.stdout : process.stderr).write(`${result.line}\n`);
    process.exit(result.ok ? 0 : 1);
  }
  // Unleash Edge's image runs `edge` and its options: serving is what this command does anyway.
  const options = command === 'edge' ? rest : args;
  if (options[0] !== undefined && !options[0].startsWith('-')) {
    process.stderr.write(`flags-proxy: unknown command "${options[0]}" (see flags-proxy --help)\n`);
    process.exit(1);
  }
  await serve(options);
}

/** Serves with the environment's settings and those of `options` (`--upstream-url <url>`, …). */
async function serve(options: readonly string[]): Promise<void> {
  const [{ ConfigError }, { variablesFromArgs }, { createProxy }] = await Promise.all([
    import('./config/load.js'),
    import('./config/args.js'),
    import('./index.js'),
  ]);
  let proxy: Awaited<ReturnType<typeof createProxy>>;
  try {
    proxy = await createProxy({}, { ...process.env, ...variablesFromArgs(options) });
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`flags-proxy: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  const { app, config, log } = proxy;
  try {
    const address = await app.listen({ port: config.port, host: config.host });
    log.info({ address }, `flags-proxy is listening on ${address}`);
  } catch (error) {
    log.fatal({ err: error instanceof Error ? error.message : String(error) }, 'cannot listen');
    process.exit(1);
  }
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    // Keep-alive connections busy at the signal are closed once idle, not after keepAliveTimeout.
    setInterval(() => app.server.closeIdleConnections(), 50).unref();
    app.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((error: unknown) => {
  process.stderr.write(`flags-proxy: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
