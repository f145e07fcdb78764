import { applyDelta } from '@flags/engine';
import type { ClientFeatures, DeltaEvent } from '@flags/schemas';
import type { ProxyConfig } from '../config/load.js';
import type { Logger } from '../config/options.js';
import type { UpstreamClient } from './http-client.js';
import { failureDelay, type PayloadTarget, Poller, type PollOutcome } from './poller.js';
import { streamingUrl, upstreamHeaders } from './upstream.js';
import { type StreamEnd, UpstreamStream } from './upstream-stream.js';

/** Failed connections in a row (none delivering an event) after which the feed polls for a while. */
export /** The base delay of stream reconnections (backing off from there as polls do). */
const STREAM_RECONNECT_MS = 500;
const STREAM_MAX_FAILURES = 5;
/**
 * How long a feed polls before it tries streaming again, after the stream kept failing, was
 * refused (401/403/429) or the upstream sent `fetch-mode: polling`: this many refresh intervals…
 */
const STREAM_RETRY_INTERVALS = 60;
/** …and at most this long (10 minutes). */
const MAX_STREAM_RETRY_MS = 600_000;
/**
 * How often a feed whose upstream does not stream asks again: every this many refresh intervals
 * (10 minutes at the default 5 s, 30 at Edge's 15 s)…
 */
const STREAM_REPROBE_INTERVALS = 120;
/** …and at least once an hour. */
const MAX_STREAM_REPROBE_MS = 3_600_000;

export interface FeedSyncOptions {
  /** The client token this feed syncs with; default: the first startup token. */
  readonly token?: string;
  /** The environment it syncs, named in its log lines. */
  readonly environment?: string;
  /** Source of randomness for jitter (tests pin it). */
  readonly random?: () => number;
}

/**
 * How one feed (a client token of an environment) stays in sync with the upstream: by its event
 * stream (`GET /client/streaming`) while the upstream offers one and `upstreamStreaming` is
 * `auto`, else by polling (`Poller`, which also takes over whenever streaming fails):
 * - a hydration replaces the feed's payload, later events are applied to it (`applyDelta`) and the
 *   result goes to the feed as a poll's payload would (the environment recompiles its snapshot;
 *   readiness, backups and sync times follow as for a poll);
 * - a dropped stream reconnects with `Last-Event-ID` after the poller's backoff; an event that
 *   cannot be applied is logged, never applied, and the next connection asks for a hydration;
 * - 404/405/501, an answer that is no event stream, or any other error status before the feed has
 *   ever streamed (a chained relay without streaming, such as an open-source Unleash Edge, answers
 *   500): the upstream does not stream. Polling, said once at info level, and streaming is asked
 *   for again every `STREAM_REPROBE_INTERVALS` refresh intervals (at most hourly), quietly;
 * - 401/403/429, `fetch-mode: polling`, or `STREAM_MAX_FAILURES` failed connections in a row of a
 *   feed that has streamed: polling, with a warning, and streaming is tried again after
 *   `STREAM_RETRY_INTERVALS` refresh intervals.
 */
export class FeedSync {
  /** The poller of this feed; runs while the feed does not stream. */
  readonly poller: Poller;
  private readonly upstream: UpstreamClient;
  /** The connection open or being opened; `undefined` between connections. */
  private stream: UpstreamStream | undefined;
  private readonly url: URL;
  private readonly headers: Record<string, string>;
  private readonly random: () => number;
  private readonly environment: string | undefined;
  private started = false;
  private readonly streaming: boolean;
  /** The poller runs (started once per spell of polling, never twice). */
  private polling = false;
  /** What the stream has built so far (`undefined` until a hydration). */
  private current: ClientFeatures | undefined;
  private lastEventId: string | undefined;
  private failures = 0;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  /** The last connection problem logged as a warning: repeats go to debug. */
  private lastProblem: string | undefined;
  /** A connection of this feed has opened an event stream (the upstream does stream). */
  private streamedOnce = false;
  /** Polling because the upstream does not stream, said once (`notStreaming`). */
  private noStreamSaid = false;
  private streamCheckMs = 0;

