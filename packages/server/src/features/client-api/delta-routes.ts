import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import {
  type EventStream,
  EventStreamHub,
  eventFrame,
  eventIdOf,
  type StreamRefusal,
} from '@flags/serving';
import type { FastifyBaseLogger, FastifyInstance, FastifyRequest } from 'fastify';
import { isDatabaseUnreachable } from '../../db/availability.js';
import type { Database } from '../../db/database.js';
import { ApiError } from '../../errors.js';
import type { ApiToken, TokenStore } from '../api-tokens/token-store.js';
import type { ChangeFeed } from './change-feed.js';
import {
  type DeltaScope,
  readEventsAfter,
  readEventsAfterClientId,
  resyncIn,
  type StoredEvent,
} from './change-log-reads.js';
import type { ClientFeaturesCache, ServedConfiguration } from './client-features-cache.js';
import type { FeatureQuery } from './client-features-store.js';
import { CACHE_CONTROL, VARY_BY_TOKEN, visibleProjects } from './routes.js';
import { eventsFor, isNarrowed } from './scoped-events.js';

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
  /** Streams one client address may hold (0: no own cap). */
  readonly maxStreamsPerAddress: number;
  /** Streams one token may hold (0: no own cap). */
  readonly maxStreamsPerToken: number;
  readonly keepAliveMs: number;
  /** On close, tell streams to switch to polling (`event: fetch-mode`) before ending them. */
  readonly pollingOnClose: boolean;
  /** While the database is unreachable, how often a new stream's catch-up is tried again (ms). */
  readonly retryMs: number;
  /** The clock tokens expire by (the token store's). */
  readonly now: () => Date;
}

/** `Retry-After` of a refused stream, s (SDKs poll meanwhile). */
const STREAM_RETRY_AFTER_SECONDS = '60';

/** What a refused stream's 429 says of the cap that was reached. */
const STREAM_REFUSALS: Readonly<Record<StreamRefusal, string>> = {
  full: 'As many streams are open as this server accepts (STREAMING_MAX_CONNECTIONS).',
  address:
    'This client address holds as many streams as one address may (STREAMING_MAX_CONNECTIONS_PER_ADDRESS).',
  key: 'This token holds as many streams as one token may (STREAMING_MAX_CONNECTIONS_PER_TOKEN).',
};

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

/** The client-features query of a delta scope: what its `/api/client/features` is built from. */
const featureQueryOf = (scope: DeltaScope): FeatureQuery => ({
  environment: scope.environment,
  projects: scope.projects,
  namePrefix: scope.namePrefix,
  tags: undefined,
  inlineSegmentConstraints: false,
});

/** The newest event of `environment` among `events` (0: none). */
function newestOf(events: readonly StoredEvent[], environment: string): number {
  let newest = 0;
  for (const event of events) if (event.environment === environment) newest = event.id;
  return newest;
}

/**
 * `GET /api/client/delta` and `GET /api/client/streaming` (Server-Sent Events), both fed by the
 * change log (`ChangeFeed`) and scoped like `/api/client/features` (the token's environment and
 * projects, narrowed by `project` and `namePrefix`). A client id the log cannot resume from (none,
 * unparsable, not one it gave out, compacted away, from another database) gets a `hydration`,
 * served from the client-features cache (the entry `/api/client/features` answers from).
 */
