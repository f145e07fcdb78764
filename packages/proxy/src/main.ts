#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { USAGE_EXIT_CODE, UsageError, usageMessage } from '@flags/config';
import { PROBE_VARIABLES, probeCommand } from './probe.js';

/**
 * The `flags-proxy` command, as Unleash Edge 20's: `flags-proxy [OPTIONS] <edge|offline|health|
 * ready> [OPTIONS]`. Without a subcommand it serves with Unleash Proxy's defaults, `edge` and
 * `offline` with Unleash Edge's; `health` and `ready` probe a running proxy. Configuration comes
 * from the environment and the options; the process stops on signals. The probes import only what
 * they use, so that an orchestrator calling them every few seconds does not load the server each
 * time.
 */
async function main(): Promise<void> {
  const args = process.argv.slice(2);
  if (args.includes('--help') || args.includes('-h')) {
    const { help } = await import('./help.js');
    process.stdout.write(help());
    return;
  }
  if (args.includes('--version') || args.includes('-V')) {
    // src/main.ts and dist/main.js both sit one level under the package.
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
    process.stdout.write(`flags-proxy ${(pkg as { version: string }).version}\n`);
    return;
  }
  const { ownSettings, parseCommandLine } = await import('./config/command-line.js');
  try {
    const line = parseCommandLine(args);
    const { command } = line;
    if (command === 'health' || command === 'ready') {
      const result = await probeCommand(command, ownSettings(line, PROBE_VARIABLES), process.env);
      (result.ok ? process.stdout : process.stderr).write(`${result.line}\n`);
      process.exit(result.ok ? 0 : 1);
    }
    const { servingVariables } = await import('./config/own-variables.js');
    await serve(ownSettings(line, servingVariables(command)), command, line.written);
  } catch (error) {
    // Only the command line's own problems reach here: `serve` handles its own.
    if (error instanceof UsageError) {
      process.stderr.write(usageMessage('flags-proxy', error.problems, 'the options and examples'));
      process.exit(USAGE_EXIT_CODE);
    }
    process.stderr.write(
      `flags-proxy: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    process.exit(1);
  }
}

/**
 * Serves with the environment's settings under those of the command line; `offline`: from a
 * bootstrap file instead of an upstream (`offline/`), as Unleash Edge's offline mode. `edge` and
 * `offline` take Unleash Edge's defaults.
 */
async function serve(
  variables: Readonly<Record<string, string>>,
  command: 'edge' | 'offline' | undefined,
  written: Readonly<Record<string, string>>,
): Promise<void> {
  const offline = command === 'offline';
  const [{ ConfigError }, { edgeVariableFindings }, { createProxy }, offlineMode] =
    await Promise.all([
      import('./config/load.js'),
      import('./config/edge-options.js'),
      import('./index.js'),
      offline ? import('./offline/index.js') : undefined,
    ]);
  const mode = command === undefined ? 'proxy' : 'edge';
  const env = { ...process.env, ...variables };
  const edgeFindings = edgeVariableFindings(env, written);
  let proxy: Awaited<ReturnType<typeof createProxy>>;
  let upstream: import('./offline/index.js').OfflineUpstream | undefined;
  try {
    if (edgeFindings.refusals.length > 0) throw new ConfigError(edgeFindings.refusals);
    if (offlineMode !== undefined) {
      const settings = offlineMode.offlineConfig.load(env, {}, undefined, written);
      upstream = await offlineMode.OfflineUpstream.start(
        settings.bootstrapFile,
        settings.clientTokens,
        settings.frontendTokens,
      );
      proxy = await createProxy(
        offlineMode.offlineProxyOptions(upstream, settings),
        env,
        mode,
        written,
      );
      upstream.reload(settings.reloadInterval * 1000, proxy.log);
    } else proxy = await createProxy({}, env, mode, written);
  } catch (error) {
    await upstream?.close();
    if (error instanceof ConfigError) {
      process.stderr.write(`flags-proxy: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  const { app, config, log } = proxy;
  for (const warning of edgeFindings.warnings) log.warn({}, warning);
  try {
    const { listen } = await import('./listen.js');
    const addresses = await listen(app, config);
    log.info({ addresses }, `flags-proxy is listening on ${addresses.join(' and ')}`);
    log.info(
      {
        mode: config.mode,
        refreshInterval: config.refreshInterval,
        metricsInterval: config.metricsInterval,
        tokenRevalidationInterval: config.tokenRevalidationInterval,
      },
      `${config.mode === 'edge' ? 'Unleash Edge' : 'Unleash Proxy'}'s defaults: syncing every ${config.refreshInterval / 1000} s, usage sent every ${config.metricsInterval / 1000} s, tokens checked again every ${config.tokenRevalidationInterval / 1000} s`,
    );
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
