import { createRequire } from 'node:module';
import rateLimit from '@fastify/rate-limit';
import {
  answerClientError,
  ConnectionCap,
  EnvironmentState,
  fastifyTrustProxy,
  installConnectionCap,
  namedProxies,
  requestTimeoutOptions,
  trustEverySenderWarning,
} from '@flags/serving';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyServerOptions,
  LogController,
} from 'fastify';
import { adminGuard } from './auth/admin-guard.js';
import { CredentialChanges } from './auth/credential-changes.js';
import { LoginFailures } from './auth/login-failures.js';
import { SessionStore } from './auth/sessions.js';
import { tokenGuards } from './auth/token-guard.js';
import { acceptBodilessDeletes } from './bodiless-deletes.js';
import { refuseWhileClosing } from './closing.js';
import type { ServerConfig } from './config/options.js';
import { DatabaseAvailability, isDatabaseUnreachable, watchedDatabase } from './db/availability.js';
import type { Database } from './db/database.js';
import { migrate } from './db/migrate.js';
import { registerErrorHandling } from './errors.js';
import { applyConfiguredTokens } from './features/api-tokens/configured-tokens.js';
import { apiTokenRoutes } from './features/api-tokens/routes.js';
import { TokenStore } from './features/api-tokens/token-store.js';
import { ChangeFeed } from './features/client-api/change-feed.js';
import { recordClientChanges } from './features/client-api/change-log.js';
import { ClientFeaturesCache } from './features/client-api/client-features-cache.js';
import { deltaRoutes } from './features/client-api/delta-routes.js';
import { clientFeaturesRoutes } from './features/client-api/routes.js';
import { contextFieldRoutes } from './features/context-fields/routes.js';
import { edgeValidateRoutes } from './features/edge/routes.js';
import { environmentRoutes } from './features/environments/routes.js';
import { eventRoutes } from './features/events/routes.js';
import { featureTypeRoutes } from './features/feature-types/routes.js';
import { singleFlagRoutes } from './features/flags/routes.js';
import { FrontendStates } from './features/frontend-api/frontend-states.js';
import { frontendApiRoutes } from './features/frontend-api/routes.js';
import { ImportService } from './features/import/import-service.js';
import { featuresBatchRoutes } from './features/import/routes.js';
import { dashboardRoutes } from './features/insights/dashboard/routes.js';
import { insightsRoutes } from './features/insights/routes.js';
import { loginHistoryRoutes } from './features/logins/history-routes.js';
import { loginRoutes } from './features/logins/routes.js';
import { DefinedVariantsLookup } from './features/metrics/defined-variants.js';
import { clientDataRetention } from './features/metrics/retention-job.js';
import { clientMetricsRoutes } from './features/metrics/routes.js';
import { UsageBuffer } from './features/metrics/usage-buffer.js';
import { personalAccessTokens } from './features/personal-access-tokens/pat-store.js';
import { personalAccessTokenRoutes } from './features/personal-access-tokens/routes.js';
import { projectRoutes } from './features/projects/routes.js';
import { segmentRoutes } from './features/segments/routes.js';
import { settingsRoutes } from './features/settings/routes.js';
import { signupTokenRoutes } from './features/signup-tokens/routes.js';
import { groupRoutes } from './features/sso/group-routes.js';
import { applyOidcOptions } from './features/sso/oidc-settings.js';
import { ssoRoutes } from './features/sso/routes.js';
import { strategyRoutes } from './features/strategies/routes.js';
import { tagAdminRoutes } from './features/tags/routes.js';
import { adminStreamRoutes } from './features/ui/admin-stream.js';
import { uiRoutes } from './features/ui/routes.js';
import { PasswordHasher } from './features/users/password.js';
import { passwordRoutes } from './features/users/password-routes.js';
import { userRoutes } from './features/users/routes.js';
import { noSniff } from './no-sniff.js';
import { healthRoutes } from './readiness.js';
import { redactingChildLoggers } from './request-log.js';
import { RevisionTracker } from './revision.js';

