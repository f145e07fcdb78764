import type { DeltaEvent } from '@flags/schemas';
import { createParser } from 'eventsource-parser';
import type { UpstreamClient } from './http-client.js';
import { describe, parseRetryAfter } from './poller.js';
import { deltaEventsOf } from './validate.js';

/** Statuses by which an upstream says it has no event stream: polling for good. */
const UNSUPPORTED_STATUSES = new Set([404, 405, 501]);
/**
 * Statuses after which streaming is left for a while (polling meanwhile): a token problem (the
 * poller then reports it as it always does) or, 429, "too many streaming clients" (Unleash's hint).
 */
const REFUSED_STATUSES = new Set([401, 403, 429]);
/**
 * A stream that says nothing, not even a keep-alive comment, for this long is taken for dead
 * (upstreams send one every 30 s; the Node SDK waits 60 s too).
 */
export const STREAM_IDLE_TIMEOUT_MS = 60_000;
/** The largest event the parser buffers (a hydration of a big configuration). */
const MAX_EVENT_BYTES = 64 * 1024 * 1024;

/** How one streaming connection ended. */
export type StreamEnd =
  /** The upstream has no event stream (404/405/501, or not `text/event-stream`). */
  | { readonly kind: 'unsupported'; readonly reason: string }
  /**
   * Refused for now (401/403/429, `status`) or sent back to polling (`fetch-mode: polling`, no
   * `status`).
   */
  | {
      readonly kind: 'polling';
      readonly reason: string;
      readonly retryAfterMs?: number;
      readonly status?: number;
    }
  /**
   * Failed or dropped (network, 5xx, closed, silent, or an event that could not be applied);
   * `rehydrate`: the next connection must not resume (an event was refused).
   */
  | {
      readonly kind: 'dropped';
      readonly reason: string;
      readonly rehydrate: boolean;
      readonly retryAfterMs?: number;
      /** The upstream's status when it answered with an error instead of a stream. */
      readonly status?: number;
    }
  /** Closed by `cancel()`. */
  | { readonly kind: 'cancelled' };

/** What the connection's owner does with what arrives. */
export interface StreamHandlers {
  /** The upstream accepted the stream (before any event is read). */
  opened(): Promise<void>;
  /**
   * Validated events of one `unleash-connected` / `unleash-updated` message, with its `id`;
   * returns a problem to refuse them (the connection then ends, to rehydrate).
   */
  events(events: readonly DeltaEvent[], id: string | undefined): string | undefined;
  /** Anything arrived (an event or a keep-alive comment): the upstream is alive. */
  alive(): void;
}

export interface StreamRequest {
  readonly url: URL;
  readonly headers: Record<string, string>;
  /** `Last-Event-ID` to resume after; `undefined`: a fresh hydration. */
  readonly lastEventId: string | undefined;
  /** Bounds connecting and the response headers. */
  readonly timeoutMs: number;
}

/**
 * One connection to the upstream's `GET /client/streaming` (Server-Sent Events, parsed by
 * `eventsource-parser` over the proxy's own upstream client, so TLS, forward proxy and custom
 * headers are the same as for polling): classifies the answer, validates each message's events
 * against `@flags/schemas` and hands them over, until the stream ends or `cancel()`.
 */
export class UpstreamStream {
  private cancelResponse: (() => void) | undefined;
  private cancelled = false;

  constructor(private readonly upstream: UpstreamClient) {}

  /** Ends the connection; `open()` then resolves with `cancelled`. */
  cancel(): void {
    this.cancelled = true;
    this.cancelResponse?.();
  }

  /** Connects and reads until the stream ends; never throws. */
  async open(request: StreamRequest, handlers: StreamHandlers): Promise<StreamEnd> {
    try {
      return await this.read(request, handlers);
    } catch (error) {
      if (this.cancelled) return { kind: 'cancelled' };
      return { kind: 'dropped', reason: describe(error), rehydrate: false };
    }
  }

