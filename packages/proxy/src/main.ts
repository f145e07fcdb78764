#!/usr/bin/env node
import { helpText } from '@flags/config';
import { ConfigError } from './config/load.js';
import { proxyConfig } from './config/options.js';
import { createProxy } from './index.js';

/** The `flags-proxy` command: configuration from the environment, listen, stop on signals. */
async function main(): Promise<void> {
  if (process.argv.includes('--help') || process.argv.includes('-h')) {
    process.stdout.write(
      helpText(
        'flags-proxy',
        'evaluates feature flags for client-side apps, Unleash Proxy compatible.',
        proxyConfig.options,
      ),
    );
    return;
  }
  let proxy: Awaited<ReturnType<typeof createProxy>>;
  try {
    proxy = await createProxy({}, process.env);
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
