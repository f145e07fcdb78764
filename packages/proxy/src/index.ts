import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import { loadConfig, type ProxyConfig } from './config/load.js';
import { loadEnrichers, loadStrategies } from './config/modules.js';
import type { Logger, ProxyOptions } from './config/options.js';
import { createLogger } from './logger.js';
import { ProxyState } from './state.js';
import { backupKey, loadBackup, loadBootstrap, saveSnapshots } from './sync/fallbacks.js';
import { Poller } from './sync/poller.js';
import { registerUpstream } from './sync/register.js';
import { createDispatcher } from './sync/upstream.js';

export { type AppDeps, buildApp } from './app.js';
export {
  ConfigError,
  loadConfig,
  optionsFromEnv,
  type ProxyConfig,
  resolveConfig,
} from './config/load.js';
export type { ContextEnricher, Logger, ProxyOptions, StorageProvider } from './config/options.js';
export { options as optionTable } from './config/options.js';
export { CompiledState, ProxyState } from './state.js';
export { Poller } from './sync/poller.js';

/** A running proxy: the Fastify app plus what it was built from. Closing the app stops syncing. */
export interface ProxyApp {
  readonly app: FastifyInstance;
  readonly config: ProxyConfig;
  readonly state: ProxyState;
  readonly poller: Poller;
  readonly log: Logger;
}

/**
 * Builds a proxy from in-code options (the document's names) and starts syncing; `env` adds
 * environment variables under the options (in-code options win). Does not listen.
 */
export async function createProxy(
  options: ProxyOptions,
  env: Record<string, string | undefined> = {},
): Promise<ProxyApp> {
  const config = loadConfig(env, options);
  const log = createLogger(config);
  const [strategies, enrichers] = await Promise.all([
    loadStrategies(config.customStrategies),
    loadEnrichers(config.expCustomEnrichers),
  ]);
  const state = new ProxyState({
    strategies,
    onWarning: (warning) =>
      log.warn({ flag: warning.flag }, `flag evaluation problem: ${warning.message}`),
  });
  const dispatcher = createDispatcher(config);
  const poller = new Poller(config, state, log, dispatcher);
  const onClose = async () => {
    poller.stop();
    await poller.idle();
    await dispatcher.close();
  };
  const app = await buildApp(config, { state, log, enrichers, onClose });
  if (config.storageProvider !== undefined) {
    saveSnapshots(state, config.storageProvider, backupKey(config), log);
  }
  poller.start();
  // Backup and bootstrap only bridge the time until the first upstream sync.
  const markReady = (applied: boolean) => {
    if (applied) poller.markReady();
  };
  if (config.storageProvider !== undefined) {
    void loadBackup(state, config.storageProvider, backupKey(config), log).then(markReady);
  }
  void loadBootstrap(config, state, dispatcher, log).then(markReady);
  void registerUpstream(
    config,
    dispatcher,
    log,
    strategies.map((strategy) => strategy.name),
  );
  return { app, config, state, poller, log };
}

/** `createApp(options)`: the ready Fastify instance of a new proxy (syncing, not listening). */
export async function createApp(options: ProxyOptions): Promise<FastifyInstance> {
  return (await createProxy(options)).app;
}

/** `start(options)`: creates a proxy and listens on `port` (default 3000). */
export async function start(options: ProxyOptions): Promise<ProxyApp> {
  const proxy = await createProxy(options);
  await proxy.app.listen({ port: proxy.config.port, host: proxy.config.host });
  proxy.log.info(
    { port: proxy.config.port },
    `flags-proxy is listening on port ${proxy.config.port}`,
  );
  return proxy;
}
