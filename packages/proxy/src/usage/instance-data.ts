import type { EdgeInstanceData } from '@flags/schemas';
import type { Environments } from '../sync/environments.js';

/** Downstream instances kept until the next upstream send; more are dropped until then. */
export const MAX_CONNECTED_INSTANCES = 100;
/** Bytes (their bodies' length) of the downstream instances kept until the next upstream send. */
export const MAX_CONNECTED_BYTES = 4 * 1024 * 1024;

export interface InstanceDataOptions {
  /** The proxy's app name (`flagsAppName`). */
  readonly appName: string;
  /** The proxy's instance id (`flagsInstanceId`). */
  readonly identifier: string;
  /** Sent as `edgeVersion`. */
  readonly version: string;
  /** Event streams open now (`connectedStreamingClients`). */
  readonly streamingClients?: () => number;
  readonly now?: () => number;
}

const noLatency = () => ({ avg: 0, count: 0, p99: 0 });

/**
 * The proxy's instance data in Unleash Edge 20's shape (`EdgeInstanceData`, from
 * `unleash-edge-types/src/metrics/instance_data.rs`), and the instance data downstream relays sent
 * it (`POST /api/client/metrics/edge`) since the last upstream send, which it passes on as its
 * `connectedEdges`. Edge keeps every body sent to it until then; this keeps the latest of each
 * downstream instance, at most `MAX_CONNECTED_INSTANCES` of them taking `MAX_CONNECTED_BYTES`,
 * since any holder of a client token can send them.
 */
export class InstanceData {
  readonly started: string;
  private readonly connected = new Map<string, { data: EdgeInstanceData; bytes: number }>();
  private connectedBytes = 0;
  /** Downstream bodies dropped at the bounds since the last send. */
  dropped = 0;
  private readonly now: () => number;

  constructor(private readonly options: InstanceDataOptions) {
    this.now = options.now ?? Date.now;
    this.started = new Date(this.now()).toISOString();
  }

  /** Keeps a downstream instance's data (its latest replaces an earlier one); false: dropped at the bounds. */
  receive(data: EdgeInstanceData, bytes: number): boolean {
    const earlier = this.connected.get(data.identifier);
    const count = this.connected.size + (earlier === undefined ? 1 : 0);
    const total = this.connectedBytes - (earlier?.bytes ?? 0) + bytes;
    if (count > MAX_CONNECTED_INSTANCES || total > MAX_CONNECTED_BYTES) {
      this.dropped++;
      return false;
    }
    // Re-inserted, so the map's order stays the order of arrival.
    this.connected.delete(data.identifier);
    this.connected.set(data.identifier, { data, bytes });
    this.connectedBytes = total;
    return true;
  }

  /** The downstream instances kept, in the order their latest data arrived. */
  connectedInstances(): EdgeInstanceData[] {
    return [...this.connected.values()].map(({ data }) => data);
  }

  /** An upstream send is over (or refused for good): what was passed on is not passed on again. */
  clear(): void {
    this.connected.clear();
    this.connectedBytes = 0;
    this.dropped = 0;
  }

  /**
   * This instance now, with the downstream instances as `connectedEdges`. Traffic and latency
   * figures are Edge's fields without values (flags-proxy's own figures are on its Prometheus
   * endpoint); the revisions are one per synced token, as Edge lists one per client token.
   */
  observe(environments: Environments): EdgeInstanceData {
    const cpu = process.cpuUsage();
    const emptyGroup = () => [{ meteredGroup: 'default', dataPoints: [] }];
    return {
      identifier: this.options.identifier,
      appName: this.options.appName,
      hosting: 'self-hosted',
      region: null,
      edgeVersion: this.options.version,
      processMetrics: {
        cpuUsage: (cpu.user + cpu.system) / 1e6,
        memoryUsage: process.memoryUsage.rss(),
      },
      started: this.started,
      traffic: { cachedResponses: {}, get: {}, post: {}, accessDenied: {} },
      latencyUpstream: { features: noLatency(), metrics: noLatency(), edge: noLatency() },
      requestsSinceLastReport: {},
      connectedStreamingClients: this.options.streamingClients?.() ?? 0,
      connectedEdges: this.connectedInstances(),
      connectionConsumptionSinceLastReport: { features: emptyGroup(), metrics: emptyGroup() },
      requestConsumptionSinceLastReport: [],
      edgeApiKeyRevisionIds: environments.all().flatMap((environment) => {
        const revisionId = environment.state.current?.payload.meta?.revisionId ?? 0;
        return environment.feedStatuses().map((feed) => ({
          environment: environment.name,
          projects: [...(feed.projects ?? ['*'])],
          revisionId: Math.max(0, Math.trunc(revisionId)),
          // Not fetched yet: as Edge, which stamps the time it registered the token.
          lastUpdated: new Date(
            feed.lastUpdateMs === 0 ? this.now() : feed.lastUpdateMs,
          ).toISOString(),
        }));
      }),
    };
  }
}