  constructor(
    private readonly config: ProxyConfig,
    private readonly target: PayloadTarget,
    private readonly log: Logger,
    upstream: UpstreamClient,
    options: FeedSyncOptions = {},
  ) {
    this.poller = new Poller(config, target, log, upstream, options);
    this.upstream = upstream;
    this.url = streamingUrl(config);
    this.headers = {
      ...upstreamHeaders(config),
      ...(options.token === undefined ? {} : { [config.upstreamAuthHeader]: options.token }),
    };
    this.random = options.random ?? Math.random;
    this.environment = options.environment;
    // The stream carries no `project`/`namePrefix`/`tag` filters: a filtered feed polls.
    this.streaming = config.upstreamStreaming === 'auto' && !filtered(config);
  }

  /** Resolves once the feed's environment holds a snapshot (first sync, backup or bootstrap). */
  get ready(): Promise<void> {
    return this.poller.ready;
  }

  /** Epoch ms of the last sign of the upstream (a poll's 200/304, a stream's event or keep-alive). */
  get lastCheckMs(): number {
    return Math.max(this.poller.lastCheckMs, this.streamCheckMs);
  }

  /** The upstream refused the token (401/403) at the last poll (a refused stream falls back to polling). */
  get refused(): boolean {
    return this.poller.refused;
  }

  /**
   * Failures in a row, as Unleash Edge counts a token's (`failure_count`): the poller's while
   * polling, else the stream's failed connections.
   */
  get failureCount(): number {
    return this.mode === 'polling' ? this.poller.failureCount : Math.min(this.failures, 10);
  }

  /** `polling` while the poller runs, else `streaming` (streaming, or connecting to stream). */
  get mode(): 'streaming' | 'polling' {
    return this.polling || this.config.upstreamStreaming === 'polling' ? 'polling' : 'streaming';
  }

  start(): void {
    this.started = true;
    if (this.streaming) this.connectSoon(0);
    else this.startPolling();
  }

  stop(): void {
    this.started = false;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.stream?.cancel();
    this.polling = false;
    this.poller.stop();
  }

  /** Waits for an in-flight poll or stream (used on shutdown). */
  async idle(): Promise<void> {
    await Promise.all([this.poller.idle(), this.running]);
  }

  /** One poll now (tests; the poller's own schedule is unchanged). */
  poll(): Promise<PollOutcome> {
    return this.poller.poll();
  }

  /** Marks readiness reached by other means (bootstrap, backup). */
  markReady(): void {
    this.poller.markReady();
  }

