import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { KeyChecker } from './auth/client-keys.js';
import type { ProxyConfig } from './config/load.js';
import type { ContextEnricher, Logger } from './config/options.js';
import { installCors } from './cors.js';
import { installErrorHandler, ProxyError } from './errors.js';
import { isDebug } from './logger.js';
import { allRoutes } from './routes/all.js';
import { frontendRoutes } from './routes/frontend.js';
import { healthRoutes } from './routes/health.js';
import { Enrichers, requireKey } from './routes/hooks.js';
import type { ProxyState } from './state.js';

export interface AppDeps {
  /** The snapshot holder the sync loop writes to. */
  readonly state: ProxyState;
  readonly log: Logger;
  /** Loaded enricher functions (`expCustomEnrichers`). */
  readonly enrichers?: readonly ContextEnricher[];
  /** Runs when the app closes (stops the sync loop). */
  readonly onClose?: () => Promise<void>;
}

const NOT_READY = 'Not Ready';

function isJsonType(contentType: string): boolean {
  const type = contentType.split(';', 1)[0]?.trim().toLowerCase() ?? '';
  return (
    type === '' ||
    type === 'application/json' ||
    (type.startsWith('application/') && type.endsWith('+json'))
  );
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
  });

  installErrorHandler(app, log);
  installCors(app, config.cors);

  app.addHook('onRequest', function readiness(request, reply, done) {
    if (state.ready || request.method === 'OPTIONS') {
      done();
      return;
    }
    void reply.code(503).type('text/html; charset=utf-8').send(NOT_READY);
  });

  // One JSON parser for every content type: a body without Content-Type is read as JSON, any
  // other non-JSON type is a 415 (after readiness and auth, which run in onRequest).
  app.removeAllContentTypeParsers();
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('*', { parseAs: 'string' }, function parseBody(request, body, done) {
    if (!isJsonType(request.headers['content-type'] ?? '')) {
      done(new ProxyError('UNSUPPORTED_MEDIA_TYPE'), undefined);
      return;
    }
    if (body === '' || (typeof body === 'string' && body.trim() === '')) {
      done(null, undefined);
      return;
    }
    parseJson(request, body as string, (error, value) => {
      if (error) done(new ProxyError('INVALID_JSON', [error.message]), undefined);
      else done(null, value);
    });
  });

  const checker = new KeyChecker(config.clientKeys);
  const routeOptions = {
    state,
    authenticate: requireKey(checker, config.clientKeysHeaderName),
    defaults: { appName: config.flagsAppName, environment: config.environment },
    enrichers: new Enrichers(deps.enrichers ?? [], log),
    prefix: config.proxyBasePath,
  };
  await app.register(frontendRoutes, routeOptions);
  await app.register(allRoutes, { ...routeOptions, enabled: config.enableAllEndpoint });
  await app.register(healthRoutes, { prefix: config.proxyBasePath });
  const onClose = deps.onClose;
  if (onClose !== undefined) app.addHook('onClose', async () => onClose());
  await app.ready();
  return app;
}
