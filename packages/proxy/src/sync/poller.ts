import type { ClientFeatures } from '@flags/schemas';
import type { ProxyConfig } from '../config/load.js';
import type { Logger } from '../config/options.js';
import { isHtml, upstreamUrlProblem } from './diagnose.js';
import type { UpstreamClient } from './http-client.js';
import { featuresUrl, upstreamHeaders } from './upstream.js';
import { payloadProblem } from './validate.js';

/** What one poll did; the next delay follows from it. */
export type PollOutcome = 'updated' | 'unchanged' | 'failed' | 'unauthorized';

export interface PollerOptions {
  /** Source of randomness for jitter (tests pin it). */
  readonly random?: () => number;
  /** The client token this poller syncs with; default: the first startup token. */
  readonly token?: string;
  /** The environment it syncs, named in its log lines. */
  readonly environment?: string;
}

/** Where a poller puts what it fetched: an environment's state (`EnvironmentState`), or one of its feeds. */
export interface PayloadTarget {
  /** Holds a payload already (from this poller, a backup or a bootstrap). */
  readonly ready: boolean;
  /** Epoch ms of the last payload change. */
  readonly lastUpdateMs: number;
  update(payload: ClientFeatures): unknown;
}

/** Longest wait between polls after repeated failures, as a multiple of the refresh interval. */
const MAX_BACKOFF_FACTOR = 32;
/** Hard ceiling of any wait (5 minutes). */
const MAX_BACKOFF_MS = 300_000;

/**
 * The sync loop: polls `GET {flagsUrl}/client/features` with `If-None-Match`, compiles each new
 * payload into `state` as a whole new snapshot (request handlers only read it, so a request never
 * sees half an update), and keeps the last good snapshot on every kind of failure.
 * Network errors, 5xx and 429 back off exponentially with jitter (honouring `Retry-After`);
 * 401/403 are logged as a token problem and retried at the slowest pace.
 */
export class Poller {
  private etag: string | undefined;
  private failures = 0;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private running: Promise<PollOutcome> | undefined;
  private readonly url: URL;
  private readonly headers: Record<string, string>;
  private readonly random: () => number;
  private retryAfterMs: number | undefined;
  private readonly environment: string | undefined;
  /** The failure last logged as a warning: its repeats go to debug until a poll succeeds. */
  private lastProblem: string | undefined;
  private firstSync: Promise<void>;
  private resolveFirstSync!: () => void;
  /** Epoch ms of the last successful upstream check (200 or 304); 0 before the first. */
  lastCheckMs = 0;
  /** The upstream refused the token (401/403) at the last poll. */
  refused = false;
  /**
   * Failed polls, counted as Unleash Edge counts a token's (`TokenRefresh.failure_count`): one more
   * per failure (at most 10), one less per success; a refusal is not counted (the token is shown
   * as refused instead).
   */
  failureCount = 0;

  constructor(
    private readonly config: ProxyConfig,
    private readonly state: PayloadTarget,
    private readonly log: Logger,
    private readonly upstream: UpstreamClient,
    options: PollerOptions = {},
  ) {
    this.url = featuresUrl(config);
    this.headers = {
      ...upstreamHeaders(config),
      ...(options.token === undefined ? {} : { [config.upstreamAuthHeader]: options.token }),
      'unleash-interval': String(config.refreshInterval),
    };
    this.random = options.random ?? Math.random;
    this.environment = options.environment;
    this.firstSync = new Promise((resolve) => {
      this.resolveFirstSync = resolve;
    });
  }

  /** Resolves once the proxy holds a snapshot (first successful sync). */
  get ready(): Promise<void> {
    return this.firstSync;
  }

