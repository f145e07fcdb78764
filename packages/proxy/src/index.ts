import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import { loadConfig, type ProxyConfig } from './config/load.js';
import { loadEnrichers, loadStrategies } from './config/modules.js';
import type { Logger, ProxyOptions, StorageProvider } from './config/options.js';
import { configWarnings } from './config/warnings.js';
import { createLogger } from './logger.js';
import { ProxyState } from './state.js';
import { FileBackup } from './sync/backup-file.js';
import { RedisBackup } from './sync/backup-redis.js';
import { backupKey, loadBackup, loadBootstrap, saveSnapshots } from './sync/fallbacks.js';
import { createUpstreamClient } from './sync/http-client.js';
import { Poller } from './sync/poller.js';
import { registerUpstream } from './sync/register.js';
import { UsageAggregator } from './usage/aggregator.js';
import { MetricsReporter } from './usage/reporter.js';

export { type AppDeps, buildApp } from './app.js';
export { ConfigError, loadConfig, type ProxyConfig } from './config/load.js';
export type { ContextEnricher, Logger, ProxyOptions, StorageProvider } from './config/options.js';
export { options as optionTable, proxySchema } from './config/options.js';
export { CompiledState, ProxyState } from './state.js';
export { FileBackup } from './sync/backup-file.js';
export { RedisBackup } from './sync/backup-redis.js';
export {
  createUpstreamClient,
  type UpstreamClient,
  type UpstreamClientOptions,
  type UpstreamRequestInit,
  type UpstreamResponse,
} from './sync/http-client.js';
export { Poller } from './sync/poller.js';
export { UsageAggregator } from './usage/aggregator.js';
export { MetricsReporter } from './usage/reporter.js';

/** A running proxy: the Fastify app plus what it was built from. Closing the app stops syncing. */
export interface ProxyApp {
  readonly app: FastifyInstance;
  readonly config: ProxyConfig;
  readonly state: ProxyState;
  readonly poller: Poller;
  readonly log: Logger;
  /** Sends usage metrics upstream (`metricsInterval` 0: never). */
  readonly reporter: MetricsReporter;
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
  for (const warning of configWarnings(config)) log.warn({}, warning);
  const [strategies, enrichers] = await Promise.all([
    loadStrategies(config.customStrategies),
    loadEnrichers(config.expCustomEnrichers),
  ]);
  const upstream = createUpstreamClient(config);
  const usage = new UsageAggregator({
    appName: config.flagsAppName,
    environment: config.environment,
  });
  const reporter = new MetricsReporter(config, usage, upstream, log);
  const state = new ProxyState({
    compile: {
      strategies,
      maxContextValueLength: config.maxContextValueLength,
      onWarning: (warning) =>
        log.warn({ flag: warning.flag }, `flag evaluation problem: ${warning.message}`),
    },
    // Enrichers may add anything to a context, so the request as sent no longer pins down the answer.
    answerCacheBytes: enrichers.length > 0 ? 0 : config.answerCacheBytes,
    // Every snapshot counts its evaluations from the start (usage metrics on only).
    usage: reporter.enabled ? usage : undefined,
  });
  const poller = new Poller(config, state, log, upstream);
  // The file and Redis providers are ours to close; an in-code provider belongs to its caller.
  const storage = tracked(storageOf(config, log), config.storageProvider === undefined);
  const onClose = async () => {
    poller.stop();
    await poller.idle();
    await reporter.stop();
    await storage?.close();
    await upstream.close();
  };
  const app = await buildApp(config, {
    state,
    log,
    enrichers,
    onClose,
    usage: reporter.enabled ? usage : undefined,
    upstream,
    clock: poller,
  });
  if (storage !== undefined) saveSnapshots(state, storage, backupKey(config), log);
  poller.start();
  // Backup and bootstrap only bridge the time until the first upstream sync.
  const markReady = (applied: boolean) => {
    if (applied) poller.markReady();
  };
  if (storage !== undefined)
    void loadBackup(state, storage, backupKey(config), log).then(markReady);
  void loadBootstrap(config, state, upstream, log).then(markReady);
  void registerUpstream(
    config,
    upstream,
    log,
    strategies.map((strategy) => strategy.name),
  );
  reporter.start();
  return { app, config, state, poller, log, reporter };
}

/** A storage provider whose writes in flight can be awaited (on close, before disconnecting). */
function tracked(
  provider: StorageProvider | undefined,
  owned: boolean,
): (StorageProvider & { close(): Promise<void> }) | undefined {
  if (provider === undefined) return undefined;
  const writes = new Set<Promise<void>>();
  return {
    get: (key) => provider.get(key),
    set(key, value) {
      const write = provider.set(key, value);
      writes.add(write);
      const forget = () => writes.delete(write);
      write.then(forget, forget);
      return write;
    },
    async close() {
      await Promise.allSettled([...writes]);
      if (owned) await (provider as { close?: () => Promise<void> }).close?.();
    },
  };
}

/** The backup storage: the in-code provider, else Redis (`redisUrl`), else a directory (`backupDir`). */
function storageOf(config: ProxyConfig, log: Logger): StorageProvider | undefined {
  if (config.storageProvider !== undefined) return config.storageProvider;
  if (config.redisUrl !== undefined)
    return new RedisBackup(config.redisUrl, config.redisKeyPrefix, log);
  if (config.backupDir !== undefined) return new FileBackup(config.backupDir);
  return undefined;
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
