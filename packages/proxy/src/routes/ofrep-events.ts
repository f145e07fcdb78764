import { errorSchema, ofrepStreamEventSchema } from '@flags/schemas';
import {
  type CompiledState,
  type EventStream,
  EventStreamHub,
  errorResponses,
  eventFrame,
  OFREP_TAG,
  type StreamRefusal,
} from '@flags/serving';
import type { FastifyInstance } from 'fastify';
import type { Access } from '../auth/access.js';
import type { EventCredentials } from '../auth/event-credential.js';
import { ProxyError } from '../errors.js';
import type { StateRevisions } from '../http/context-etag.js';
import type { Environment, Environments } from '../sync/environments.js';

/** The path of the event streams, under `proxyBasePath`. */
export const OFREP_EVENTS_PATH = '/ofrep/v1/events';

/**
 * One open stream's subject: whose flags it follows, the key its credential was issued to, and the
 * revision it last announced.
 */
interface Listener {
  readonly key: string;
  readonly environment: Environment;
  readonly projects: readonly string[];
  revision: string;
}

/** The `eventStreams` of one key's answers from one snapshot, within one issuing window. */
interface IssuedStreams {
  readonly window: number;
  readonly environment: Environment;
  readonly json: string;
}

/** Whether `key` still grants frontend access to `environment` and `projects` (`Authorizer.holds`). */
export type KeyHolds = (
  key: string,
  environment: Environment,
  projects: readonly string[],
) => boolean;

export interface OfrepEventsOptions {
  readonly environments: Environments;
  readonly holds: KeyHolds;
  readonly credentials: EventCredentials;
  readonly revisions: StateRevisions;
  /** `proxyBasePath`: the stream URL's path starts with it. */
  readonly basePath: string;
  readonly maxStreams: number;
  /** Streams one client address may hold (`ofrepEventStreamsMaxPerAddress`; 0: no own cap). */
  readonly maxStreamsPerAddress: number;
  /** Streams of credentials of one key at most (`ofrepEventStreamsMaxPerKey`; 0: no own cap). */
  readonly maxStreamsPerKey: number;
  readonly keepAliveMs: number;
  /** `inactivityDelaySec` announced with the stream. */
  readonly inactivityDelaySec: number;
}

/** `Retry-After` of a refused stream, s (providers retry with their own backoff too). */
const RETRY_AFTER_SECONDS = '5';

/** What a 429 says of the cap that was reached. */
const REFUSALS: Readonly<Record<StreamRefusal, string>> = {
  full: 'As many OFREP event streams are open as this proxy accepts (`ofrepEventStreamsMax`).',
  address:
    'This client address holds as many OFREP event streams as one address may (`ofrepEventStreamsMaxPerAddress`).',
  key: 'The streams of this key hold as many OFREP event streams as one key may (`ofrepEventStreamsMaxPerKey`).',
};

/** `event: message` with `{ type: 'refetchEvaluation', etag }` and the revision as its `id`. */
function refetchFrame(revision: string): string {
  return eventFrame({
    event: 'message',
    id: revision,
    data: JSON.stringify({ type: 'refetchEvaluation', etag: revision }),
  });
}

/**
 * OFREP event streams (ADR-0008): bulk answers point static-context providers at
 * `GET /ofrep/v1/events?token=<credential>`, which sends `refetchEvaluation` whenever the flags
 * of the credential's environment and projects change. One listener per environment fans each
 * change out to its streams; a stream whose scope's flags did not change hears nothing.
 */
export class OfrepEvents {
  readonly hub: EventStreamHub<Listener>;
  /** `eventStreams` JSON made for each snapshot, by key. */
  private readonly issued = new WeakMap<CompiledState, Map<string, IssuedStreams>>();
  /** Environments whose state this instance listens to (`EnvironmentState.onUpdate` has no removal). */
  private readonly watched = new WeakSet<Environment>();

  constructor(private readonly options: OfrepEventsOptions) {
    this.hub = new EventStreamHub({
      maxStreams: options.maxStreams,
      maxStreamsPerAddress: options.maxStreamsPerAddress,
      maxStreamsPerKey: options.maxStreamsPerKey,
      keepAliveMs: options.keepAliveMs,
    });
  }

  /**
   * The `eventStreams` JSON of a bulk answer to `key` (`access`, answered from `served`). The
   * credential names the answer's revision, so a stream opened after a change catches up. Made
   * once per snapshot, key and issuing window (the credential is the same within one).
   */
  eventStreamsJson(key: string, access: Access, served: CompiledState, nowMs: number): string {
    const window = this.options.credentials.window(nowMs);
    let byKey = this.issued.get(served);
    if (byKey === undefined) {
      byKey = new Map();
      this.issued.set(served, byKey);
    }
    const kept = byKey.get(key);
    if (kept !== undefined && kept.window === window && kept.environment === access.environment)
      return kept.json;
    const credential = this.options.credentials.issue(
      key,
      {
        environment: access.environment.name,
        projects: access.projects,
        revision: this.options.revisions.of(served),
      },
      nowMs,
    );
    const json = JSON.stringify([
      {
        type: 'sse',
        endpoint: {
          requestUri: `${this.options.basePath}${OFREP_EVENTS_PATH}?token=${credential}`,
        },
        inactivityDelaySec: this.options.inactivityDelaySec,
      },
    ]);
    byKey.set(key, { window, environment: access.environment, json });
    return json;
  }

