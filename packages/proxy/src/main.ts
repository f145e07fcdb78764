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
  const offline = command === 'offline';
  const options = command === 'edge' || offline ? rest : args;
  if (options[0] !== undefined && !options[0].startsWith('-')) {
    process.stderr.write(`flags-proxy: unknown command "${options[0]}" (see flags-proxy --help)\n`);
    process.exit(1);
  }
  await serve(options, offline);
}

/**
 * Serves with the environment's settings and those of `options` (`--upstream-url <url>`, …);
 * `offline`: from a bootstrap file instead of an upstream (`offline/`), as Unleash Edge's offline
 * mode.
 */
async function serve(options: readonly string[], offline: boolean): Promise<void> {
  const [{ ConfigError }, { variablesFromArgs }, { createProxy }, { proxyConfig }, offlineMode] =
    await Promise.all([
      import('./config/load.js'),
      import('./config/args.js'),
      import('./index.js'),
      import('./config/options.js'),
      offline ? import('./offline/index.js') : undefined,
    ]);
  let proxy: Awaited<ReturnType<typeof createProxy>>;
  let upstream: import('./offline/index.js').OfflineUpstream | undefined;
  try {
    // Offline, the upstream's own options are not taken (as Edge refuses `--tokens` there).
    const rows =
      offlineMode === undefined
        ? proxyConfig.options
        : [
            ...proxyConfig.options.filter((row) => !offlineMode.UPSTREAM_OPTIONS.has(row.key)),
            ...offlineMode.offlineConfig.options,
          ];
    const env = { ...process.env, ...variablesFromArgs(options, rows) };
    if (offlineMode !== undefined) {
      const settings = offlineMode.offlineConfig.load(env, {});
      upstream = await offlineMode.OfflineUpstream.start(
        settings.bootstrapFile,
        settings.clientTokens,
        settings.frontendTokens,
      );
      proxy = await createProxy(offlineMode.offlineProxyOptions(upstream, settings), env);
      upstream.reload(settings.reloadInterval * 1000, proxy.log);
    } else proxy = await createProxy({}, env);
  } catch (error) {
    await upstream?.close();
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
    app
      .close()
      .then(() => upstream?.close())
      .then(
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
