import { errorSchema } from '@flags/schemas';
import {
  type EventStream,
  type EventStreamHub,
  errorResponses,
  eventFrame,
  eventIdOf,
  SERVER_SIDE_TAG,
  type StreamRefusal,
  textResponse,
} from '@flags/serving';
import type { FastifyInstance } from 'fastify';
import type { Access, AuthorizeHook as Authenticate } from '../auth/access.js';
import { ProxyError } from '../errors.js';
import type { ChangeLog, ChangeLogs, Scope } from '../streaming/change-log.js';

export interface ClientStreamingRouteOptions {
  /** `/api/client/streaming`. */
  readonly path: string;
  /** Client tokens only, as `/api/client/features`. */
  readonly authenticate: Authenticate;
  /** `Vary` on the key header (`KeyedAnswerHeaders.serverSide`). */
  readonly headers: Readonly<Record<string, string>>;
  readonly logs: ChangeLogs;
  /** The app's open streams; the app closes them on shutdown and when their key stops holding. */
  readonly hub: EventStreamHub<ClientStreamTopic>;
}

/** What one stream reads, and the access it was opened with. */
export interface ClientStreamTopic {
  readonly scope: Scope;
  readonly access: Access;
}

/** The SSE event names the Node SDK listens for (`unleash-client` `StreamingFetcher`). */
const CONNECTED = 'unleash-connected';
const UPDATED = 'unleash-updated';
/** `Retry-After` of a refused stream, s. */
const RETRY_AFTER_SECONDS = '60';

/** What a 429 says of the cap that was reached. */
const REFUSALS: Readonly<Record<StreamRefusal, string>> = {
  full: 'As many streams are open as this proxy accepts (`streamingMaxConnections`); poll `/api/client/delta` or `/api/client/features` instead.',
  address:
    'This client address holds as many streams as one address may (`streamingMaxConnectionsPerAddress`).',
  key: 'This token holds as many streams as one token may (`streamingMaxConnectionsPerToken`).',
};

/**
 * Sends each change of a log to the streams reading it: the events are filtered and rendered once
 * per scope, and the same text is written to every stream of that scope.
 */
function fanOut(
  hub: EventStreamHub<ClientStreamTopic>,
  log: ChangeLog,
  after: number,
  latest: number,
): void {
  const frames = new Map<Scope, string | undefined>();
  // A change larger than the retained window lost its first events: hydrate instead.
  const whole = !log.holds(after);
  for (const stream of hub) {
    const scope = stream.topic.scope;
    if (scope.log !== log) continue;
    let frame = frames.get(scope);
    if (frame === undefined && !frames.has(scope)) {
      if (whole) frame = eventFrame({ event: UPDATED, id: latest, data: log.hydrationJson(scope) });
      else {
        const events = log.eventsAfter(after, scope, latest);
        // Nothing of this scope changed: nothing is sent (its clients resume from their last id).
        frame =
          events.length === 0
            ? undefined
            : eventFrame({ event: UPDATED, id: latest, data: JSON.stringify({ events }) });
      }
      frames.set(scope, frame);
    }
    if (frame !== undefined) stream.send(frame);
  }
}

/**
 * `GET <path>`: a Server-Sent Events stream of the caller's environment and projects, as the Node
 * SDK's `experimentalMode: { type: 'streaming' }` and Unleash Edge read it: `unleash-connected`
 * with a hydration, then `unleash-updated` with the delta events of each change, `id:` the latest
 * event id. A reconnect with a `Last-Event-ID` this proxy still holds gets the events since instead
 * of a hydration. Beyond the hub's bound the answer is 429 (the SDK then polls).
 */
export function clientStreamingRoutes(
  app: FastifyInstance,
  options: ClientStreamingRouteOptions,
  done: () => void,
): void {
  const { path, authenticate, headers, logs, hub } = options;
  logs.onChange((log, after, latest) => fanOut(hub, log, after, latest));
  // The `unleash-connected` frame of each scope at its log's latest id, rendered once and written
  // to every stream that opens meanwhile: a hydration frame is as large as the payload, and
  // rendering it per stream made garbage in proportion to the streams opened.
  const connected = new WeakMap<Scope, { readonly id: number; readonly frame: string }>();
  const connectedFrame = (log: ChangeLog, scope: Scope): string => {
    const kept = connected.get(scope);
    if (kept !== undefined && kept.id === log.latest) return kept.frame;
    const frame = eventFrame({ event: CONNECTED, id: log.latest, data: log.hydrationJson(scope) });
    connected.set(scope, { id: log.latest, frame });
    return frame;
  };
  app.get(
    path,
    {
      schema: {
        summary: 'A stream of configuration changes (Server-Sent Events), for server-side SDKs.',
        description:
          'Events: `unleash-connected` (data `{"events":[hydration]}`), then `unleash-updated` (data `{"events":[…]}`) per change; `id:` is the latest event id, sent back as `Last-Event-ID` on reconnect to resume without a hydration. A `: keep-alive` comment every `streamingKeepAliveMs`.',
        tags: [SERVER_SIDE_TAG],
        response: {
          200: textResponse('The event stream.', 'text/event-stream'),
          ...errorResponses(401, 403, 503),
          429: {
            description:
              'As many streams are open as `streamingMaxConnections` allows, or as the caller’s address (`streamingMaxConnectionsPerAddress`) or token (`streamingMaxConnectionsPerToken`) may hold; poll `/api/client/delta` or `/api/client/features` instead.',
            ...errorSchema,
          },
        },
      },
      onRequest: authenticate,
      // A HEAD would take a stream slot and hold it, bodiless, until the client leaves.
      exposeHeadRoute: false,
    },
    function clientGetStreaming(request, reply) {
      const { access } = request;
      const holder = { address: request.ip, key: access.key };
      const refusal = hub.refusal(holder);
      if (refusal !== undefined) {
        // As the other 429s: when to try again (the Node SDK polls meanwhile, and its next stream
        // waits for a restart or a mode change anyway).
        reply.header('retry-after', RETRY_AFTER_SECONDS);
        throw new ProxyError('TOO_MANY_STREAMS', [REFUSALS[refusal]]);
      }
      const log = logs.of(access.environment.state);
      const scope = log.scope(access.projects);
      reply.headers(headers);
      // Not refused (checked above, and nothing ran since): the stream opens.
      const stream = hub.open(reply, { scope, access }, holder) as EventStream<ClientStreamTopic>;
      const since = eventIdOf(request.headers['last-event-id']);
      const latest = log.latest;
      if (since === undefined || !log.holds(since)) stream.send(connectedFrame(log, scope));
      else if (since < latest) {
        const events = log.eventsAfter(since, scope);
        if (events.length > 0)
          stream.send({ event: UPDATED, id: latest, data: JSON.stringify({ events }) });
      }
      return reply;
    },
  );
  done();
}