  /**
   * Ends the streams whose key no longer grants what they follow (a token revoked or narrowed
   * upstream, an environment no longer served). Their providers reconnect, are refused, and
   * evaluate again with the key, which the evaluation routes answer as they now do.
   */
  closeRevoked(): number {
    const { holds } = this.options;
    return this.hub.closeWhere(
      (listener) => !holds(listener.key, listener.environment, listener.projects),
    );
  }

  private watch(environment: Environment): void {
    if (this.watched.has(environment)) return;
    this.watched.add(environment);
    environment.state.onUpdate(() => this.changed(environment));
  }

  /** Tells every stream of `environment` whose scope's flags changed to evaluate again. */
  private changed(environment: Environment): void {
    const revisions = new Map<string, string | undefined>();
    for (const stream of this.hub) {
      const listener = stream.topic;
      if (listener.environment !== environment) continue;
      const scope = listener.projects.join('\u0000');
      let revision = revisions.get(scope);
      if (!revisions.has(scope)) {
        const compiled = environment.state.forProjects(listener.projects);
        revision = compiled === undefined ? undefined : this.options.revisions.of(compiled);
        revisions.set(scope, revision);
      }
      if (revision === undefined || revision === listener.revision) continue;
      listener.revision = revision;
      stream.send(refetchFrame(revision));
    }
  }

  /** Registers the stream route on `app` and ends every stream when the app closes. */
  routes(app: FastifyInstance): void {
    const events = this;
    app.addHook('preClose', async () => this.hub.closeAll());
    app.get<{ Querystring: { token?: string } }>(
      OFREP_EVENTS_PATH,
      {
        schema: {
          summary:
            'OFREP: Server-Sent Events telling a provider to evaluate again (`event: message`, `data: {"type":"refetchEvaluation","etag"}`), with keep-alive comments. The URL comes from a bulk answer’s `eventStreams`.',
          tags: [OFREP_TAG],
          querystring: {
            type: 'object',
            properties: {
              token: {
                type: 'string',
                description: 'The credential from `eventStreams` (short-lived, never the key).',
              },
            },
          },
          response: {
            200: {
              description: 'The event stream (`text/event-stream`).',
              content: { 'text/event-stream': { schema: ofrepStreamEventSchema } },
            },
            401: {
              description:
                'The credential is missing, forged, expired, of a key that no longer grants its flags, or of an environment not served here.',
              ...errorSchema,
            },
            429: {
              description:
                'As many streams are open as `ofrepEventStreamsMax` allows, or as the caller’s address (`ofrepEventStreamsMaxPerAddress`) or key (`ofrepEventStreamsMaxPerKey`) may hold.',
              ...errorSchema,
            },
            ...errorResponses(503),
          },
        },
      },
      async function ofrepStreamEvents(request, reply) {
        const check = events.options.credentials.check(request.query.token);
        if (!check.ok) {
          throw new ProxyError('INVALID_EVENT_CREDENTIAL', [
            check.reason === 'expired'
              ? 'The event-stream credential has expired; evaluate again for a new one.'
              : 'The event-stream credential is not valid at this proxy.',
          ]);
        }
        const scope = check.scope;
        const environment = events.options.environments.get(scope.environment);
        if (environment === undefined) {
          throw new ProxyError('INVALID_EVENT_CREDENTIAL', [
            `The environment "${scope.environment}" is not served by this proxy.`,
          ]);
        }
        // A credential outlives nothing: the key it was issued to must still grant its scope.
        if (!events.options.holds(check.key, environment, scope.projects)) {
          throw new ProxyError('INVALID_EVENT_CREDENTIAL', [
            'The key this event-stream credential was issued to no longer grants its flags here.',
          ]);
        }
        const compiled = environment.state.forProjects(scope.projects);
        if (compiled === undefined) throw new ProxyError('ENVIRONMENT_NOT_READY');
        const current = events.options.revisions.of(compiled);
        const listener: Listener = {
          key: check.key,
          environment,
          projects: scope.projects,
          revision: current,
        };
        // The key, not the credential: every credential of a key is the key's share.
        const holder = { address: request.ip, key: check.key };
        const refusal = events.hub.refusal(holder);
        if (refusal !== undefined) {
          void reply.header('retry-after', RETRY_AFTER_SECONDS);
          throw new ProxyError('TOO_MANY_STREAMS', [REFUSALS[refusal]]);
        }
        // Not refused (checked above, and nothing ran since): the stream opens.
        const stream = events.hub.open(reply, listener, holder) as EventStream<Listener>;
        events.watch(environment);
        // What the client last heard (a reconnect), or the revision its bulk answer was made
        // from: a change in between is announced at once.
        const lastEventId = request.headers['last-event-id'];
        const known = typeof lastEventId === 'string' ? lastEventId : scope.revision;
        if (known !== current) stream.send(refetchFrame(current));
        return reply;
      },
    );
  }
}