  private connectSoon(delayMs: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.running = this.connect();
    }, delayMs);
    this.timer.unref();
  }

  /** One connection, then what its end calls for. */
  private async connect(): Promise<void> {
    if (!this.started) return;
    let delivered = false;
    let opened = false;
    const stream = new UpstreamStream(this.upstream);
    this.stream = stream;
    const end = await stream.open(
      {
        url: this.url,
        headers: this.headers,
        lastEventId: this.lastEventId,
        timeoutMs: this.config.upstreamTimeoutMs,
      },
      {
        opened: async () => {
          opened = true;
          if (this.noStreamSaid) {
            this.noStreamSaid = false;
            this.log.info(
              { url: this.url.href, environment: this.environment },
              'upstream streams now; syncing by streaming',
            );
          }
          this.streamedOnce = true;
          // A poll answered before the stream's hydration must not land after it.
          this.polling = false;
          this.poller.stop();
          await this.poller.idle();
        },
        alive: () => {
          this.streamCheckMs = Date.now();
        },
        events: (events, id) => {
          const problem = this.apply(events);
          if (problem !== undefined) return problem;
          if (id !== undefined && id !== '') this.lastEventId = id;
          if (!delivered) this.recovered();
          delivered = true;
          return undefined;
        },
      },
    );
    this.stream = undefined;
    this.ended(end, delivered, opened);
  }

  /** Applies one message's events to the stream's payload and hands the result to the feed. */
  private apply(events: readonly DeltaEvent[]): string | undefined {
    const hydrates = events.some((event) => event.type === 'hydration');
    if (this.current === undefined && !hydrates) return 'updates before any hydration';
    if (events.length === 0) return undefined;
    const next = applyDelta(this.current, events);
    this.current = next;
    const wasReady = this.target.ready;
    this.target.update(next);
    if (!wasReady) {
      this.log.info(
        { features: next.features.length, environment: this.environment },
        'synchronized with upstream by streaming; ready',
      );
      this.poller.markReady();
    } else {
      this.log.debug(
        { events: events.length, environment: this.environment },
        'upstream delta applied',
      );
    }
    return undefined;
  }

  private ended(end: StreamEnd, delivered: boolean, opened: boolean): void {
    if (!this.started || end.kind === 'cancelled') return;
    if (
      end.kind === 'unsupported' ||
      (end.kind === 'dropped' && end.status !== undefined && !this.streamedOnce)
    ) {
      this.notStreaming(end.reason);
      return;
    }
    switch (end.kind) {
      case 'polling':
        this.pollForAWhile(end.reason, end.retryAfterMs, end.status);
        return;
      case 'dropped': {
        if (end.rehydrate) {
          this.current = undefined;
          this.lastEventId = undefined;
        }
        // A connection that delivered and then dropped cleanly is no failure; one refusing an
        // event is, so an upstream that keeps sending bad events ends up polled.
        if (delivered && !end.rehydrate) this.failures = 0;
        else this.failures += 1;
        if (this.failures >= STREAM_MAX_FAILURES)
          this.pollForAWhile(
            `${STREAM_MAX_FAILURES} failed stream connections in a row, the last: ${end.reason}`,
          );
        else {
          this.warnOnce(end.reason, opened);
          // The first retry comes within about a second, whatever the poll interval: a stream
          // that drops is usually back at once (a restart, a load balancer's recycled connection).
          const delay = failureDelay(
            Math.min(this.config.refreshInterval, STREAM_RECONNECT_MS),
            Math.max(1, this.failures),
            this.random,
            end.retryAfterMs,
          );
          this.connectSoon(delay);
        }
      }
    }
  }

  /**
   * The upstream does not stream: polls, says so once (info: an upstream without streaming is no
   * fault), and asks for a stream again rarely, without a word when it still has none.
   */
  private notStreaming(reason: string): void {
    const retryMs = Math.min(
      this.config.refreshInterval * STREAM_REPROBE_INTERVALS,
      MAX_STREAM_REPROBE_MS,
    );
    const data = { url: this.url.href, environment: this.environment, reason, retryInMs: retryMs };
    const message = `upstream does not stream (${reason}); syncing by polling, asking again every ${Math.round(retryMs / 1000)} s`;
    if (this.noStreamSaid) this.log.debug(data, message);
    else this.log.info(data, message);
    this.noStreamSaid = true;
    this.current = undefined;
    this.lastEventId = undefined;
    this.startPolling();
    this.connectSoon(retryMs);
  }

  /**
   * Polls until streaming is tried again; the stream resumes with a fresh hydration. A 401/403 is
   * said at debug level only: the features request meets the same refusal and its message names
   * the fix (the token, or a URL without `/api`), where a warning about streaming would point at
   * the network instead.
   */
  private pollForAWhile(reason: string, retryAfterMs = 0, status?: number): void {
    const retryMs = Math.max(
      retryAfterMs,
      Math.min(this.config.refreshInterval * STREAM_RETRY_INTERVALS, MAX_STREAM_RETRY_MS),
    );
    const data = { url: this.url.href, environment: this.environment, reason, retryInMs: retryMs };
    const message = `upstream stream unavailable (${reason}); syncing by polling, streaming again in ${Math.round(retryMs / 1000)} s`;
    if (status === 401 || status === 403) this.log.debug(data, message);
    else this.log.warn(data, message);
    this.current = undefined;
    this.lastEventId = undefined;
    this.lastProblem = undefined;
    this.failures = 0;
    this.startPolling();
    this.connectSoon(retryMs);
  }

  private startPolling(): void {
    if (!this.started || this.polling) return;
    this.polling = true;
    this.poller.start();
  }

  /**
   * Logs a connection problem once per streak (a different one is logged again): a stream that
   * dropped, or one that never opened (the upstream down or unreachable), said as such.
   */
  private warnOnce(reason: string, opened: boolean): void {
    const data = { url: this.url.href, environment: this.environment, reason };
    const message = opened
      ? `upstream stream dropped (${reason}); reconnecting`
      : `could not connect to the upstream's stream (${reason}); trying again`;
    if (reason === this.lastProblem) this.log.debug(data, message);
    else this.log.warn(data, message);
    this.lastProblem = reason;
  }

  private recovered(): void {
    if (this.lastProblem === undefined) return;
    this.lastProblem = undefined;
    this.log.info(
      { url: this.url.href, environment: this.environment },
      'upstream stream works again',
    );
  }
}

/** Whether the feed's features are filtered (`projectName`, `namePrefix`, `tags`). */
function filtered(config: ProxyConfig): boolean {
  return (
    config.projectName !== undefined || config.namePrefix !== undefined || config.tags.length > 0
  );
}
