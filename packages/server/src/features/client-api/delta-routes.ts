import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import { type EventStream, EventStreamHub, eventFrame, eventIdOf } from '@flags/serving';
import type { FastifyBaseLogger, FastifyInstance, FastifyRequest } from 'fastify';
import { isDatabaseUnreachable } from '../../db/availability.js';
import type { Database } from '../../db/database.js';
import { ApiError } from '../../errors.js';
import type { ApiToken, TokenStore } from '../api-tokens/token-store.js';
import type { ChangeFeed } from './change-feed.js';
import {
  type DeltaScope,
  readEventsAfter,
  readHydration,
  type StoredEvent,
  visibleTo,
  withEventId,
} from './change-log-reads.js';
import { CACHE_CONTROL, VARY_BY_TOKEN, visibleProjects } from './routes.js';

const querySchema = {
  type: 'object',
  properties: {
    project: { type: 'array', items: { type: 'string' } },
    namePrefix: { type: 'string' },
    tag: { type: 'array', items: { type: 'string' } },
  },
} as const;

export interface DeltaRoutesOptions {
  readonly maxStreams: number;
  readonly keepAliveMs: number;
  /** On close, tell streams to switch to polling (`event: fetch-mode`) before ending them. */
  readonly pollingOnClose: boolean;
  /** While the database is unreachable, how often a new stream's catch-up is tried again (ms). */
  readonly retryMs: number;
  /** The clock tokens expire by (the token store's). */
  readonly now: () => Date;
}

/** How often open streams are checked for tokens that expired meanwhile, ms. */
const EXPIRY_CHECK_MS = 1000;

/** One open `/api/client/streaming` response: who it is for and where it is in the log. */
interface StreamTopic {
  readonly scope: DeltaScope;
  /** The presented secret: the stream ends once it no longer names a valid token. */
  readonly secret: string;
  /** When the token expires (epoch ms; Infinity: never): the stream ends then. */
  readonly expiresAtMs: number;
  /** The newest event id this stream has been brought to. */
  lastId: number;
  /** False until its catch-up has run; the fan-out skips it until then. */
  ready: boolean;
}

function scopeOf(
  token: ApiToken,
  query: { project?: string[]; namePrefix?: string; tag?: string[] },
): DeltaScope {
  if (query.tag && query.tag.length > 0) {
    // Tags are not part of the events; a tag filter would miss flags tagged later.
    throw new ApiError(
      'BAD_DATA',
      'The tag filter is not supported on the delta API; use /api/client/features.',
    );
  }
  return {
    environment: token.environment ?? 'default',
    projects: visibleProjects(token, query.project),
    namePrefix: query.namePrefix || undefined,
  };
}

const etagOf = (id: number) => `"${id}"`;

/**
 * `GET /api/client/delta` and `GET /api/client/streaming` (Server-Sent Events), both fed by the
 * change log (`ChangeFeed`) and scoped like `/api/client/features` (the token's environment and
 * projects, narrowed by `project` and `namePrefix`). A client id the log cannot resume from (none,
 * unparsable, compacted away, from another database) gets a `hydration`.
 */
