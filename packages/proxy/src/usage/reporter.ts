import type { ProxyConfig } from '../config/load.js';
import type { Logger } from '../config/options.js';
import type { UpstreamClient } from '../sync/http-client.js';
import { PROXY_VERSION, upstreamHeaders } from '../sync/upstream.js';
import type { AppBucket, UsageAggregator } from './aggregator.js';

/** What the upstream answered to one report. */
type SendOutcome = 'sent' | 'retry' | 'rejected';

/** The Unleash client metrics body of one application's bucket. */
export function metricsBody(config: ProxyConfig, bucket: AppBucket, stop: number) {
  const toggles: Record<string, { yes: number; no: number; variants: Record<string, number> }> = {};
  for (const [name, toggle] of bucket.toggles) {
    toggles[name] = {
      yes: toggle.yes,
      no: toggle.no,
      variants: Object.fromEntries(toggle.variants),
    };
  }
  return {
    appName: bucket.appName,
    instanceId: config.flagsInstanceId,
    ...(bucket.environment === undefined ? {} : { environment: bucket.environment }),
    sdkVersion: `flags-proxy:${PROXY_VERSION}`,
    platformName: 'node',
    platformVersion: process.versions.node,
    yggdrasilVersion: null,
    specVersion: '5.2.0',
    bucket: {
      start: new Date(bucket.start).toISOString(),
      stop: new Date(Math.max(stop, bucket.start)).toISOString(),
      toggles,
    },
  };
}

export interface ReporterTiming {
  readonly random?: () => number;
  readonly now?: () => number;
}

/**
 * Sends the aggregated usage metrics to `POST {flagsUrl}/client/metrics` every `metricsInterval`
 * ms plus a random share of `metricsJitter`, one body per reporting application. A bucket whose
 * send fails (network, 5xx, 429, 401/403, 404) is merged back and sent with the next one; a bucket
 * the upstream refuses as malformed (other 4xx) is dropped and logged, since resending cannot help.
 * `metricsInterval: 0` disables sending (counts are then not kept either).
 */
export class MetricsReporter {
  private timer: NodeJS.Timeout | undefined;
  private stopped = true;
  private inFlight: Promise<void> | undefined;
  private readonly url: URL;
  private readonly headers: Record<string, string>;
  private readonly random: () => number;
  private readonly now: () => number;

  constructor(
    private readonly config: ProxyConfig,
    private readonly aggregator: UsageAggregator,
    private readonly upstream: UpstreamClient,
    private readonly log: Logger,
    timing: ReporterTiming = {},
  ) {
    this.url = new URL('client/metrics', config.flagsUrl);
    this.headers = {
      ...upstreamHeaders(config),
      'content-type': 'application/json',
      'unleash-interval': String(config.metricsInterval),
    };
    this.random = timing.random ?? Math.random;
    this.now = timing.now ?? Date.now;
  }

  get enabled(): boolean {
    return this.config.metricsInterval > 0;
  }

  start(): void {
    if (!this.enabled) return;
    this.stopped = false;
    this.schedule();
  }

  /** Stops the timer, waits for a send in flight, then sends what is left (shutdown). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    await this.inFlight;
    if (this.enabled) await this.flush();
  }

  /** Sends every non-empty bucket now; resolves when done (never throws). */
  flush(): Promise<void> {
    const previous = this.inFlight ?? Promise.resolve();
    const next = previous.then(() => this.sendAll());
    this.inFlight = next;
    return next;
  }

  private schedule(): void {
    const delay =
      this.config.metricsInterval + Math.floor(this.random() * this.config.metricsJitter);
    this.timer = setTimeout(() => {
      void this.flush().then(() => {
        if (!this.stopped) this.schedule();
      });
    }, delay);
    this.timer.unref();
  }

  private async sendAll(): Promise<void> {
    const buckets = this.aggregator.take();
    if (this.aggregator.dropped > 0) {
      this.log.warn(
        { dropped: this.aggregator.dropped },
        'usage metrics for unknown flag names were dropped (too many distinct names)',
      );
      this.aggregator.dropped = 0;
    }
    if (buckets.length === 0) return;
    const stop = this.now();
    const failed: AppBucket[] = [];
    for (const bucket of buckets) {
      const outcome = await this.send(bucket, stop);
      if (outcome === 'retry') failed.push(bucket);
    }
    if (failed.length > 0) this.aggregator.restore(failed);
  }

  private async send(bucket: AppBucket, stop: number): Promise<SendOutcome> {
    try {
      const response = await this.upstream.request(this.url, {
        method: 'POST',
        headers: this.headers,
        body: JSON.stringify(metricsBody(this.config, bucket, stop)),
        timeoutMs: this.config.upstreamTimeoutMs,
      });
      await response.dump();
      const status = response.status;
      if (status >= 200 && status < 300) return 'sent';
      const retryable =
        status >= 500 ||
        status === 401 ||
        status === 403 ||
        status === 404 ||
        status === 408 ||
        status === 429;
      if (retryable) {
        this.log.warn(
          { status, url: this.url.href, appName: bucket.appName },
          'upstream did not take the usage metrics; they are kept for the next send',
        );
        return 'retry';
      }
      this.log.error(
        { status, url: this.url.href, appName: bucket.appName },
        'upstream rejected the usage metrics as invalid; they are dropped',
      );
      return 'rejected';
    } catch (error) {
      this.log.warn(
        { err: error instanceof Error ? error.message : String(error), url: this.url.href },
        'sending usage metrics failed; they are kept for the next send',
      );
      return 'retry';
    }
  }
}