/** How often old delta events are compacted (`CHANGE_LOG_EVENTS_PER_ENVIRONMENT` kept). */
const CHANGE_LOG_COMPACT_EVERY_MS = 60_000;

/** Writes notified within this long of the last read are read together (`ChangeFeed.wake`). */
const CHANGE_FEED_COALESCE_MS = 20;

/**
 * How often the credentials of open admin streams are checked again: a session ended or a role
 * changed on another server closes its streams here within this long (at once on this server).
 */
const ADMIN_STREAM_RECHECK_MS = 15_000;

const { version } = createRequire(import.meta.url)('../package.json') as { version: string };

export interface AppDeps {
  /**
   * The storage; the caller opens and closes it. On PostgreSQL it may be unreachable at build
   * time: the app is then built not ready (`/ready` 503) and loads once the database answers.
   */
  db: Database;
  /** A pino logger instance, or `false` for none. Default: Fastify's pino at `config.logLevel`. */
  logger?: FastifyBaseLogger | false;
  /** Clock (token expiry). */
  now?: () => Date;
  /** Password hashing and its concurrency bound. Default: a new `PasswordHasher`. */
  passwords?: PasswordHasher;
  /** The web UI's bundle (`npm run build`). Default: `dist/ui` of this package. */
  uiDir?: string;
  /**
   * Configured secrets that are public on purpose (the demo's well-known tokens, which it says
   * are public): no warning at start that they are short. Default: none.
   */
  publicSecrets?: ReadonlySet<string>;
}

/** The logger options of `main`: JSON lines or pino-pretty; tokens never logged. */
export function loggerOptions(config: ServerConfig): FastifyServerOptions['logger'] {
  return {
    level: config.logLevel,
    redact: ['req.headers.authorization'],
    ...(config.jsonLogger ? {} : { transport: { target: 'pino-pretty' } }),
  };
}

/**
 * Builds flags-server: migrates the database, creates the configured tokens and registers every
 * route. Never listens (see `main.ts`).
 */
