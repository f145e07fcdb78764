import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { KeyChecker } from './auth/client-keys.js';
import { keyedAnswerHeaders } from './cache-headers.js';
import type { ProxyConfig } from './config/load.js';
import type { ContextEnricher, Logger } from './config/options.js';
import { installCors } from './cors.js';
import { installErrorHandler } from './errors.js';
import { readJsonBodies } from './json-body.js';
import { isDebug } from './logger.js';
import { registerOpenApi } from './openapi.js';
import { type FetchClock, ProxyMetrics } from './prometheus.js';
import { limitPerAddress } from './rate-limit.js';
import { allRoutes } from './routes/all.js';
import { clientFeaturesRoutes } from './routes/client-features.js';
import { frontendRoutes } from './routes/frontend.js';
import { healthRoutes } from './routes/health.js';
import { Enrichers, requireKey } from './routes/hooks.js';
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

const NOT_READY = 'Not Ready';

declare module 'fastify' {
  interface FastifyRequest {
    /** `performance.now()` when the request arrived (duration histogram). */
    startedAt: number;
  }
}

/**
 * Builds the proxy's HTTP app (habit 4): never listens, never reads the environment. Hook order
 * is readiness (503) → client key (401) → input (400/413/415) → handler.
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
  // Before readiness, so that every answer has it, 503 included: browsers must not read an answer
  // as another type than it says (a JSON error as HTML, say).
  app.addHook('onRequest', function noSniff(_request, reply, done) {
    reply.header('x-content-type-options', 'nosniff');
    done();
  });
  installCors(app, config.cors);

  // The API description is served before the first sync too (it does not depend on flags).
  const docsPrefix = config.enableOAS ? `${config.proxyBasePath}/docs/` : undefined;
  // Start of each request for the duration histogram; declared so every request has the field.
  app.decorateRequest('startedAt', 0);
  app.addHook('onRequest', function readiness(request, reply, done) {
    request.startedAt = performance.now();
    if (
      state.ready ||
      request.method === 'OPTIONS' ||
      (docsPrefix !== undefined && request.url.startsWith(docsPrefix))
    ) {
      done();
      return;
    }
    void reply.code(503).type('text/html; charset=utf-8').send(NOT_READY);
  });

  readJsonBodies(app, 'value');

  const metrics = new ProxyMetrics(state, deps.clock ?? { lastCheckMs: 0 });
  // Observed when the answer is handed to Node (onSend), not in onResponse: any onResponse hook
  // makes Fastify add and remove two listeners per response, which cost ~25% of a fast request.
  app.addHook('onSend', function recordDuration(request, reply, payload, done) {
    metrics.observe(request, reply, performance.now() - request.startedAt);
    done(null, payload);
  });
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
      publicKey: (request) => checker.accepts(request.headers[config.clientKeysHeaderName]),
      aggregator: deps.usage,
    });
  });
  await app.register(ofrepRoutes, {
    prefix: config.proxyBasePath,
    state,
    all: config.enableAllEndpoint,
    checker,
    headerName: config.clientKeysHeaderName,
    defaults: routeOptions.defaults,
    enrichers: routeOptions.enrichers,
    vary: cacheHeaders.ofrepVary,
  });
  const onClose = deps.onClose;
  if (onClose !== undefined) app.addHook('onClose', async () => onClose());
  await app.ready();
  return app;
}