  private async read(request: StreamRequest, handlers: StreamHandlers): Promise<StreamEnd> {
    const headers: Record<string, string> = {
      ...request.headers,
      accept: 'text/event-stream',
      'cache-control': 'no-cache',
    };
    if (request.lastEventId !== undefined) headers['last-event-id'] = request.lastEventId;
    const response = await this.upstream.request(request.url, {
      method: 'GET',
      headers,
      timeoutMs: request.timeoutMs,
      stream: true,
    });
    const status = response.status;
    const contentType = String(response.headers['content-type'] ?? '');
    const retryAfterMs = parseRetryAfter(response.headers['retry-after']);
    if (status < 200 || status >= 300 || !contentType.startsWith('text/event-stream')) {
      response.cancel();
      if (UNSUPPORTED_STATUSES.has(status))
        return { kind: 'unsupported', reason: `the upstream answered ${status}` };
      if (REFUSED_STATUSES.has(status))
        return {
          kind: 'polling',
          reason: `the upstream answered ${status}`,
          status,
          ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
        };
      if (status >= 200 && status < 300)
        return {
          kind: 'unsupported',
          reason: `the upstream answered ${status} with ${contentType || 'no content type'}, not an event stream`,
        };
      return {
        kind: 'dropped',
        reason: `the upstream answered ${status}`,
        rehydrate: false,
        status,
        ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
      };
    }
    this.cancelResponse = () => response.cancel();
    if (this.cancelled) response.cancel();
    await handlers.opened();

    let end: StreamEnd | undefined;
    const finish = (ending: StreamEnd) => {
      end ??= ending;
      response.cancel();
    };
    const parser = createParser({
      maxBufferSize: MAX_EVENT_BYTES,
      onComment: () => handlers.alive(),
      // Unknown fields and bad `retry:` values are ignored, as the SSE specification says; an event
      // too large to buffer cannot be applied.
      onError: (error) => {
        if (error.type === 'max-buffer-size-exceeded')
          finish({ kind: 'dropped', reason: error.message, rehydrate: true });
      },
      onEvent: (message) => {
        if (end !== undefined) return;
        handlers.alive();
        if (message.event === 'fetch-mode') {
          if (message.data.trim() === 'polling')
            finish({ kind: 'polling', reason: 'the upstream sent fetch-mode: polling' });
          return;
        }
        if (message.event !== 'unleash-connected' && message.event !== 'unleash-updated') return;
        const events = parseEvents(message.data);
        const problem = typeof events === 'string' ? events : handlers.events(events, message.id);
        if (problem !== undefined)
          finish({
            kind: 'dropped',
            reason: `${message.event} event refused: ${problem}`,
            rehydrate: true,
          });
      },
    });

    let idle: NodeJS.Timeout | undefined;
    const watch = () => {
      clearTimeout(idle);
      idle = setTimeout(
        () =>
          finish({
            kind: 'dropped',
            reason: `nothing from the upstream for ${STREAM_IDLE_TIMEOUT_MS} ms`,
            rehydrate: false,
          }),
        STREAM_IDLE_TIMEOUT_MS,
      );
      idle.unref();
    };
    try {
      watch();
      for await (const chunk of response.chunks()) {
        watch();
        parser.feed(chunk);
        if (end !== undefined) break;
      }
    } catch (error) {
      if (end === undefined && !this.cancelled)
        end = { kind: 'dropped', reason: describe(error), rehydrate: false };
    } finally {
      clearTimeout(idle);
      this.cancelResponse = undefined;
    }
    if (this.cancelled) return { kind: 'cancelled' };
    return end ?? { kind: 'dropped', reason: 'the upstream closed the stream', rehydrate: false };
  }
}

/** The events of a message's data (`{ events: [...] }`), or what is wrong with it. */
function parseEvents(data: string): DeltaEvent[] | string {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    return 'invalid JSON';
  }
  return deltaEventsOf(value);
}
