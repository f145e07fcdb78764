import { EnvironmentState } from '@flags/serving';
import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import { TokenValidator } from './auth/token-validator.js';
import { parseUnleashToken, projectsOf } from './auth/unleash-token.js';
import { loadConfig, type ProxyConfig } from './config/load.js';
import { loadEnrichers, loadStrategies } from './config/modules.js';
import type { Logger, ProxyMode, ProxyOptions, StorageProvider } from './config/options.js';
import { configWarnings } from './config/warnings.js';
import { listen } from './listen.js';
import { createLogger } from './logger.js';
import { EdgeUpstreamMetrics } from './prometheus-edge-upstream.js';
import { FileBackup } from './sync/backup-file.js';
import { RedisBackup } from './sync/backup-redis.js';
import { S3Backup } from './sync/backup-s3.js';
import { EdgeBackup, isEdgeBackupSource } from './sync/edge-backup.js';
import { type Environment, Environments } from './sync/environments.js';
import {
  backupKey,
  loadBackup,
  loadBootstrap,
  loadTokens,
  saveSnapshots,
  saveTokens,
  tokensKey,
} from './sync/fallbacks.js';
import { FeedSync } from './sync/feed-sync.js';
import { createUpstreamClient } from './sync/http-client.js';
import { registerUpstream } from './sync/register.js';
import { PROXY_VERSION, upstreamHeaders } from './sync/upstream.js';
import { UsageAggregator } from './usage/aggregator.js';
import { InstanceData } from './usage/instance-data.js';
import { InstanceDataSender } from './usage/instance-data-sender.js';
import { PendingBudget } from './usage/pending-budget.js';
import { MetricsReporter } from './usage/reporter.js';

// The public surface: the factories, the app builder, configuration, the backup stores users may
// pass as `storageProvider`, and the types of what `createProxy` returns. Internals stay in src/.
export type { CompiledState, EnvironmentState } from '@flags/serving';
export { type AppDeps, buildApp } from './app.js';
export type { TokenValidator } from './auth/token-validator.js';
export { EDGE_OPTIONS, type EdgeOption, edgeOptionsMarkdown } from './config/edge-options.js';
export { ConfigError, loadConfig, type ProxyConfig } from './config/load.js';
export type { ContextEnricher, Logger, ProxyOptions, StorageProvider } from './config/options.js';
export {
  EDGE_PROFILE_COLUMN,
  options as optionTable,
  PROXY_MODES,
  type ProxyMode,
  proxySchema,
} from './config/options.js';
export { edgeVariableReaders } from './config/own-variables.js';
export { type ErrorCode, errorCatalogue } from './errors.js';
export { offlineSchema } from './offline/options.js';
export { FileBackup } from './sync/backup-file.js';
export { RedisBackup } from './sync/backup-redis.js';
export { S3Backup } from './sync/backup-s3.js';
export type { Environment, Environments } from './sync/environments.js';
export type { FeedSync } from './sync/feed-sync.js';
export type { MetricsReporter } from './usage/reporter.js';

/** A running proxy: the Fastify app plus what it was built from. Closing the app stops syncing. */
export interface ProxyApp {
  readonly app: FastifyInstance;
  readonly config: ProxyConfig;
  /** Every environment served (the startup tokens', and those client tokens brought in). */
  readonly environments: Environments;
  /** The default environment's state (the first startup token's): plain client keys read it. */
  readonly state: EnvironmentState;
  /** The default environment's first feed's sync (streaming or polling). */
  readonly poller: FeedSync;
  /** Validates Unleash-format tokens upstream; `undefined` when no startup token is one. */
  readonly validator: TokenValidator | undefined;
  readonly log: Logger;
  /** Sends usage metrics upstream (`metricsInterval` 0: never). */
  readonly reporter: MetricsReporter;
}

/**
 * Builds a proxy from in-code options (the document's names) and starts syncing; `env` adds
 * environment variables under the options (in-code options win); `written` says how a command
 * line wrote variables (`TOKENS`: `-t (--tokens)`), for messages naming them. Does not listen.
 */
