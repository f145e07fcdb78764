import {
  AnswerWriter,
  API_FLAVOUR,
  allRoutes,
  answerClientError,
  ConnectionCap,
  Enrichers,
  EventStreamHub,
  fastifyTrustProxy,
  frontendRoutes,
  installConnectionCap,
  installCors,
  installStreamFront,
  keyedAnswerHeaders,
  namedProxies,
  PROXY_FLAVOUR,
  readJsonBodies,
  requestTimeoutOptions,
  trustsForwardedAddress,
} from '@flags/serving';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { Counter } from 'prom-client';
import { Authorizer, pretrustedKeys, pretrustedListing } from './auth/access.js';
import { EventCredentials, signingSecretOf } from './auth/event-credential.js';
import { keyInHeader, ofrepKey } from './auth/require-key.js';
import type { TokenValidator } from './auth/token-validator.js';
import type { ProxyConfig } from './config/load.js';
import type { ContextEnricher, Logger } from './config/options.js';
import { installErrorHandler } from './errors.js';
import { addressFilterFor, installAddressFilter } from './http/address-filter.js';
import { installCompression } from './http/compression.js';
import { StateRevisions } from './http/context-etag.js';
import { evaluationFrontFor, installEvaluationFront } from './http/evaluation-front.js';
import { installDurationRecording, installReadiness, installRequestStart } from './http/hooks.js';
import { registerOpenApi } from './http/openapi.js';
import { limitPerAddress } from './http/rate-limit.js';
import { isDebug } from './logger.js';
import { type FetchClock, ProxyMetrics } from './prometheus.js';
import type { EdgeIdentity } from './prometheus-edge-http.js';
import { registerEdgeStateMetrics } from './prometheus-edge-state.js';
import { EdgeUpstreamMetrics } from './prometheus-edge-upstream.js';
import { registerSyncMetrics } from './prometheus-sync.js';
import { backstageRoutes } from './routes/backstage.js';
import { bulkMetricsRoutes } from './routes/bulk-metrics.js';
import { clientDeltaRoutes } from './routes/client-delta.js';
import { clientFeaturesRoutes } from './routes/client-features.js';
import { type ClientStreamTopic, clientStreamingRoutes } from './routes/client-streaming.js';
import { edgeInstanceDataRoutes } from './routes/edge-instance-data.js';
import { edgeValidateRoutes } from './routes/edge-validate.js';
import { healthRoutes } from './routes/health.js';
import { metricsRoutes } from './routes/metrics.js';
import { ofrepRoutes } from './routes/ofrep.js';
import { OFREP_EVENTS_PATH, OfrepEvents } from './routes/ofrep-events.js';
import { prometheusRoutes } from './routes/prometheus.js';
import { registerRoutes } from './routes/register.js';
import { ChangeLogs } from './streaming/change-log.js';
import type { Environments } from './sync/environments.js';
import type { UpstreamClient } from './sync/http-client.js';
import { PROXY_VERSION } from './sync/upstream.js';
import type { Sender } from './usage/batches.js';
import { InstanceData } from './usage/instance-data.js';
import { registerUsageMetrics } from './usage/prometheus-usage.js';
import type { MetricsReporter } from './usage/reporter.js';

export interface AppDeps {
  /** The environments served, each with the snapshot its sync loop writes to. */
  readonly environments: Environments;
  /** Validates Unleash-format tokens upstream; none: only configured keys are accepted. */
  readonly validator?: TokenValidator;
  readonly log: Logger;
  /** Loaded enricher functions (`expCustomEnrichers`). */
  readonly enrichers?: readonly ContextEnricher[];
  /** Runs when the app closes (stops the sync loop). */
  readonly onClose?: () => Promise<void>;
  /** Upstream client for forwarded SDK registrations (none: not forwarded). */
  readonly upstream?: UpstreamClient;
  /** The sync loop's last successful check, for Prometheus. */
  readonly clock?: FetchClock;
  /** How usage metrics name the proxy (`MetricsReporter.sender`); none: `/metricsbatch` lists nothing. */
  readonly usageSender?: Sender;
  /** The instance data sent upstream (none: one of the app's own, never sent). */
  readonly instanceData?: InstanceData;
  /** Unleash Edge's series of upstream calls, fed by the upstream client (`observe`); none: made here. */
  readonly edgeMetrics?: EdgeUpstreamMetrics;
  /** The usage sender, for Edge's `metrics_send_error` and `metrics_interval_between_send`. */
  readonly reporter?: MetricsReporter;
}

/**
 * Builds the proxy's HTTP app from a resolved configuration. It never listens and never reads the
 * environment, so tests and in-code users build as many apps as they like, each with state of its
 * own. Hook order is CORS preflight → readiness (503) → client key (401) → input (400/413/415) →
 * handler.
 */
