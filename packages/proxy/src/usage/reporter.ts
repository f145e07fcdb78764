import { parseUnleashToken } from '../auth/unleash-token.js';
import type { ProxyConfig } from '../config/load.js';
import type { Logger } from '../config/options.js';
import type { Environment, Environments } from '../sync/environments.js';
import type { UpstreamClient } from '../sync/http-client.js';
import { PROXY_VERSION, upstreamHeaders } from '../sync/upstream.js';
import type { AppBucket } from './aggregator.js';
import { appBatches, type Batch, bulkBatches, type Sender } from './batches.js';

/** What the upstream answered to one body (`missing`: 404 to the bulk path). */
type SendOutcome = 'sent' | 'retry' | 'rejected' | 'missing';

/** Scheduled sends an environment skips at most after failures in a row (Edge: up to 11× the interval). */
const MAX_SKIPPED_SENDS = 10;

/**
 * Statuses whose handling Unleash Edge plans for (`send_unleash_metrics.rs`); a send failing any
 * other way (another status, or no answer) is one of its `metrics_send_error`.
 */
const EXPECTED_FAILURES = new Set([400, 401, 403, 404, 413, 429, 500, 502, 503, 504]);

/** An environment's failures in a row (decayed by successes) and the scheduled sends it still skips. */
interface Pace {
  failures: number;
  skip: number;
}

export interface ReporterTiming {
  readonly random?: () => number;
  readonly now?: () => number;
}

/**
 * Sends every environment's usage metrics upstream every `metricsInterval` ms plus a random share
 * of `metricsJitter`, with a client token of that environment (its first). The form is Unleash
 * Edge's: `POST {flagsUrl}/client/metrics/bulk` bodies under 95 KiB; once the upstream answers 404
 * there, per-application `POST {flagsUrl}/client/metrics` bodies from then on. An environment
 * synced with a plain (not Unleash-format) token always uses the per-application form: bulk
 * entries must name their environment, and only the upstream knows that token's.
 *
 * A body whose send fails (network, 5xx, 429, 401/403, 404) is merged back and sent with the next
 * one, and that environment's scheduled sends back off (skipping up to `MAX_SKIPPED_SENDS`); a body
 * the upstream refuses as malformed (other 4xx) is dropped and logged, since resending cannot
 * help. `metricsInterval: 0` disables sending (counts are then not kept either).
 */
export class MetricsReporter {
  private timer: NodeJS.Timeout | undefined;
  private stopped = true;
  private inFlight: Promise<void> | undefined;
  private readonly bulkUrl: URL;
  private readonly appUrl: URL;
  /** How the bodies name the proxy (also `/internal-backstage/metricsbatch`). */
  readonly sender: Sender;
  private readonly platform = { name: 'node', version: process.versions.node };
  /** The upstream answered 404 to the bulk path: it only takes per-application bodies. */
  private bulkMissing = false;
  private readonly paces = new Map<Environment, Pace>();
  private readonly random: () => number;
  private readonly now: () => number;
  /** Sends that failed unexpectedly since start: no answer, or a status not in `EXPECTED_FAILURES`. */
  unexpectedFailures = 0;

  constructor(
    private readonly config: ProxyConfig,
    private readonly environments: Environments,
    private readonly upstream: UpstreamClient,
    private readonly log: Logger,
    timing: ReporterTiming = {},
  ) {
    this.bulkUrl = new URL('client/metrics/bulk', config.flagsUrl);
    this.appUrl = new URL('client/metrics', config.flagsUrl);
    this.random = timing.random ?? Math.random;
    this.now = timing.now ?? Date.now;
    this.sender = {
      appName: config.flagsAppName,
      instanceId: config.flagsInstanceId,
      sdkVersion: `flags-proxy:${PROXY_VERSION}`,
      started: new Date(this.now()).toISOString(),
      interval: config.metricsInterval,
    };
  }

  get enabled(): boolean {
    return this.config.metricsInterval > 0;
  }