export async function createProxy(
  options: ProxyOptions,
  env: Record<string, string | undefined> = {},
  mode: ProxyMode = 'proxy',
  written: Readonly<Record<string, string>> = {},
): Promise<ProxyApp> {
  const config = loadConfig(env, options, mode, written);
  const log = createLogger(config);
  for (const warning of configWarnings(config)) log.warn({}, warning);
  const [strategies, enrichers] = await Promise.all([
    loadStrategies(config.customStrategies),
    loadEnrichers(config.expCustomEnrichers),
  ]);
  // Unleash Edge's series of upstream calls count every request the client makes.
  const edgeMetrics = new EdgeUpstreamMetrics({
    appName: config.flagsAppName,
    instanceId: config.flagsInstanceId,
  });
  const upstream = edgeMetrics.observe(createUpstreamClient(config));
  // The file, Redis and S3 providers are ours to close; an in-code provider belongs to its caller.
  const provider = storageOf(config, log);
  const storage = tracked(provider, config.storageProvider === undefined);
  // What Unleash Edge saved in the same store, read where none of ours is there (a switch-over).
  const edgeBackup = isEdgeBackupSource(provider) ? new EdgeBackup(provider, log) : undefined;
  // The validated tokens read back from their backup (below). An environment's backup is not
  // served before them: a request right then, with the upstream down, would find its token
  // unchecked (401). Both come from one store, so this waits no longer than the backup itself.
  let tokensRead: Promise<unknown> = Promise.resolve();
  // A backup only bridges the time until an environment's first upstream sync.
  const restore = (environment: Environment) => {
    if (storage === undefined) return;
    const key = backupKey(config, environment.name);
    saveSnapshots(environment.state, storage, key, log);
    const edge =
      edgeBackup === undefined ? undefined : { backup: edgeBackup, environment: environment.name };
    void loadBackup(environment.state, storage, key, log, tokensRead, edge).then((applied) => {
      if (applied) environment.poller.markReady();
    });
  };
  // One memory bound for the pending usage of every environment.
  const usageBudget = new PendingBudget(config.usageMaxPendingBytes);
  const environments = new Environments({
    // Every environment counts its own usage (metrics on only): an Unleash-format token names the
    // environment its counts belong to; a plain token's counts take the configured one, if any.
    usageFor: (name, token) =>
      config.metricsInterval > 0
        ? new UsageAggregator({
            appName: config.flagsAppName,
            environment: parseUnleashToken(token) === undefined ? config.environment : name,
            budget: usageBudget,
          })
        : undefined,
    stateFor: (_name, usage) =>
      new EnvironmentState({
        compile: {
          strategies,
          maxContextValueLength: config.maxContextValueLength,
          memoBytes: config.evaluationMemoBytes,
          onWarning: (warning) =>
            log.warn({ flag: warning.flag }, `flag evaluation problem: ${warning.message}`),
        },
        // Enrichers may add anything to a context, so the request as sent no longer pins down the answer.
        answerCacheBytes: enrichers.length > 0 ? 0 : config.answerCacheBytes,
        // Every snapshot counts its evaluations from the start.
        usage,
      }),
    pollerFor: (token, target, environment) =>
      new FeedSync(config, target, log, upstream, { token, environment }),
    onAdded: restore,
  });
  for (const token of config.startupTokens) {
    const parsed = parseUnleashToken(token);
    const name = parsed?.environment ?? legacyEnvironment(config);
    environments.add(name, token, parsed === undefined ? ['*'] : projectsOf(parsed), true);
  }
  const reporter = new MetricsReporter(config, environments, upstream, log);
  const instanceData = new InstanceData({
    appName: config.flagsAppName,
    identifier: config.flagsInstanceId,
    version: PROXY_VERSION,
  });
  const instanceDataSender = new InstanceDataSender({
    config,
    environments,
    data: instanceData,
    upstream,
    log,
  });
  const validator = config.startupTokens.some((token) => parseUnleashToken(token) !== undefined)
    ? new TokenValidator({
        upstream,
        url: new URL('../edge/validate', config.flagsUrl),
        headers: withoutToken(upstreamHeaders(config), config.upstreamAuthHeader),
        timeoutMs: config.upstreamTimeoutMs,
        log,
      })
    : undefined;
  // A client token revoked upstream stops feeding the environment it brought in.
  validator?.onChange(() => environments.prune((token) => validator.known(token) !== 'invalid'));
  const revalidation =
    validator === undefined
      ? undefined
      : setInterval(() => void validator.revalidate(), config.tokenRevalidationInterval).unref();
  const onClose = async () => {
    clearInterval(revalidation);
    validator?.close();
    environments.stop();
    await environments.idle();
    await reporter.stop();
    await instanceDataSender.stop();
    await storage?.close();
    await upstream.close();
  };
  const app = await buildApp(config, {
    environments,
    validator,
    log,
    enrichers,
    onClose,
    upstream,
    clock: environments.default.poller,
    usageSender: reporter.enabled ? reporter.sender : undefined,
    instanceData,
    edgeMetrics,
    reporter,
  });
  const defaultEnvironment = environments.default;
  if (storage !== undefined && validator !== undefined) {
    const key = tokensKey(config);
    saveTokens(validator, storage, key, log);
    // Client tokens that brought in environments before the restart bring them in again.
    tokensRead = loadTokens(validator, storage, key, log, edgeBackup).then(() => {
      if (config.strictTokens) return;
      for (const { info } of validator.records())
        if (info?.type === 'client') environments.add(info.environment, info.token, info.projects);
    });
  }
  for (const environment of environments.all()) restore(environment);
  environments.start();
  void loadBootstrap(config, defaultEnvironment.state, upstream, log).then((applied) => {
    if (applied) defaultEnvironment.poller.markReady();
  });
  void registerUpstream(
    config,
    upstream,
    log,
    strategies.map((strategy) => strategy.name),
  );
  reporter.start();
  instanceDataSender.start();
  return {
    app,
    config,
    environments,
    state: defaultEnvironment.state,
    poller: defaultEnvironment.poller,
    validator,
    log,
    reporter,
  };
}

