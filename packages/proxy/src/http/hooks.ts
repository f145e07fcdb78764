import type { FastifyInstance } from 'fastify';
import type { ProxyMetrics } from '../prometheus.js';
import type {} from './route-config.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** `performance.now()` when the request arrived (duration histogram). */
    startedAt: number;
  }
}

const NOSNIFF_HEADER = 'x-content-type-options';
/** The header every answer carries (`installRequestStart`; the evaluation front writes it too). */
export const NOSNIFF = Object.freeze({ [NOSNIFF_HEADER]: 'nosniff' });

/** The body of every answer before the first sync (Unleash Proxy's words and type). */
const NOT_READY = 'Not Ready';

/**
 * The first hook of every request: stamps `request.startedAt` (duration histogram) and puts
 * `X-Content-Type-Options: nosniff` on the answer, 503 and preflights included, so that browsers
 * never read an answer as another type than it says (a JSON error as HTML, say). One hook for
 * both: each hook costs every request.
 */
export function installRequestStart(app: FastifyInstance): void {
  // Declared so that every request has the field.
  app.decorateRequest('startedAt', 0);
  app.addHook('onRequest', function requestStart(request, reply, done) {
    request.startedAt = performance.now();
    reply.header(NOSNIFF_HEADER, NOSNIFF[NOSNIFF_HEADER]);
    done();
  });
}

/**
 * Until every startup environment holds a snapshot every request gets 503 `Not Ready`, except CORS
 * preflights, routes configured `beforeReady` and, when `docsPrefix` is given, the API description
 * (it does not depend on flags). Install it after CORS and before the routes: readiness first, then
 * the key (401), then the input (400/413/415).
 */
export function installReadiness(
  app: FastifyInstance,
  state: { readonly ready: boolean },
  docsPrefix: string | undefined,
): void {
  app.addHook('onRequest', function readiness(request, reply, done) {
    if (
      state.ready ||
      request.method === 'OPTIONS' ||
      request.routeOptions.config.beforeReady === true ||
      (docsPrefix !== undefined && request.url.startsWith(docsPrefix))
    ) {
      done();
      return;
    }
    void reply.code(503).type('text/html; charset=utf-8').send(NOT_READY);
  });
}

/**
 * Observes each request's duration when the answer is handed to Node (onSend), not in onResponse:
 * any onResponse hook makes Fastify add and remove two listeners per response, which cost ~25% of
 * a fast request.
 */
export function installDurationRecording(app: FastifyInstance, metrics: ProxyMetrics): void {
  app.addHook('onSend', function recordDuration(request, reply, payload, done) {
    metrics.observe(request, reply, performance.now() - request.startedAt, payload);
    done(null, payload);
  });
}