  /**
   * The time between two sends as backoff now stretches it, ms: the interval times one plus the
   * most scheduled sends an environment skips after its failures.
   */
  get currentIntervalMs(): number {
    let skipped = 0;
    for (const pace of this.paces.values()) skipped = Math.max(skipped, pace.failures);
    return this.config.metricsInterval * (1 + skipped);
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

  /** Sends every environment's counts now, backing off or not; resolves when done (never throws). */
  flush(): Promise<void> {
    return this.enqueue(false);
  }

  private enqueue(scheduled: boolean): Promise<void> {
    const previous = this.inFlight ?? Promise.resolve();
    const next = previous.then(() => this.sendAll(scheduled));
    this.inFlight = next;
    return next;
  }

  private schedule(): void {
    const delay =
      this.config.metricsInterval + Math.floor(this.random() * this.config.metricsJitter);
    this.timer = setTimeout(() => {
      void this.enqueue(true).then(() => {
        if (!this.stopped) this.schedule();
      });
    }, delay);
    this.timer.unref();
  }

  /** One environment failing or slow never holds up another. */
  private async sendAll(scheduled: boolean): Promise<void> {
    await Promise.all(
      this.environments.all().map((environment) => this.sendEnvironment(environment, scheduled)),
    );
  }

  private async sendEnvironment(environment: Environment, scheduled: boolean): Promise<void> {
    const usage = environment.usage;
    if (usage === undefined) return;
    const pace = this.paceOf(environment);
    if (scheduled && pace.skip > 0) {
      pace.skip--;
      return;
    }
    const buckets = usage.take();
    if (usage.dropped > 0) {
      this.log.warn(
        { dropped: usage.dropped, environment: environment.name },
        'usage metrics were dropped (too many distinct flag or variant names or impact-metric series, or pending usage at usageMaxPendingBytes)',
      );
      usage.dropped = 0;
    }
    if (buckets.length === 0) return;
    const token = environment.tokens[0] as string;
    const stop = this.now();
    const failed: AppBucket[] = [];
    let perApp: AppBucket[] = buckets;
    if (!this.bulkMissing && parseUnleashToken(token) !== undefined) {
      perApp = [];
      for (const batch of bulkBatches(buckets, environment.name, this.sender, stop)) {
        const outcome = this.bulkMissing
          ? 'missing'
          : await this.send(this.bulkUrl, token, batch, environment.name);
        if (outcome === 'missing') perApp.push(...batch.buckets);
        else if (outcome === 'retry') failed.push(...batch.buckets);
      }
    }
    for (const batch of appBatches(perApp, this.sender, this.platform, stop)) {
      if ((await this.send(this.appUrl, token, batch, environment.name)) === 'retry')
        failed.push(...batch.buckets);
    }
    // The send is over: what failed is charged again as it is merged back.
    usage.release(buckets);
    if (failed.length === 0) {
      pace.failures = Math.max(0, pace.failures - 1);
      return;
    }
    usage.restore(failed);
    pace.failures = Math.min(pace.failures + 1, MAX_SKIPPED_SENDS);
    pace.skip = pace.failures;
  }

  private paceOf(environment: Environment): Pace {
    let pace = this.paces.get(environment);
    if (pace === undefined) {
      pace = { failures: 0, skip: 0 };
      this.paces.set(environment, pace);
    }
    return pace;
  }

  private async send(
    url: URL,
    token: string,
    batch: Batch,
    environment: string,
  ): Promise<SendOutcome> {
    try {
      const response = await this.upstream.request(url, {
        method: 'POST',
        headers: {
          ...upstreamHeaders(this.config),
          [this.config.upstreamAuthHeader]: token,
          'content-type': 'application/json',
          'unleash-interval': String(this.config.metricsInterval),
        },
        body: batch.body,
        timeoutMs: this.config.upstreamTimeoutMs,
      });
      await response.dump();
      const status = response.status;
      if (status >= 200 && status < 300) return 'sent';
      if (!EXPECTED_FAILURES.has(status)) this.unexpectedFailures++;
      if (status === 404 && url === this.bulkUrl) {
        this.bulkMissing = true;
        this.log.info(
          { url: url.href },
          'upstream has no bulk metrics endpoint (404); usage metrics go to /client/metrics per application from now on',
        );
        return 'missing';
      }
      const retryable =
        status >= 500 ||
        status === 401 ||
        status === 403 ||
        status === 404 ||
        status === 408 ||
        status === 429;
      if (retryable) {
        this.log.warn(
          { status, url: url.href, environment },
          'upstream did not take the usage metrics; they are kept for the next send',
        );
        return 'retry';
      }
      this.log.error(
        { status, url: url.href, environment },
        'upstream rejected the usage metrics as invalid; they are dropped',
      );
      return 'rejected';
    } catch (error) {
      this.unexpectedFailures++;
      this.log.warn(
        { err: error instanceof Error ? error.message : String(error), url: url.href, environment },
        'sending usage metrics failed; they are kept for the next send',
      );
      return 'retry';
    }
  }
}