/** The environment a plain (not Unleash-format) startup token syncs: the configured one, or `default`. */
function legacyEnvironment(config: ProxyConfig): string {
  return config.environment ?? 'default';
}

/** The upstream headers without the token: `/edge/validate` takes none. */
function withoutToken(
  headers: Record<string, string>,
  tokenHeader: string,
): Record<string, string> {
  const { [tokenHeader]: _, ...rest } = headers;
  return rest;
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

/** The backup storage: the in-code provider, else the one store configured (Redis, S3 or a directory). */
function storageOf(config: ProxyConfig, log: Logger): StorageProvider | undefined {
  if (config.storageProvider !== undefined) return config.storageProvider;
  if (config.redis !== undefined) return new RedisBackup(config.redis, config.redis.keyPrefix, log);
  if (config.s3 !== undefined) return new S3Backup(config.s3);
  if (config.backupDir !== undefined) return new FileBackup(config.backupDir);
  return undefined;
}

/** `createApp(options)`: the ready Fastify instance of a new proxy (syncing, not listening). */
export async function createApp(options: ProxyOptions): Promise<FastifyInstance> {
  return (await createProxy(options)).app;
}

/**
 * `start(options)`: creates a proxy and listens on `port` (default 3000), or with `tls.enable`
 * on `tls.serverPort` over HTTPS (see `listen.ts`).
 */
export async function start(options: ProxyOptions): Promise<ProxyApp> {
  const proxy = await createProxy(options);
  const addresses = await listen(proxy.app, proxy.config);
  proxy.log.info({ addresses }, `flags-proxy is listening on ${addresses.join(' and ')}`);
  return proxy;
}