export function deltaRoutes(
  app: FastifyInstance,
  db: Database,
  feed: ChangeFeed,
  tokens: TokenStore,
  guard: (request: FastifyRequest) => Promise<void>,
  options: DeltaRoutesOptions,
): void {
  const hub = new EventStreamHub<StreamTopic>({
    maxStreams: options.maxStreams,
    keepAliveMs: options.keepAliveMs,
  });

  const fanOut = (events: readonly StoredEvent[]) => {
    const newest = events.at(-1)!.id;
    // Streams of one scope at one position get the same frame: filtered and serialized once.
    const frames = new Map<string, string>();
    for (const stream of hub) {
      const topic = stream.topic;
      if (!topic.ready) continue;
      const { environment, projects, namePrefix } = topic.scope;
      const key = JSON.stringify([environment, projects ?? null, namePrefix ?? null, topic.lastId]);
      let frame = frames.get(key);
      if (frame === undefined) {
        frame = updatesFrame(topic, events);
        frames.set(key, frame);
      }
      if (frame !== '') stream.send(frame);
      topic.lastId = Math.max(topic.lastId, newest);
    }
  };
  const unsubscribeEvents = feed.onEvents(fanOut);

  // A deleted token's streams end (the SDK reconnects, gets 401 and polls).
  const unsubscribeTokens = feed.onTokensChanged(() => {
    const streams = [...hub];
    tokens.lookupAll(streams.map((stream) => stream.topic.secret)).then(
      (found) =>
        found.forEach((token, index) => {
          if (!token || token.type !== 'client') streams[index]!.close();
        }),
      (error: unknown) => app.log.warn({ err: error }, 'checking the tokens of streams failed'),
    );
  });
  // A token that expires changes nothing in the database, so no token change tells of it.
  const expiryCheck = setInterval(() => {
    const nowMs = options.now().getTime();
    hub.closeWhere((topic) => topic.expiresAtMs <= nowMs);
  }, EXPIRY_CHECK_MS).unref();

  /**
   * Brings a new stream from its first event to the feed's reads: run in turn with them, so the
   * fan-out takes over without a gap or a repeat. While the database is unreachable it is tried
   * again every `retryMs` (the stream stays open, skipped by the fan-out until then).
   */
  const catchUp = (stream: EventStream<StreamTopic>, log: FastifyBaseLogger) => {
    feed
      .serial(async () => {
        if (!stream.open) return;
        const more = await readEventsAfter(
          db,
          stream.topic.scope,
          stream.topic.lastId,
          feed.latest ?? 0,
        );
        if (!more) {
          // Compacted past it meanwhile: the client reconnects and is hydrated.
          stream.close();
          return;
        }
        sendUpdates(stream, more.events);
        stream.topic.lastId = Math.max(stream.topic.lastId, more.newest);
        stream.topic.ready = true;
      })
      .catch((error: unknown) => {
        if (isDatabaseUnreachable(error) && stream.open) {
          setTimeout(() => catchUp(stream, log), options.retryMs).unref();
          return;
        }
        log.warn({ err: error }, 'catching a new stream up failed: closing it');
        stream.close();
      });
  };

  app.addHook('preClose', (done) => {
    unsubscribeEvents();
    unsubscribeTokens();
    clearInterval(expiryCheck);
    if (options.pollingOnClose) hub.broadcast({ event: 'fetch-mode', data: 'polling' });
    // Open streams would hold the server's close until their clients leave.
    hub.closeAll();
    done();
  });

  app
    .withTypeProvider<JsonSchemaToTsProvider>()
    .get(
      '/api/client/delta',
      { schema: { querystring: querySchema }, onRequest: guard },
      async function clientGetDelta(request, reply) {
        const scope = scopeOf(request.apiToken, request.query);
        void reply.header('cache-control', CACHE_CONTROL).header('vary', VARY_BY_TOKEN);
        const after = eventIdOf(request.headers['if-none-match']);
        await feed.sync();
        if (after !== undefined) {
          const latest = feed.latest;
          const floor = feed.floorOf(scope.environment);
          const latestOfScope = feed.latestOf(scope.environment);
          if (
            latest !== undefined &&
            floor !== undefined &&
            latestOfScope !== undefined &&
            floor <= after &&
            latestOfScope <= after &&
            after <= latest
          ) {
            return reply.header('etag', etagOf(after)).status(304).send();
          }
          const since = await readEventsAfter(db, scope, after, latest ?? 0);
          if (since) {
            if (since.events.length === 0 && since.newest === after) {
              return reply.header('etag', etagOf(after)).status(304).send();
            }
            return reply
              .header('etag', etagOf(since.newest))
              .send({ events: since.events.map(withEventId) });
          }
        }
        const hydration = await readHydration(db, scope);
        return reply.header('etag', etagOf(hydration.id)).send({ events: [hydration.event] });
      },
    );

  app
    .withTypeProvider<JsonSchemaToTsProvider>()
    .get(
      '/api/client/streaming',
      { schema: { querystring: querySchema }, onRequest: guard },
      async function clientStreaming(request, reply) {
        const scope = scopeOf(request.apiToken, request.query);
        if (hub.full) throw new ApiError('STREAMS_FULL');
        const header = request.headers.authorization!;
        const secret = header.startsWith('Bearer ') ? header.slice(7) : header;
        const after = eventIdOf(request.headers['last-event-id']);
        await feed.sync();
        // Resumed: the events missed since; otherwise (or too far behind) a hydration.
        const since =
          after === undefined
            ? undefined
            : await readEventsAfter(db, scope, after, feed.latest ?? 0);
        const hydration = since ? undefined : await readHydration(db, scope);
        const lastId = since ? since.newest : hydration!.id;
        void reply.header('cache-control', 'no-cache').header('vary', VARY_BY_TOKEN);
        if (request.raw.socket.destroyed) {
          // The client left during the reads: nothing to answer, and no stream to keep.
          reply.hijack();
          return;
        }
        const expiresAtMs = request.apiToken.expiresAt?.getTime() ?? Number.POSITIVE_INFINITY;
        const stream = hub.open(reply, { scope, secret, expiresAtMs, lastId, ready: false });
        if (!stream) throw new ApiError('STREAMS_FULL');
        stream.send({
          event: 'unleash-connected',
          id: lastId,
          data: JSON.stringify({
            events: hydration ? [hydration.event] : since!.events.map(withEventId),
          }),
        });
        // Events committed since the reads above: read in turn with the feed's own reads, so the
        // fan-out takes over from here without a gap or a repeat.
        catchUp(stream, request.log);
      },
    );
}

/** The `unleash-updated` frame of the events a stream at `topic` has not had and may see ('' if none). */
function updatesFrame(topic: StreamTopic, events: readonly StoredEvent[]): string {
  const { scope, lastId } = topic;
  const visible = events.filter((event) => event.id > lastId && visibleTo(scope, event));
  if (visible.length === 0) return '';
  return eventFrame({
    event: 'unleash-updated',
    id: visible.at(-1)!.id,
    data: JSON.stringify({ events: visible.map(withEventId) }),
  });
}

/** Sends the events of `events` the stream has not had and may see, as one `unleash-updated`. */
function sendUpdates(stream: EventStream<StreamTopic>, events: readonly StoredEvent[]): void {
  const frame = updatesFrame(stream.topic, events);
  if (frame !== '') stream.send(frame);
}
