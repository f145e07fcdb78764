import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { KeyChecker } from './auth/client-keys.js';
import { presentsKey, requireKey, requireOfrepKey } from './auth/require-key.js';
import type { ProxyConfig } from './config/load.js';
import type { ContextEnricher, Logger } from './config/options.js';
import { Enrichers } from './context/enrichers.js';
import { installErrorHandler } from './errors.js';
import { keyedAnswerHeaders } from './http/cache-headers.js';
import { installCors } from './http/cors.js';
import { installDurationRecording, installReadiness, installRequestStart } from './http/hooks.js';
import { readJsonBodies } from './http/json-body.js';
import { registerOpenApi } from './http/openapi.js';
import { limitPerAddress } from './http/rate-limit.js';
import { AnswerWriter } from './http/serialize.js';
import { isDebug } from './logger.js';
import { type FetchClock, ProxyMetrics } from './prometheus.js';
import { allRoutes } from './routes/all.js';
import { clientFeaturesRoutes } from './routes/client-features.js';
import { frontendRoutes } from './routes/frontend.js';
import { healthRoutes } from './routes/health.js';
import { metricsRoutes } from './routes/metrics.js';
import { ofrepRoutes } from './routes/ofrep.js';
import { prometheusRoutes } from './routes/prometheus.js';
import { registerRoutes } from './routes/register.js';
import type { ProxyState } from './state.js';
import type { UpstreamClient } from './sync/http-client.js';
import type { UsageAggregator } from './usage/aggregator.js';

export interface AppDeps {
  /** The snapshot holder the sync loop writes to. */
  readonly state: ProxyState;
  readonly log: Logger;
  /** Loaded enricher functions (`expCustomEnrichers`). */
  readonly enrichers?: readonly ContextEnricher[];
  /** Runs when the app closes (stops the sync loop). */
  readonly onClose?: () => Promise<void>;
  /** Counts frontend usage reports; absent when usage metrics are off. */
  readonly usage?: UsageAggregator;
  /** Upstream client for forwarded SDK registrations (none: not forwarded). */
  readonly upstream?: UpstreamClient;
  /** The sync loop's last successful check, for Prometheus. */
  readonly clock?: FetchClock;
}

/**
 * Builds the proxy's HTTP app from a resolved configuration. It never listens and never reads the
 * environment, so tests and in-code users build as many apps as they like, each with state of its
 * own. Hook order is CORS preflight → readiness (503) → client key (401) → input (400/413/415) →
 * handler.
 */
export async function buildApp(config: ProxyConfig, deps: AppDeps): Promise<FastifyInstance> {
  const { state, log } = deps;
  const debug = isDebug(log);
  const app: FastifyInstance = Fastify({
    // Request logging costs a child logger per request: only when debugging.
    ...(debug ? { loggerInstance: log as FastifyBaseLogger } : { logger: false }),
    trustProxy: config.trustProxy as never,
    bodyLimit: config.maxBodyBytes,
    routerOptions: { ignoreTrailingSlash: true },
    return503OnClosing: false,
    // The shared schemas use `type: [..]` unions (dates as strings or epoch numbers).
    ajv: { customOptions: { allowUnionTypes: true } },
  });

  installErrorHandler(app, log);
  installRequestStart(app);
  await installCors(app, config.cors);
  installReadiness(app, state, config.enableOAS ? `${config.proxyBasePath}/docs/` : undefined);
  readJsonBodies(app, 'value');
  const metrics = new ProxyMetrics(state, deps.clock ?? { lastCheckMs: 0 });
  installDurationRecording(app, metrics);
  if (config.enableOAS) await registerOpenApi(app, config);

  const checker = new KeyChecker(config.clientKeys);
  const cacheHeaders = keyedAnswerHeaders(config.clientKeysHeaderName, config.cors);
  const routeOptions = {
    state,
    authenticate: requireKey(checker, config.clientKeysHeaderName),
    defaults: {
      appName: config.flagsAppName,
      environment: config.environment,
      ignoreCallerRemoteAddress: config.ignoreCallerRemoteAddress,
    },
    enrichers: new Enrichers(deps.enrichers ?? [], log),
    headers: cacheHeaders.evaluation,
    writer: new AnswerWriter(),
    prefix: config.proxyBasePath,
  };
  await app.register(frontendRoutes, routeOptions);
  await app.register(allRoutes, { ...routeOptions, enabled: config.enableAllEndpoint });
  await app.register(healthRoutes, { prefix: config.proxyBasePath });
  await app.register(prometheusRoutes, { prefix: config.proxyBasePath, metrics });
  // Server-side tokens read the synced configuration; they may also report metrics and register.
  const serverSide = new KeyChecker(config.serverSideTokens);
  const sdkKeys = new KeyChecker([...config.clientKeys, ...config.serverSideTokens]);
  await app.register(clientFeaturesRoutes, {
    prefix: config.proxyBasePath,
    state,
    authenticate: requireKey(serverSide, config.clientKeysHeaderName),
    headers: cacheHeaders.serverSide,
  });
  const sdkAuth = requireKey(sdkKeys, config.clientKeysHeaderName);
  // Anyone can send these with the public client key: one budget per address for both routes.
  await app.register(async function reportRoutes(reports) {
    await limitPerAddress(reports, config.reportsPerMinute);
    await reports.register(metricsRoutes, {
      prefix: config.proxyBasePath,
      authenticate: sdkAuth,
      aggregator: deps.usage,
    });
    await reports.register(registerRoutes, {
      prefix: config.proxyBasePath,
      config,
      upstream: deps.upstream,
      log,
      authenticate: sdkAuth,
      // A key that is also a server-side token is still public when it is a client key.
      publicKey: presentsKey(checker, config.clientKeysHeaderName),
      aggregator: deps.usage,
    });
  });
  await app.register(ofrepRoutes, {
    prefix: config.proxyBasePath,
    state,
    all: config.enableAllEndpoint,
    authenticate: requireOfrepKey(checker, config.clientKeysHeaderName),
    defaults: routeOptions.defaults,
    enrichers: routeOptions.enrichers,
    vary: cacheHeaders.ofrepVary,
  });
  const onClose = deps.onClose;
  if (onClose !== undefined) app.addHook('onClose', async () => onClose());
  await app.ready();
  return app;
}