export function deltaRoutes(
  app: FastifyInstance,
  db: Database,
  feed: ChangeFeed,
  cache: ClientFeaturesCache,
  tokens: TokenStore,
  guard: (request: FastifyRequest) => Promise<void>,
  options: DeltaRoutesOptions,
): void {
  const hub = new EventStreamHub<StreamTopic>({
    maxStreams: options.maxStreams,
    maxStreamsPerAddress: options.maxStreamsPerAddress,
    maxStreamsPerKey: options.maxStreamsPerToken,
    keepAliveMs: options.keepAliveMs,
  });

  /** The configuration a narrowed scope's events are sent from (see `eventsFor`); else undefined. */
  const currentOf = async (
    scope: DeltaScope,
    events: readonly StoredEvent[],
  ): Promise<ServedConfiguration | undefined> => {
    if (!isNarrowed(scope)) return undefined;
    return cache.atLeast(featureQueryOf(scope), newestOf(events, scope.environment));
  };

  // Run by the feed in turn with its reads (it waits for the returned promise).
  // `{"events":[hydration]}` of each cache entry, serialized once (entries are immutable).
  const hydrations = new WeakMap<ServedConfiguration, string>();
  const hydrationJson = (served: ServedConfiguration): string => {
    let json = hydrations.get(served);
    if (json === undefined) {
      json = JSON.stringify({
        events: [
          {
            eventId: served.eventId,
            type: 'hydration',
            features: served.payload.features,
            segments: served.payload.segments ?? [],
          },
        ],
      });
      hydrations.set(served, json);
    }
    return json;
  };

  /**
   * The `unleash-updated` frame that hydrates a stream in place (after a resync point, or when it
   * fell behind what the log holds), as the proxy's streams are: the configuration at or after
   * `eventId`, with the position it reflects, which the stream is at afterwards.
   */
  const hydrationFrame = async (scope: DeltaScope, eventId: number) => {
    const served = await cache.atLeast(featureQueryOf(scope), eventId);
    const frame = eventFrame({
      event: 'unleash-updated',
      id: served.eventId,
      data: hydrationJson(served),
    });
    return { frame, eventId: served.eventId };
  };

  const fanOut = async (events: readonly StoredEvent[]) => {
    const newest = events.at(-1)!.id;
    const scopeKey = (scope: DeltaScope) =>
      JSON.stringify([scope.environment, scope.projects ?? null, scope.namePrefix ?? null]);
    // Narrowed scopes need their current configuration: built (or cached) once per scope.
    const currents = new Map<string, Promise<ServedConfiguration | undefined>>();
    for (const stream of hub) {
      const { ready, scope } = stream.topic;
      const key = scopeKey(scope);
      if (ready && isNarrowed(scope) && !currents.has(key)) {
        currents.set(key, currentOf(scope, events));
      }
    }
    const resolved = new Map<string, ServedConfiguration | undefined | null>();
    for (const [key, current] of currents) {
      // null: unavailable (database unreachable): those streams end, and resume on reconnect.
      resolved.set(key, await current.catch(() => null));
    }
    // Streams of one scope at one position get the same frame: filtered and serialized once.
    const frames = new Map<string, string>();
    // After a resync point of its environment a stream is hydrated, once per scope.
    const hydrations = new Map<string, Promise<{ frame: string; eventId: number } | null>>();
    for (const stream of hub) {
      const topic = stream.topic;
      if (!topic.ready) continue;
      const key = scopeKey(topic.scope);
      const unseen = events.filter((event) => event.id > topic.lastId);
      if (resyncIn(unseen, topic.scope.environment)) {
        let hydration = hydrations.get(key);
        if (hydration === undefined) {
          hydration = hydrationFrame(topic.scope, newestOf(events, topic.scope.environment)).catch(
            () => null,
          );
          hydrations.set(key, hydration);
        }
        const hydrated = await hydration;
        // null: unavailable (database unreachable): the stream ends, and resumes on reconnect.
        if (hydrated === null) stream.close();
        else {
          stream.send(hydrated.frame);
          topic.lastId = Math.max(topic.lastId, newest, hydrated.eventId);
        }
        continue;
      }
      const current = resolved.get(key);
      if (current === null) {
        stream.close();
        continue;
      }
      const frameKey = `${key}\n${topic.lastId}`;
      let frame = frames.get(frameKey);
      if (frame === undefined) {
        frame = updatesFrame(topic, events, current);
        frames.set(frameKey, frame);
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
        const more = await readEventsAfter(db, stream.topic.scope, stream.topic.lastId);
        if (!more) {
          // A resync point, or compacted past it meanwhile: hydrated in place.
          const hydrated = await hydrationFrame(
            stream.topic.scope,
            feed.latestOf(stream.topic.scope.environment) ?? 0,
          );
          if (!stream.open) return;
          stream.send(hydrated.frame);
          stream.topic.lastId = Math.max(stream.topic.lastId, hydrated.eventId);
          stream.topic.ready = true;
          return;
        }
        const current = await currentOf(stream.topic.scope, more.events);
        const frame = updatesFrame(stream.topic, more.events, current);
        if (frame !== '') stream.send(frame);
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
        // Database unreachable (possibly in the middle of the feed's read): what the feed read
        // last answers a client that is up to date, and the cache a hydration.
        await feed.sync().catch((error: unknown) => {
          if (!isDatabaseUnreachable(error)) throw error;
        });
        if (after !== undefined) {
          const latest = feed.latest;
          const floor = feed.floorOf(scope.environment);
          const latestOfScope = feed.latestOf(scope.environment);
          // Up to date: no event of the environment after it (0 only while the log is empty).
          if (
            latest !== undefined &&
            floor !== undefined &&
            latestOfScope !== undefined &&
            floor <= after &&
            latestOfScope <= after &&
            after <= latest &&
            (after !== 0 || latest === 0)
          ) {
            return reply.header('etag', etagOf(after)).status(304).send();
          }
          // Past the newest id read (another database, or made up): a hydration, without a read.
          const known = after <= (latest ?? 0);
          const since = known ? await readEventsAfterClientId(db, scope, after) : undefined;
          if (since) {
            if (since.events.length === 0 && since.newest === after) {
              return reply.header('etag', etagOf(after)).status(304).send();
            }
            const current = await currentOf(scope, since.events);
            return reply
              .header('etag', etagOf(since.newest))
              .send({ events: eventsFor(scope, since.events, current?.payload) });
          }
        }
        const served = await cache.get(featureQueryOf(scope));
        return reply
          .header('etag', etagOf(served.eventId))
          .type('application/json; charset=utf-8')
          .send(hydrationJson(served));
      },
    );

  app
    .withTypeProvider<JsonSchemaToTsProvider>()
    .get(
      '/api/client/streaming',
      { schema: { querystring: querySchema }, onRequest: guard },
      async function clientStreaming(request, reply) {
        const scope = scopeOf(request.apiToken, request.query);
        const header = request.headers.authorization!;
        const secret = header.startsWith('Bearer ') ? header.slice(7) : header;
        // Each address and each token holds a share of the slots at most (issue #40).
        const holder = { address: request.ip, key: secret };
        const refused = (refusal: StreamRefusal) => {
          void reply.header('retry-after', STREAM_RETRY_AFTER_SECONDS);
          return new ApiError('STREAMS_FULL', undefined, [STREAM_REFUSALS[refusal]]);
        };
        const refusal = hub.refusal(holder);
        if (refusal !== undefined) throw refused(refusal);
        const after = eventIdOf(request.headers['last-event-id']);
        await feed.sync();
        // Resumed: the events missed since; otherwise (or too far behind) a hydration.
        const since =
          after === undefined ? undefined : await readEventsAfterClientId(db, scope, after);
        const hydration = since ? undefined : await cache.get(featureQueryOf(scope));
        const current = since ? await currentOf(scope, since.events) : undefined;
        const lastId = since ? since.newest : hydration!.eventId;
        void reply.header('cache-control', 'no-cache').header('vary', VARY_BY_TOKEN);
        if (request.raw.socket.destroyed) {
          // The client left during the reads: nothing to answer, and no stream to keep.
          reply.hijack();
          return;
        }
        const expiresAtMs = request.apiToken.expiresAt?.getTime() ?? Number.POSITIVE_INFINITY;
        // Checked again: other streams may have opened during the reads.
        const stream = hub.open(
          reply,
          { scope, secret, expiresAtMs, lastId, ready: false },
          holder,
        );
        if (!stream) throw refused(hub.refusal(holder) ?? 'full');
        stream.send({
          event: 'unleash-connected',
          id: lastId,
          data: hydration
            ? hydrationJson(hydration)
            : JSON.stringify({ events: eventsFor(scope, since!.events, current?.payload) }),
        });
        // Events committed since the reads above: read in turn with the feed's own reads, so the
        // fan-out takes over from here without a gap or a repeat.
        catchUp(stream, request.log);
      },
    );
}

/**
 * The `unleash-updated` frame of the events a stream at `topic` has not had and may see ('' if
 * none); its id is the newest event of the stream's environment among them, a position the stream
 * can resume from.
 */
function updatesFrame(
  topic: StreamTopic,
  events: readonly StoredEvent[],
  current: ServedConfiguration | undefined,
): string {
  const { scope, lastId } = topic;
  const unseen = events.filter(
    (event) => event.id > lastId && event.environment === scope.environment,
  );
  if (unseen.length === 0) return '';
  const visible = eventsFor(scope, unseen, current?.payload);
  if (visible.length === 0) return '';
  return eventFrame({
    event: 'unleash-updated',
    id: unseen.at(-1)!.id,
    data: JSON.stringify({ events: visible }),
  });
}
