import * as http from 'node:http';
import * as https from 'node:https';
import { createRequire } from 'node:module';
import type { Registry } from 'prom-client';
import type { Logger } from './config/options.js';
import type { EdgeIdentity } from './prometheus-edge-http.js';
import { USER_AGENT } from './sync/upstream.js';

/** The remote-write protocol's message (prometheus `prompb/remote.proto`, version 1). */
interface WriteRequest {
  readonly timeseries: {
    readonly labels: { readonly name: string; readonly value: string }[];
    readonly samples: { readonly value: number; readonly timestamp: number }[];
  }[];
}

// Both are CommonJS without bundled types. `prometheus-remote-write` carries the remote-write
// protobuf schema precompiled with protobufjs (pure JS) and is the npm package made for exactly
// this message; only its encoder is used, because its sender sends basic auth only when a password
// is set (Edge sends it whenever a user name is) and cannot time out on Node's fetch. `snappyjs` is
// the pure-JS block-format snappy that remote write requires.
const require = createRequire(import.meta.url);
const { serialize } = require('prometheus-remote-write') as {
  serialize(request: WriteRequest): Promise<Uint8Array>;
};
const snappy = require('snappyjs') as { compress(input: Uint8Array): Uint8Array };

export interface RemoteWriteSettings {
  readonly url: URL;
  readonly intervalMs: number;
  readonly username: string | undefined;
  readonly password: string | undefined;
  /** The `hostname` label, when set. */
  readonly hostname: string | undefined;
}

/** Unleash Edge's `client_id` label; its option is hidden and has this default (`unleash-edge/src/lib.rs`). */
const CLIENT_ID = 'self-hosted';

/**
 * Pushes every metric of `registry` to a Prometheus remote-write endpoint every `intervalMs`, as
 * Unleash Edge does (`crates/oss/unleash-edge-metrics/src/metrics_pusher.rs`): each series with
 * `app_name`, `client_id`, `instance_id` and (when set) `hostname` added, basic auth when a user name is set, a failed
 * push logged and tried again at the next interval.
 */
export class RemoteWritePusher {
  private timer: NodeJS.Timeout | undefined;
  private readonly authorization: string | undefined;
  private readonly permanent: Record<string, string>;

  constructor(
    private readonly registry: Registry,
    private readonly settings: RemoteWriteSettings,
    identity: EdgeIdentity,
    private readonly log: Logger,
    private readonly timeoutMs: number,
  ) {
    this.authorization =
      settings.username === undefined
        ? undefined
        : `Basic ${Buffer.from(`${settings.username}:${settings.password ?? ''}`).toString('base64')}`;
    this.permanent = {
      app_name: identity.appName,
      client_id: CLIENT_ID,
      instance_id: identity.instanceId,
      ...(settings.hostname === undefined ? {} : { hostname: settings.hostname }),
    };
  }

  start(): void {
    this.timer = setInterval(() => void this.push(), this.settings.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One push; never throws. */
  async push(): Promise<void> {
    try {
      const body = snappy.compress(await serialize(await this.writeRequest()));
      const status = await this.post(Buffer.from(body));
      if (status < 200 || status >= 300)
        this.log.warn({ status, url: this.settings.url.origin }, 'Prometheus remote write failed');
    } catch (error) {
      this.log.warn(
        {
          err: error instanceof Error ? error.message : String(error),
          url: this.settings.url.origin,
        },
        'Prometheus remote write failed',
      );
    }
  }

  /** Every sample of the registry now, labels sorted by name as the protocol requires. */
  private async writeRequest(): Promise<WriteRequest> {
    const timestamp = Date.now();
    const timeseries: WriteRequest['timeseries'] = [];
    for (const metric of await this.registry.getMetricsAsJSON()) {
      for (const value of metric.values) {
        const labels: Record<string, string> = {};
        for (const [name, label] of Object.entries(value.labels)) labels[name] = String(label);
        Object.assign(labels, this.permanent);
        labels.__name__ = (value as { metricName?: string }).metricName ?? metric.name;
        timeseries.push({
          labels: Object.keys(labels)
            .sort()
            .map((name) => ({ name, value: labels[name] as string })),
          samples: [{ value: value.value, timestamp }],
        });
      }
    }
    return { timeseries };
  }

  /** POSTs `body`; the answer's status. */
  private post(body: Buffer): Promise<number> {
    const { url } = this.settings;
    const headers: Record<string, string> = {
      'content-type': 'application/x-protobuf',
      'content-encoding': 'snappy',
      'x-prometheus-remote-write-version': '0.1.0',
      'user-agent': USER_AGENT,
      'content-length': String(body.length),
    };
    if (this.authorization !== undefined) headers.authorization = this.authorization;
    return new Promise((resolve, reject) => {
      const request = (url.protocol === 'https:' ? https : http).request(url, {
        method: 'POST',
        headers,
        timeout: this.timeoutMs,
      });
      request.on('timeout', () =>
        request.destroy(new Error(`no answer within ${this.timeoutMs} ms`)),
      );
      request.on('error', reject);
      request.on('response', (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode ?? 0));
        response.on('error', reject);
      });
      request.end(body);
    });
  }
}
