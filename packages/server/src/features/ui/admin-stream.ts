import { EventStreamHub } from '@flags/serving';
import type { FastifyInstance } from 'fastify';
import type { Actor } from '../../auth/actor.js';
import { type AdminGuard, type Credentials, credentialsOf } from '../../auth/admin-guard.js';
import type { CredentialChanges } from '../../auth/credential-changes.js';
import { ApiError } from '../../errors.js';
import type { ChangeFeed } from '../client-api/change-feed.js';

export interface AdminStreamOptions {
  /** Open admin streams at most, in all and from one client address. */
  readonly maxStreams: number;
  readonly maxStreamsPerAddress: number;
  readonly keepAliveMs: number;
  /**
   * How often open streams' credentials are checked again (ms): a session ended or a role changed
   * on another server closes its streams here within this long. Changes made by this server
   * (`changes`) are checked at once.
   */
  readonly recheckMs: number;
  readonly changes: CredentialChanges;
}

/** Who a stream was opened for: checked again, without counting as a use. */
interface StreamOwner {
  readonly credentials: Credentials;
  readonly actor: Actor;
}

/**
 * `GET /api/admin/events/stream`: Server-Sent Events for open admin pages (the web UI), so they
 * follow changes made elsewhere (another person, an import, another server on the same
 * PostgreSQL). Behind the admin guard (session, admin token or personal access token; read
 * permission). `event: connected` with the newest change id, then `event: changed` per batch of
 * committed changes: `{ "ids": [...], "features": [...], "environments": [...] }`, `id:` the newest
 * change id. It carries names, never configuration: a page reads what it shows through the admin
 * API, with the permissions of whoever is signed in. A stream ends when its session or token
 * does (logout, expiry, deleted user) or its user's role changes: the page opens a new one, with
 * what it may now see.
 */
export function adminStreamRoutes(
  app: FastifyInstance,
  feed: ChangeFeed,
  guard: AdminGuard,
  options: AdminStreamOptions,
): void {
  const hub = new EventStreamHub<StreamOwner>({
    maxStreams: options.maxStreams,
    maxStreamsPerAddress: options.maxStreamsPerAddress,
    keepAliveMs: options.keepAliveMs,
  });

  /** Whether `owner` still is who opened the stream, with the same role. */
  const stillValid = async (owner: StreamOwner) => {
    // A failed check (database unreachable) closes nothing: it throws to `recheck`, which logs it.
    const now = await guard.identify(owner.credentials, false);
    return now !== undefined && now.role === owner.actor.role && now.userId === owner.actor.userId;
  };
  let checking: Promise<void> | undefined;
  /** A change came while a check ran: that check may have read the state before it. */
  let checkAgain = false;
  const recheck = () => {
    if (checking) {
      checkAgain = true;
      return checking;
    }
    checking = (async () => {
      do {
        checkAgain = false;
        const ended = new Set<StreamOwner>();
        for (const { topic } of [...hub]) if (!(await stillValid(topic))) ended.add(topic);
        if (ended.size > 0) hub.closeWhere((owner) => ended.has(owner));
      } while (checkAgain);
    })()
      .catch((error: unknown) => app.log.warn({ err: error }, 'admin streams: check failed'))
      .finally(() => {
        checking = undefined;
      });
    return checking;
  };
  const unsubscribeChanges = options.changes.onChange(() => {
    if (hub.size > 0) void recheck();
  });
  const timer = setInterval(() => {
    if (hub.size > 0) void recheck();
  }, options.recheckMs);
  timer.unref();
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
    clearInterval(timer);
    unsubscribe();
    unsubscribeChanges();
    await checking;
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
      const owner = { credentials: credentialsOf(request), actor: request.actor! };
      const stream = hub.open(reply, owner, holder);
      if (!stream) throw new ApiError('STREAMS_FULL');
      stream.send({
        event: 'connected',
        data: JSON.stringify({ latest: feed.latest ?? null }),
      });
    },
  );
}