export async function buildApp(config: ServerConfig, deps: AppDeps): Promise<FastifyInstance> {
  const now = deps.now ?? (() => new Date());
  const app = Fastify({
    ...(deps.logger === undefined
      ? { logger: loggerOptions(config) }
      : deps.logger === false
        ? { logger: false }
        : { loggerInstance: deps.logger }),
    bodyLimit: config.bodyLimitBytes,
    // A hop count as the function Fastify takes (a bare number, it reads as trusting nothing).
    trustProxy: fastifyTrustProxy(config.trustProxy),
    // Time to receive a request (a body trickled byte by byte); answers and streams are unbounded.
    ...requestTimeoutOptions(config.requestTimeoutMs),
    clientErrorHandler: answerClientError,
    // A log line per request costs more than serving a cached body; kept for debug and trace.
    logController: new LogController({
      disableRequestLogging: config.logLevel !== 'debug' && config.logLevel !== 'trace',
    }),
    // Request log lines never carry a secret a URL holds (invite links, token paths, `?token=`).
    childLoggerFactory: redactingChildLoggers(),
    ajv: { customOptions: { allowUnionTypes: true } },
    // Fastify's own closing answer has another body shape; `refuseWhileClosing` answers instead.
    return503OnClosing: false,
  }) as unknown as FastifyInstance;
  const trustWarning = trustEverySenderWarning(config.trustProxy, 'TRUST_PROXY');
  if (trustWarning !== undefined) app.log.warn(trustWarning);
  // Connections per address, counted before Node's HTTP server sees one.
  if (config.maxConnectionsPerAddress > 0) {
    const cap = new ConnectionCap({
      maxPerAddress: config.maxConnectionsPerAddress,
      exempt: namedProxies(config.trustProxy),
      log: app.log,
    });
    installConnectionCap(app.server, cap);
  }
  app.decorateRequest('apiToken', null as never);
  // Every body this server takes is JSON: anything else is a 415, not a string to validate.
  app.removeContentTypeParser('text/plain');
  acceptBodilessDeletes(app);
  registerErrorHandling(app);
  noSniff(app);
  refuseWhileClosing(app);

  const availability = new DatabaseAvailability(deps.db, app.log, config.databaseRetryMs);
  app.addHook('onClose', async () => availability.stop());
  const db = watchedDatabase(deps.db, availability);
  const revisions = new RevisionTracker(
    db,
    config.revisionCheckMs,
    Date.now,
    config.changeLogEventsPerEnvironment,
  );
  const tokens = new TokenStore(db, revisions, now);
  const clientFeatures = new ClientFeaturesCache(db, revisions);
  const usage = new UsageBuffer(
    db,
    availability,
    config.metricsBufferMaxReports,
    app.log,
    new DefinedVariantsLookup(clientFeatures),
    config.metricsBufferMaxBytes,
  );
  healthRoutes(app, availability, usage);

  // The first load: schema, configured tokens, the token set in memory.
  const load = async () => {
    const applied = await migrate(db);
    if (applied.length > 0) app.log.info({ migrations: applied }, 'database migrated');
    // The change log's baseline (first start) or its catch-up with writes made without it.
    await db.transaction((tx) =>
      recordClientChanges(tx, true, undefined, config.changeLogEventsPerEnvironment),
    );
    await applyConfiguredTokens(config, db, tokens, app.log, deps.publicSecrets);
    if (await applyOidcOptions(db, config)) {
      app.log.info('single sign-on settings written from the OIDC_* options');
    }
    await tokens.lookupAll([]);
    availability.markLoaded();
  };
  try {
    await load();
  } catch (error) {
    if (!isDatabaseUnreachable(error)) throw error;
    // Logged by `availability`, which probes every `databaseRetryMs` and calls this when it answers.
    availability.onRecovered(() => {
      if (availability.ready) return;
      load().then(
        () => app.log.info('database loaded: ready'),
        (loadError: unknown) => {
          if (!isDatabaseUnreachable(loadError)) {
            app.log.error({ err: loadError }, 'loading from the database failed: not ready');
          }
        },
      );
    });
  }

  // Each API admits its own kind of token only; the admin API people too (sessions), by role.
  const guards = tokenGuards(tokens);
  const sessions = new SessionStore(
    db,
    { maxAgeMs: config.sessionMaxAgeMs, idleTimeoutMs: config.sessionIdleTimeoutMs },
    now,
  );
  const credentialChanges = new CredentialChanges();
  const adminOnly = adminGuard({
    tokens,
    sessions,
    personalTokens: personalAccessTokens(db, now),
    publicOrigin: config.publicUrl.origin,
  });
  const clientOnly = guards.client;

  clientFeaturesRoutes(app, clientFeatures, clientOnly, {
    advertiseStreaming: config.streamingAdvertise,
  });
  const changeFeed = new ChangeFeed(db, revisions, app.log, {
    checkMs: config.revisionCheckMs,
    retryMs: config.databaseRetryMs,
    eventsPerEnvironment: config.changeLogEventsPerEnvironment,
    compactEveryMs: CHANGE_LOG_COMPACT_EVERY_MS,
    coalesceMs: CHANGE_FEED_COALESCE_MS,
  });
  await changeFeed.start();
  app.addHook('onClose', async () => changeFeed.stop());
  deltaRoutes(app, db, changeFeed, clientFeatures, tokens, clientOnly, {
    maxStreams: config.streamingMaxConnections,
    maxStreamsPerAddress: config.streamingMaxConnectionsPerAddress,
    maxStreamsPerToken: config.streamingMaxConnectionsPerToken,
    keepAliveMs: config.streamingKeepAliveMs,
    pollingOnClose: config.streamingPollingOnClose,
    retryMs: config.databaseRetryMs,
    now,
  });
  clientMetricsRoutes(app, db, clientOnly, version, usage);
  clientDataRetention(app, db, { now, settings: config });
  apiTokenRoutes(app, db, tokens, adminOnly);
  featuresBatchRoutes(
    app,
    db,
    new ImportService(db, revisions),
    adminOnly,
    config.importBodyLimitBytes,
  );
  projectRoutes(app, db, revisions, adminOnly);
  environmentRoutes(app, db, revisions, adminOnly);
  segmentRoutes(app, db, revisions, adminOnly);
  strategyRoutes(app, db, adminOnly);
  contextFieldRoutes(app, db, revisions, adminOnly);
  tagAdminRoutes(app, db, revisions, adminOnly);
  featureTypeRoutes(app, db, revisions, adminOnly);
  personalAccessTokenRoutes(app, db, adminOnly, now);
  settingsRoutes(app, db, adminOnly);
  singleFlagRoutes(app, { db, revisions }, adminOnly);
  eventRoutes(app, db, adminOnly);
  const passwords = deps.passwords ?? new PasswordHasher();
  userRoutes(app, db, adminOnly, {
    passwords,
    now,
    publicUrl: config.publicUrl,
    changes: credentialChanges,
  });
  // Rate limits are per route (`config.rateLimit`) on the routes without a token or with a public
  // one: public signup, `/edge/validate` and the frontend API's reports, registered after the
  // plugin so it sees them.
  await app.register(rateLimit, { global: false });
  // The frontend API evaluates the payloads the client API serves, compiled once per change.
  const frontendStates = new FrontendStates(
    clientFeatures,
    (environment) =>
      new EnvironmentState({
        compile: {
          onWarning: (warning) =>
            app.log.warn(
              { environment, flag: warning.flag },
              `flag evaluation problem: ${warning.message}`,
            ),
        },
        answerCacheBytes: config.frontendAnswerCacheBytes,
      }),
  );
  await frontendApiRoutes(app, {
    config,
    db,
    guard: guards.frontend,
    states: frontendStates,
    version,
    usage,
  });
  edgeValidateRoutes(app, tokens, {
    bodyLimitBytes: config.bodyLimitBytes,
    requestsPerMinute: config.edgeValidatePerMinute,
  });
  passwordRoutes(app, db, adminOnly, {
    passwords,
    now,
    changes: credentialChanges,
    requestsPerMinute: config.loginsPerMinute,
  });
  signupTokenRoutes(app, db, adminOnly, {
    publicUrl: config.publicUrl,
    now,
    signupsPerMinute: config.signupsPerMinute,
    passwords,
    sessions,
    sessionMaxAgeMs: config.sessionMaxAgeMs,
  });
  loginRoutes(app, db, adminOnly, {
    sessions,
    passwords,
    failures: new LoginFailures(
      db,
      {
        failuresPerUserAndAddress: config.loginFailuresBeforeDelay,
        failuresPerAddress: config.loginAddressFailuresBeforeDelay,
        failuresPerUser: config.loginUserFailuresBeforeSlowing,
        delayMs: config.loginDelayMs,
        maxDelayMs: config.loginMaxDelayMs,
        forgetAfterMs: config.loginFailuresForgottenAfterMs,
      },
      now,
    ),
    publicUrl: config.publicUrl,
    sessionMaxAgeMs: config.sessionMaxAgeMs,
    loginsPerMinute: config.loginsPerMinute,
    now,
    changes: credentialChanges,
    breakGlassAdmin: config.breakGlassAdmin,
  });
  ssoRoutes(app, db, adminOnly, {
    sessions,
    publicUrl: config.publicUrl,
    sessionMaxAgeMs: config.sessionMaxAgeMs,
    loginsPerMinute: config.loginsPerMinute,
    now,
    changes: credentialChanges,
  });
  groupRoutes(app, db, adminOnly, now);
  loginHistoryRoutes(app, db, adminOnly);
  await insightsRoutes(app, db, adminOnly, { now });
  dashboardRoutes(app, deps.uiDir);
  adminStreamRoutes(app, changeFeed, adminOnly, {
    maxStreams: config.streamingMaxConnections,
    maxStreamsPerAddress: config.streamingMaxConnectionsPerAddress,
    keepAliveMs: config.streamingKeepAliveMs,
    recheckMs: ADMIN_STREAM_RECHECK_MS,
    changes: credentialChanges,
  });
  uiRoutes(app, deps.uiDir);

  await app.ready();
  return app;
}
