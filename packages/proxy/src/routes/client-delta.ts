import { errorResponses, eventIdOf, SERVER_SIDE_TAG } from '@flags/serving';
import type { FastifyInstance } from 'fastify';
import type { AuthorizeHook as Authenticate } from '../auth/access.js';
import type { ChangeLogs } from '../streaming/change-log.js';

export interface ClientDeltaRouteOptions {
  /** `/api/client/delta`. */
  readonly path: string;
  /** Client tokens only, as `/api/client/features`. */
  readonly authenticate: Authenticate;
  /** `Vary` on the key header (`KeyedAnswerHeaders.serverSide`); caching is set here. */
  readonly headers: Readonly<Record<string, string>>;
  readonly logs: ChangeLogs;
}

/** The documented shape of a delta answer (the events are the engine's `DeltaEvent`s). */
export const deltaAnswerSchema = {
  type: 'object',
  required: ['events'],
  properties: {
    events: {
      type: 'array',
      description:
        '`hydration` {eventId, features, segments}, `feature-updated` {feature}, `feature-removed` {featureName, project}, `segment-updated` {segment}, `segment-removed` {segmentId}.',
      items: {
        type: 'object',
        required: ['eventId', 'type'],
        properties: { eventId: { type: 'integer' }, type: { type: 'string' } },
        additionalProperties: true,
      },
    },
  },
} as const;

/**
 * `GET <path>`: what changed in the caller's environment and projects since the event id in
 * `If-None-Match` (the `ETag` of its last answer), as delta events (the Node SDK's
 * `experimentalMode: { type: 'polling', format: 'delta' }`); 304 when nothing did; a `hydration`
 * for a first call or an id this proxy does not hold (another proxy's, or too old).
 */
export function clientDeltaRoutes(
  app: FastifyInstance,
  options: ClientDeltaRouteOptions,
  done: () => void,
): void {
  const { path, authenticate, logs } = options;
  // The answer depends on `If-None-Match`: a cache may keep it but must ask again every time.
  const headers = { ...options.headers, 'Cache-control': 'private, no-cache' };
  app.get(
    path,
    {
      schema: {
        summary: 'Changes of the synced configuration since an event id, for server-side SDKs.',
        description:
          'Send the `ETag` of the last answer as `If-None-Match`: 304 when nothing changed, else the events since. Without one, or with an id this proxy no longer holds (or never issued), the answer is one `hydration` event.',
        tags: [SERVER_SIDE_TAG],
        response: {
          200: { description: 'Delta events, oldest first.', ...deltaAnswerSchema },
          304: { description: 'Nothing changed since `If-None-Match`.', type: 'null' },
          ...errorResponses(401, 403, 503),
        },
      },
      onRequest: authenticate,
    },
    function clientGetDelta(request, reply) {
      const log = logs.of(request.access.environment.state);
      const scope = log.scope(request.access.projects);
      const since = eventIdOf(request.headers['if-none-match']);
      const latest = log.latest;
      reply.headers(headers);
      reply.header('etag', `"${latest}"`);
      if (since === latest) return reply.code(304).send();
      const json =
        since !== undefined && log.holds(since)
          ? JSON.stringify({ events: log.eventsAfter(since, scope) })
          : log.hydrationJson(scope);
      return reply.code(200).type('application/json; charset=utf-8').send(json);
    },
  );
  done();
}
