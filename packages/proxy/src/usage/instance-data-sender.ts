import type { ProxyConfig } from '../config/load.js';
import type { Logger } from '../config/options.js';
import type { Environments } from '../sync/environments.js';
import type { UpstreamClient } from '../sync/http-client.js';
import { upstreamHeaders } from '../sync/upstream.js';
import type { InstanceData } from './instance-data.js';

/** Unleash Edge 20's pace (`unleash-edge-http-client/src/instance_data.rs`): every minute ... */
export const INSTANCE_DATA_INTERVAL_MS = 60_000;
/** ... plus a minute per refusal (404, 403) in a row, up to ten ... */
const MAX_BACKOFF_STEPS = 10;
/** ... each send given 3 s. */
const SEND_TIMEOUT_MS = 3_000;

type Outcome = 'sent' | 'refused' | 'failed';

export interface InstanceDataSenderOptions {
  readonly config: ProxyConfig;
  readonly environments: Environments;
  readonly data: InstanceData;
  readonly upstream: UpstreamClient;
  readonly log: Logger;
  /** Between sends, ms (tests shorten it). */
  readonly intervalMs?: number;
}

/**
 * Sends the proxy's instance data upstream as Unleash Edge 20 does: `POST
 * {flagsUrl}/client/metrics/edge` with the first startup token, every minute, and once more at
 * shutdown. After a send, or a 404 or 403 (an upstream without the endpoint, or refusing the
 * token), what was sent is cleared (downstream instances are passed on once); the refusals add a
 * minute each to the wait (up to ten), and only the first of a row is logged: open-source
 * unleash-server answers 404, every minute, to every Edge. Other failures keep the data for the
 * next send. On in edge mode only, while usage metrics are (`metricsInterval` > 0).
 */
export class InstanceDataSender {
  private timer: NodeJS.Timeout | undefined;
  private stopped = true;
  private refusals = 0;
  private inFlight: Promise<Outcome> | undefined;
  private readonly url: URL;
  private readonly intervalMs: number;

  constructor(private readonly options: InstanceDataSenderOptions) {
    this.url = new URL('client/metrics/edge', options.config.flagsUrl);
    this.intervalMs = options.intervalMs ?? INSTANCE_DATA_INTERVAL_MS;
  }

  /** In edge mode, while usage metrics are on: Unleash Proxy never sent instance data. */
  get enabled(): boolean {
    const { config } = this.options;
    return config.mode === 'edge' && config.metricsInterval > 0;
  }

  start(): void {
    if (!this.enabled) return;
    this.stopped = false;
    this.schedule();
  }

  /** Stops the timer, waits for a send in flight, and sends once more (shutdown, as Edge). */
  async stop(): Promise<void> {
    const wasRunning = !this.stopped;
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    await this.inFlight;
    if (wasRunning) await this.send();
  }

  /** Sends now; resolves with what the upstream made of it (never throws). */
  send(): Promise<Outcome> {
    const sending = this.sendOnce();
    this.inFlight = sending;
    return sending;
  }

  private schedule(): void {
    const delay = this.intervalMs * (1 + Math.min(this.refusals, MAX_BACKOFF_STEPS));
    this.timer = setTimeout(() => {
      void this.send().then((outcome) => {
        if (outcome === 'sent') this.refusals = 0;
        else if (outcome === 'refused') this.refusals++;
        if (!this.stopped) this.schedule();
      });
    }, delay);
    this.timer.unref();
  }

  private async sendOnce(): Promise<Outcome> {
    const { config, environments, data, upstream, log } = this.options;
    const token = config.startupTokens[0];
    if (token === undefined) return 'failed';
    if (data.dropped > 0)
      log.warn(
        { dropped: data.dropped },
        'downstream instance data was dropped (more instances or bytes than kept until a send)',
      );
    try {
      const response = await upstream.request(this.url, {
        method: 'POST',
        headers: {
          ...upstreamHeaders(config),
          [config.upstreamAuthHeader]: token,
          'content-type': 'application/json',
        },
        body: JSON.stringify(data.observe(environments)),
        timeoutMs: SEND_TIMEOUT_MS,
      });
      await response.dump();
      if (response.status >= 200 && response.status < 300) {
        data.clear();
        return 'sent';
      }
      if (response.status === 404 || response.status === 403) {
        data.clear();
        if (this.refusals === 0) {
          const said = { status: response.status, url: this.url.href };
          // No such endpoint is how an upstream without it answers; a refused token is a fault.
          if (response.status === 404)
            log.info(said, 'upstream does not take instance data (404); asking again less often');
          else
            log.warn(said, 'upstream refuses the instance data (403: the token may not send it)');
        }
        return 'refused';
      }
      log.warn(
        { status: response.status, url: this.url.href },
        'upstream did not take the instance data; it is sent again with the next send',
      );
      return 'failed';
    } catch (error) {
      log.warn(
        { err: error instanceof Error ? error.message : String(error), url: this.url.href },
        'sending instance data failed; it is sent again with the next send',
      );
      return 'failed';
    }
  }
}
