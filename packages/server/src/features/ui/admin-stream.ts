import { EventStreamHub } from '@flags/serving';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../../errors.js';
import type { ChangeFeed } from '../client-api/change-feed.js';

export interface AdminStreamOptions {
  /** Open admin streams at most, in all and from one client address. */
  readonly maxStreams: number;
  readonly maxStreamsPerAddress: number;
  readonly keepAliveMs: number;
}

/**
 * `GET /api/admin/events/stream`: Server-Sent Events for open admin pages (the web UI), so they
 * follow changes made elsewhere (another person, an import, another server on the same
 * PostgreSQL). Behind the admin guard (session, admin token or personal access token; read
 * permission). `event: connected` with the newest change id, then `event: changed` per batch of
 * committed changes: `{ "ids": [...], "features": [...], "environments": [...] }`, `id:` the newest
 * change id. It carries names, never configuration: a page reads what it shows through the admin
 * API, with the permissions of whoever is signed in.
 */
export function adminStreamRoutes(
  app: FastifyInstance,
  feed: ChangeFeed,
  guard: (request: FastifyRequest) => Promise<void>,
  options: AdminStreamOptions,
): void {
  const hub = new EventStreamHub<null>({
    maxStreams: options.maxStreams,
    maxStreamsPerAddress: options.maxStreamsPerAddress,
    keepAliveMs: options.keepAliveMs,
  });
  const unsubscribe = feed.onEvents((events) => {
    if (events.length === 0 || hub.size === 0) return;
    const features = new Set<string>();
    const environments = new Set<string>();
    for (const stored of events) {
      if (stored.featureName !== null) features.add(stored.featureName);
      environments.add(stored.environment);
    }
    hub.broadcast({
      event: 'changed',
      id: events[events.length - 1]!.id,
      data: JSON.stringify({
        ids: events.map((stored) => stored.id),
        features: [...features],
        environments: [...environments],
      }),
    });
  });
  app.addHook('onClose', async () => {
    unsubscribe();
    hub.closeAll();
  });

  app.get(
    '/api/admin/events/stream',
    { onRequest: guard },
    async function adminStreamChanges(request, reply) {
      const holder = { address: request.ip, key: request.actor?.name ?? '' };
      if (hub.refusal(holder) !== undefined) {
        void reply.header('retry-after', 30);
        throw new ApiError(
          'STREAMS_FULL',
          'This server holds as many admin streams as it allows, in all or from this address; reload the page later.',
        );
      }
      await feed.sync();
      const stream = hub.open(reply, null, holder);
      if (!stream) throw new ApiError('STREAMS_FULL');
      stream.send({
        event: 'connected',
        data: JSON.stringify({ latest: feed.latest ?? null }),
      });
    },
  );
}