export async function buildApp(config: ProxyConfig, deps: AppDeps): Promise<FastifyInstance> {
  const { environments, log } = deps;
  const debug = isDebug(log);
  const app: FastifyInstance = Fastify({
    // Request logging costs a child logger per request: only when debugging.
    ...(debug ? { loggerInstance: log as FastifyBaseLogger } : { logger: false }),
    trustProxy: fastifyTrustProxy(config.trustProxy),
    bodyLimit: config.maxBodyBytes,
    // Time to receive a request (a body trickled byte by byte); answers and streams are unbounded.
    ...requestTimeoutOptions(config.requestTimeoutMs),
    clientErrorHandler: answerClientError,
    // SDKs do send `//` and trailing slashes; Edge collapses both.
    routerOptions: { ignoreTrailingSlash: true, ignoreDuplicateSlashes: true },
    return503OnClosing: false,
    // `tls.enable`: this server speaks HTTPS (`listen.ts` adds the HTTP redirect, when asked).
    ...(config.serverTls === undefined
      ? {}
      : { https: { cert: config.serverTls.cert, key: config.serverTls.key } }),
    // The shared schemas use `type: [..]` unions (dates as strings or epoch numbers).
    ajv: { customOptions: { allowUnionTypes: true } },
  });

  installErrorHandler(app, log);
  installRequestStart(app);
  const addresses = addressFilterFor(config);
  if (addresses !== undefined) installAddressFilter(app, addresses);
  await installCors(app, config.cors);
  // Set by the evaluation routes for kept answers (`sendKept`), which compression keeps copies of,
  // and for rendered ones (`sendRendered`), which it may join from pieces.
  app.decorateReply('sendsKeptBody', false);
  app.decorateReply('sentRender', 0);
  // One per app: its scratch memory is the app's own (see `AnswerWriter`).
  const writer = new AnswerWriter();
  const compression = config.compression ? await installCompression(app, writer) : undefined;
  installReadiness(
    app,
    environments,
    config.enableOAS ? `${config.proxyBasePath}/docs/` : undefined,
  );
  readJsonBodies(app, 'value');
  const identity: EdgeIdentity = {
    appName: config.flagsAppName,
    instanceId: config.flagsInstanceId,
  };
  const metrics = new ProxyMetrics(
    environments.default.state,
    deps.clock ?? { lastCheckMs: 0 },
    identity,
  );
  registerSyncMetrics(metrics.registry, { environments, validator: deps.validator });
  const edgeMetrics = deps.edgeMetrics ?? new EdgeUpstreamMetrics(identity);
  edgeMetrics.registerOn(metrics.registry);
  registerEdgeStateMetrics(metrics.registry, {
    identity,
    environments,
    validator: deps.validator,
    pretrusted: config.pretrustedTokens.length,
    reporter: deps.reporter,
  });
  // Every environment's aggregator shares one budget.
  registerUsageMetrics(metrics.registry, environments.default.usage?.budget);
  installDurationRecording(app, metrics);
  if (config.enableOAS) await registerOpenApi(app, config);

  const authorizer = new Authorizer({
    environments,
    validator: deps.validator,
    clientKeys: config.clientKeys,
    pretrustedTokens: config.pretrustedTokens,
    serverSideTokens: config.serverSideTokens,
    startupTokens: config.startupTokens,
    strict: config.strictTokens,
    firstSyncWaitMs: config.upstreamTimeoutMs,
  });
  const inHeader = keyInHeader(config.clientKeysHeaderName);
  const hooks = {
    proxy: authorizer.hook('frontend', 'legacy', inHeader),
    proxyAny: authorizer.hook('any', 'legacy', inHeader),
    proxyClient: authorizer.hook('client', 'legacy', inHeader),
    frontend: authorizer.hook('frontend', 'edge', inHeader),
    client: authorizer.hook('client', 'edge', inHeader),
  };
  const cacheHeaders = keyedAnswerHeaders(config.clientKeysHeaderName, config.cors);
  const prefix = config.proxyBasePath;
  const evaluation = {
    defaults: {
      appName: config.flagsAppName,
      environment: config.environment,
      ignoreCallerRemoteAddress: config.ignoreCallerRemoteAddress,
    },
    enrichers: new Enrichers(deps.enrichers ?? [], log),
    headers: cacheHeaders.evaluation,
    writer,
    answersDisabledFeature: config.disabledFeatureAnswer === 'disabled',
    prefix,
  };
  // `/proxy` as Unleash Proxy answers it; `/api/frontend` and `/api/proxy` as Unleash Edge does.
  const mounts = [
    { mount: '/proxy', authenticate: hooks.proxy, flavour: PROXY_FLAVOUR },
    { mount: '/api/frontend', authenticate: hooks.frontend, flavour: API_FLAVOUR },
    { mount: '/api/proxy', authenticate: hooks.frontend, flavour: API_FLAVOUR },
  ];
  for (const mount of mounts) {
    await app.register(frontendRoutes, { ...evaluation, ...mount });
    await app.register(allRoutes, { ...evaluation, ...mount, enabled: config.enableAllEndpoint });
  }
  await app.register(healthRoutes, { prefix });
  const instanceData =
    deps.instanceData ??
    new InstanceData({
      appName: config.flagsAppName,
      identifier: config.flagsInstanceId,
      version: PROXY_VERSION,
    });
  await app.register(backstageRoutes, {
    prefix,
    environments,
    validator: deps.validator,
    pretrusted: pretrustedListing(config.pretrustedTokens),
    refreshIntervalMs: config.refreshInterval,
    sender: deps.usageSender,
    instanceData,
    serve: {
      tokens: config.enableTokensEndpoint,
      features: config.enableFeaturesEndpoint,
      metricsBatch: config.enableMetricsBatchEndpoint,
      instanceData: config.enableInstanceDataEndpoint,
    },
  });
  // Unleash Proxy's path behind readiness, as it always was; Edge's answers from the start.
  await app.register(prometheusRoutes, {
    prefix,
    metrics,
    path: '/proxy/internal-backstage/prometheus',
    beforeReady: false,
  });
  // Edge's `--disable-metrics-endpoint` leaves the route out: 404 as any unknown path.
  if (config.enableMetricsEndpoint)
    await app.register(prometheusRoutes, {
      prefix,
      metrics,
      path: '/internal-backstage/metrics',
      beforeReady: true,
    });
  if (config.prometheusRemoteWrite !== undefined) {
    // Loaded only when asked for: its encoder (protobufjs) would take heap in every proxy.
    const { RemoteWritePusher } = await import('./prometheus-remote-write.js');
    const pusher = new RemoteWritePusher(
      metrics.registry,
      config.prometheusRemoteWrite,
      identity,
      log,
      config.upstreamTimeoutMs,
    );
    pusher.start();
    app.addHook('onClose', async () => pusher.stop());
  }
  await app.register(clientFeaturesRoutes, {
    prefix,
    path: '/proxy/client/features',
    authenticate: hooks.proxyClient,
    headers: cacheHeaders.serverSide,
  });
  await app.register(clientFeaturesRoutes, {
    prefix,
    path: '/api/client/features',
    authenticate: hooks.client,
    headers: cacheHeaders.serverSide,
    post: true,
  });
  // Delta and streaming answer from one change log per environment; streams end when the app closes.
  const changeLogs = new ChangeLogs({ retained: config.deltaEventsRetained });
  const streams = new EventStreamHub<ClientStreamTopic>({
    maxStreams: config.streamingMaxConnections,
    maxStreamsPerAddress: config.streamingMaxConnectionsPerAddress,
    maxStreamsPerKey: config.streamingMaxConnectionsPerToken,
    keepAliveMs: config.streamingKeepAliveMs,
  });
  app.addHook('preClose', async () => streams.closeAll());
  const changes = { prefix, authenticate: hooks.client, logs: changeLogs };
  await app.register(clientDeltaRoutes, {
    ...changes,
    path: '/api/client/delta',
    headers: cacheHeaders.serverSide,
  });
  await app.register(clientStreamingRoutes, {
    ...changes,
    path: '/api/client/streaming',
    headers: { vary: cacheHeaders.serverSide.vary as string },
    hub: streams,
  });
  const reporting = { prefix, edgeMetrics };
  const registering = { ...reporting, config, upstream: deps.upstream, log };
  // Anyone can send these with the public client key: one budget per address for all of them.
  await app.register(async function reportRoutes(reports) {
    await limitPerAddress(reports, config.reportsPerMinute, {
      trustsForwarded: trustsForwardedAddress(config.trustProxy),
      log,
    });
    await reports.register(metricsRoutes, {
      ...reporting,
      paths: ['/proxy/client/metrics', '/proxy/all/client/metrics'],
      accepted: 200,
      authenticate: hooks.proxyAny,
    });
    await reports.register(metricsRoutes, {
      ...reporting,
      paths: ['/api/frontend', '/api/frontend/all', '/api/proxy', '/api/proxy/all'].map(
        (mount) => `${mount}/client/metrics`,
      ),
      accepted: 202,
      authenticate: hooks.frontend,
    });
    await reports.register(metricsRoutes, {
      ...reporting,
      paths: ['/api/client/metrics'],
      accepted: 202,
      authenticate: hooks.client,
    });
    await reports.register(bulkMetricsRoutes, { ...reporting, authenticate: hooks.client });
    await reports.register(edgeInstanceDataRoutes, {
      ...reporting,
      authenticate: hooks.client,
      instanceData,
    });
    await reports.register(registerRoutes, {
      ...registering,
      path: '/proxy/client/register',
      accepted: 200,
      authenticate: hooks.proxyAny,
    });
    // Edge serves registration under `/all` too, as the metrics above.
    for (const path of ['/api/frontend', '/api/frontend/all', '/api/proxy', '/api/proxy/all'].map(
      (mount) => `${mount}/client/register`,
    )) {
      await reports.register(registerRoutes, {
        ...registering,
        path,
        accepted: 202,
        authenticate: hooks.frontend,
      });
    }
    await reports.register(registerRoutes, {
      ...registering,
      path: '/api/client/register',
      accepted: 202,
      authenticate: hooks.client,
    });
    // Tokens are validated only where a startup token is Unleash-format (else: 404, as before).
    if (deps.validator !== undefined)
      await reports.register(edgeValidateRoutes, { ...reporting, validator: deps.validator });
  });
  const revisions = new StateRevisions();
  const ofrepEvents = config.ofrepEventStreams
    ? new OfrepEvents({
        environments,
        holds: (key, environment, projects) =>
          authorizer.holds(key, 'frontend', environment, projects),
        credentials: new EventCredentials({
          secret: signingSecretOf(config.ofrepEventSecret, config.startupTokens),
          keys: [...config.clientKeys, ...pretrustedKeys(config.pretrustedTokens)],
          lifetimeMs: config.ofrepEventCredentialMs,
        }),
        revisions,
        basePath: prefix,
        maxStreams: config.ofrepEventStreamsMax,
        maxStreamsPerAddress: config.ofrepEventStreamsMaxPerAddress,
        maxStreamsPerKey: config.ofrepEventStreamsMaxPerKey,
        keepAliveMs: config.streamingKeepAliveMs,
        inactivityDelaySec: config.ofrepInactivityDelaySec,
      })
    : undefined;
  const readOfrepKey = ofrepKey(config.clientKeysHeaderName);
  await app.register(ofrepRoutes, {
    prefix,
    all: config.enableAllEndpoint,
    authenticate: authorizer.hook('frontend', 'legacy', readOfrepKey),
    defaults: evaluation.defaults,
    enrichers: evaluation.enrichers,
    vary: cacheHeaders.ofrepVary,
    readKey: readOfrepKey,
    revisions,
    events: ofrepEvents,
  });
  if (ofrepEvents !== undefined) {
    await app.register(
      async function ofrepEventRoutes(scope) {
        ofrepEvents.routes(scope);
      },
      { prefix },
    );
  }
  // An open stream is a standing answer to its key: when a token change (a revalidation that
  // revoked or narrowed a token, and the environments pruned for it, by a listener registered
  // before this one) leaves a key without what its stream reads, the stream ends. The client
  // reconnects and is answered as any request with that key now is.
  deps.validator?.onChange(() => {
    streams.closeWhere(
      ({ access }) =>
        !authorizer.holds(access.key, access.type, access.environment, access.projects),
    );
    ofrepEvents?.closeRevoked();
  });
  // Streams opened on a new connection are served below Node's HTTP server (see the module).
  // Not over TLS: the TLS layer reads the socket natively, so bytes the front read and put back
  // never reach it, and the handshake stalls.
  if (config.serverTls === undefined)
    installStreamFront(app.server, [
      `${prefix}/api/client/streaming`,
      `${prefix}${OFREP_EVENTS_PATH}`,
    ]);
  // The commonest evaluation requests are answered before Fastify (see the module).
  const front = evaluationFrontFor(config, {
    ...evaluation,
    compression,
    debug,
    state: environments,
    authorizer,
    readKey: inHeader,
    metrics,
    mounts,
    addresses,
    bodyLimit: config.maxBodyBytes,
    log,
  });
  if (front !== undefined) installEvaluationFront(app.server, front);
  // Connections per address, counted before the stream front or Node's server sees one: last.
  if (config.maxConnectionsPerAddress > 0) {
    const cap = new ConnectionCap({
      maxPerAddress: config.maxConnectionsPerAddress,
      exempt: namedProxies(config.trustProxy),
      log,
    });
    installConnectionCap(app.server, cap);
    new Counter({
      name: 'flags_proxy_connections_refused_total',
      help: 'Connections closed at once because their address already had maxConnectionsPerAddress open.',
      registers: [metrics.registry],
      collect() {
        // The cap keeps the count; a counter has no `set`, so it is rebuilt from it.
        this.reset();
        this.inc(cap.refused);
      },
    });
  }
  app.decorate('evaluationFront', front);
  const onClose = deps.onClose;
  if (onClose !== undefined) app.addHook('onClose', async () => onClose());
  await app.ready();
  return app;
}