  /** Polls now, then keeps polling until `stop()`. */
  start(): void {
    this.stopped = false;
    void this.tick();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Waits for an in-flight poll (used on shutdown). */
  async idle(): Promise<void> {
    await this.running;
  }

  private async tick(): Promise<void> {
    const outcome = await this.poll();
    if (this.stopped) return;
    const delay = this.nextDelay(outcome);
    this.timer = setTimeout(() => void this.tick(), delay);
    this.timer.unref();
  }

  /** One poll; never throws. */
  poll(): Promise<PollOutcome> {
    this.running = this.fetchOnce()
      .catch((error: unknown) => {
        this.warnOnce(
          { err: describe(error), url: this.url.href },
          'upstream features request failed',
        );
        return 'failed' as const;
      })
      .then((outcome) => {
        if (outcome === 'failed') this.failureCount = Math.min(this.failureCount + 1, 10);
        else if (outcome !== 'unauthorized') this.failureCount = Math.max(this.failureCount - 1, 0);
        return outcome;
      });
    return this.running;
  }

  /** Delay before the next poll: the refresh interval, or a jittered backoff after failures. */
  nextDelay(outcome: PollOutcome): number {
    const interval = this.config.refreshInterval;
    const ceiling = Math.min(interval * MAX_BACKOFF_FACTOR, MAX_BACKOFF_MS);
    if (outcome === 'updated' || outcome === 'unchanged') {
      this.failures = 0;
      return interval;
    }
    if (outcome === 'unauthorized') return Math.max(interval, ceiling * (0.5 + this.random() / 2));
    this.failures = Math.min(this.failures + 1, 16);
    const retryAfter = this.retryAfterMs;
    this.retryAfterMs = undefined;
    return failureDelay(interval, this.failures, this.random, retryAfter);
  }

  private async fetchOnce(): Promise<PollOutcome> {
    const headers: Record<string, string> =
      this.etag === undefined ? this.headers : { ...this.headers, 'if-none-match': this.etag };
    const response = await this.upstream.request(this.url, {
      method: 'GET',
      headers,
      timeoutMs: this.config.upstreamTimeoutMs,
    });
    const status = response.status;
    if (status === 304) {
      await response.dump();
      this.recovered();
      this.lastCheckMs = Date.now();
      return 'unchanged';
    }
    if (status < 200 || status >= 300) {
      await response.dump();
      // A wrong URL answers 401/403/404 whatever the token: said as the URL's problem.
      const urlProblem =
        status === 401 || status === 403 || status === 404
          ? upstreamUrlProblem(this.config, this.url, {
              status,
              html: isHtml(response.headers['content-type']),
            })
          : undefined;
      if (urlProblem !== undefined) {
        this.warnOnce({ status, url: this.url.href }, `${urlProblem}. Retrying.`);
        return 'failed';
      }
      if (status === 401 || status === 403) {
        this.refused = true;
        // At start there is nothing to serve: saying "the last good snapshot" would mislead.
        const meanwhile = this.state.ready
          ? 'Serving the last good snapshot and retrying slowly.'
          : 'Not ready (the flag routes answer 503) until the upstream accepts it; retrying slowly.';
        this.reportOnce(
          'error',
          { status, url: this.url.href },
          `upstream rejected the API token (${status}): check ${this.config.flagsApiTokenWritten} (a client token of the upstream). ${meanwhile}`,
        );
        return 'unauthorized';
      }
      this.retryAfterMs = parseRetryAfter(response.headers['retry-after']);
      this.warnOnce(
        { status, url: this.url.href },
        `upstream answered ${status}; keeping the last good snapshot`,
      );
      return 'failed';
    }
    const text = await response.text();
    let payload: unknown;
    try {
      payload = JSON.parse(text);
    } catch {
      const urlProblem = upstreamUrlProblem(this.config, this.url, {
        status,
        html: isHtml(response.headers['content-type'], text),
      });
      this.warnOnce(
        { url: this.url.href },
        urlProblem === undefined
          ? 'upstream sent invalid JSON; keeping the last good snapshot'
          : `${urlProblem}. Keeping the last good snapshot.`,
      );
      return 'failed';
    }
    const problem = payloadProblem(payload);
    if (problem !== undefined) {
      this.warnOnce(
        { url: this.url.href, problem },
        'upstream payload does not match the client features schema; keeping the last good snapshot',
      );
      return 'failed';
    }
    this.recovered();
    const etag = response.headers.etag;
    this.etag = typeof etag === 'string' && etag !== '' ? etag : undefined;
    const wasReady = this.state.ready;
    this.state.update(payload as ClientFeatures);
    this.lastCheckMs = this.state.lastUpdateMs;
    if (!wasReady) {
      this.log.info(
        { features: (payload as ClientFeatures).features.length },
        'synchronized with upstream; ready',
      );
      this.resolveFirstSync();
    } else {
      this.log.debug(
        { features: (payload as ClientFeatures).features.length },
        'new upstream payload',
      );
    }
    return 'updated';
  }

  /** Logs a failure once per streak (a different failure is logged again). */
  private warnOnce(data: object, message: string): void {
    this.reportOnce('warn', data, message);
  }

  /** Logs a problem at `level` once per streak, its repeats at debug. */
  private reportOnce(level: 'warn' | 'error', data: object, message: string): void {
    const labelled =
      this.environment === undefined ? data : { ...data, environment: this.environment };
    if (message === this.lastProblem) this.log.debug(labelled, message);
    else this.log[level](labelled, message);
    this.lastProblem = message;
  }

  /** After a streak of failures, says once that the upstream answers again. */
  private recovered(): void {
    const wasRefused = this.refused;
    this.refused = false;
    if (this.lastProblem === undefined) return;
    this.lastProblem = undefined;
    const data = { url: this.url.href, environment: this.environment };
    if (wasRefused)
      this.log.info(
        data,
        `upstream accepts the API token again (${this.config.flagsApiTokenWritten}); syncing`,
      );
    else this.log.info(data, 'upstream features request succeeded again');
  }

  /** Marks readiness reached by other means (bootstrap, backup). */
  markReady(): void {
    this.resolveFirstSync();
  }
}

/**
 * The wait after `failures` (≥ 1) failures in a row with base `interval`: exponential, capped, with
 * equal jitter (half fixed, half random, so a fleet of proxies does not retry in step), never
 * shorter than the interval nor than an upstream's `Retry-After` (ms; itself capped).
 * The poller's retries and the upstream stream's reconnections both wait this long.
 */
export function failureDelay(
  interval: number,
  failures: number,
  random: () => number,
  retryAfterMs?: number,
): number {
  const ceiling = Math.min(interval * MAX_BACKOFF_FACTOR, MAX_BACKOFF_MS);
  const backoff = Math.min(interval * 2 ** Math.min(failures, 16), ceiling);
  const jittered = backoff / 2 + (random() * backoff) / 2;
  return Math.max(interval, jittered, Math.min(retryAfterMs ?? 0, MAX_BACKOFF_MS));
}

export function parseRetryAfter(value: string | string[] | undefined): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined) return undefined;
  if (/^\d+$/.test(text.trim())) return Number(text) * 1000;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

export function describe(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return typeof code === 'string' ? `${code}: ${error.message}` : error.message;
  }
  return String(error);
}
