// `npm run bench propagation`: how fast one change travels. flags-server (PGlite) and flags-proxy
// (syncing from it by streaming) run as their own processes; 50 imports each flip one flag, and
// from the moment the import's response is received the benchmark times (a) flags-proxy serving
// the new answer, (b) a streaming `unleash-client` on the proxy seeing it, (c) the last of 1,000
// SSE clients of the proxy receiving it. Then the proxy's RSS with 1,000 and 10,000 idle streams,
// and the same figures of a bare `node:http` server holding as many SSE responses: the floor, as
// node:http's own objects per connection (socket, request, response, parser) are most of a stream's
// cost.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { Unleash } from 'unleash-client';
import {
  freePort,
  printedPort,
  type SpawnedEntry,
  spawnCommand,
  spawnEntry,
} from '../test/helpers/processes.js';

const ADMIN = 'bench-admin-token';
const CLIENT = '*:development.bench-propagation-client';
const PROBE = 'propagation.probe';
const FLAGS = 50;
const CHANGES = Number(process.env.BENCH_CHANGES ?? 50);
const SSE_CLIENTS = 1_000;
const IDLE_STREAMS = [1_000, 10_000] as const;
/** How long streams stay idle before the RSS is read, ms. */
const IDLE_SETTLE_MS = 3_000;
const TARGET = { proxyP99Ms: 100, sdkP99Ms: 100, fanOutP99Ms: 250, idleStreamKb: 5 };

const now = () => performance.timeOrigin + performance.now();

/** An import of `FLAGS` plain flags and the probe, enabled or not in `development`. */
function importBody(probeEnabled: boolean) {
  const names = [PROBE, ...Array.from({ length: FLAGS }, (_, i) => `propagation.flag-${i}`)];
  const data = {
    features: names.map((name) => ({ name, type: 'release', impressionData: false })),
    featureStrategies: names.map((name) => ({
      name: 'flexibleRollout',
      featureName: name,
      sortOrder: 0,
      parameters: { rollout: '100', stickiness: 'default', groupId: name },
      constraints: [],
    })),
    featureEnvironments: names.map((name) => ({
      name,
      featureName: name,
      enabled: name === PROBE ? probeEnabled : true,
    })),
  };
  return {
    project: 'default',
    environment: 'development',
    data: {
      ...data,
      contextFields: [],
      featureTags: [],
      tagTypes: [],
      segments: [],
      dependencies: [],
    },
  };
}

async function waitFor(url: string, entry: SpawnedEntry, headers: Record<string, string> = {}) {
  for (let attempt = 0; attempt < 600; attempt++) {
    try {
      const response = await fetch(url, { headers });
      await response.arrayBuffer();
      if (response.ok) return;
    } catch {}
    await sleep(100);
  }
  throw new Error(`${url} never answered 200:\n${entry.output()}`);
}

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return kb / 1024;
}

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

/** The SSE clients, in a thread of their own so their parsing does not delay the other probes. */
class StreamClients {
  private readonly worker: Worker;
  private nextId = 0;
  private readonly waiting = new Map<
    number,
    { resolve: (value: unknown) => void; reject: (error: Error) => void }
  >();

  constructor(url: string, token: string) {
    // Plain JavaScript: a worker on Node 20 does not take the TypeScript loader.
    this.worker = new Worker(new URL('./propagation-streams.mjs', import.meta.url), {
      workerData: { url, token, probe: PROBE },
    });
    this.worker.on('message', (message: { id: number; value: unknown }) => {
      this.waiting.get(message.id)?.resolve(message.value);
      this.waiting.delete(message.id);
    });
    // A failed worker fails the calls waiting on it, so the services started are stopped.
    this.worker.on('error', (error) => {
      for (const { reject } of this.waiting.values()) reject(error);
      this.waiting.clear();
    });
  }

  private call<T>(command: string, argument?: unknown): Promise<T> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve: resolve as (value: unknown) => void, reject });
      this.worker.postMessage({ id, command, argument });
    });
  }

  /** Opens streams until `count` are open and hydrated. */
  open(count: number): Promise<number> {
    return this.call('open', count);
  }

  /** Resolves with each open stream's arrival time (epoch ms) of the probe being `enabled`. */
  arrivals(enabled: boolean): Promise<number[]> {
    return this.call('arrivals', enabled);
  }

  async close(): Promise<void> {
    await this.call('close');
    await this.worker.terminate();
  }
}

/** A bare `node:http` SSE server, the reference for the proxy's RSS per idle stream. */
const BARE_SERVER = fileURLToPath(new URL('./bare-sse-server.mjs', import.meta.url));

/**
 * The RSS of process `pid` while it holds 1,000 and 10,000 idle SSE streams of `url`, against its
 * RSS after 1,000 streams opened and closed (so both the proxy and the bare server start from a
 * heap that has served streams). Each figure is read after the clients have been idle for a few
 * seconds, so the garbage of opening the connections has had time to be collected.
 */
async function idleStreamRss(
  pid: number,
  url: string,
): Promise<{ text: string; perStreamKb: number }> {
  const warmUp = new StreamClients(url, CLIENT);
  await warmUp.open(IDLE_STREAMS[0]);
  await warmUp.close();
  await sleep(IDLE_SETTLE_MS);
  const baseline = rssMb(pid);
  const streams = new StreamClients(url, CLIENT);
  const rss: string[] = [`0 streams ${baseline.toFixed(0)} MB`];
  let perStreamKb = 0;
  try {
    for (const count of IDLE_STREAMS) {
      await streams.open(count);
      await sleep(IDLE_SETTLE_MS);
      const measured = rssMb(pid);
      perStreamKb = ((measured - baseline) * 1024) / count;
      rss.push(`${count.toLocaleString('en')} streams ${measured.toFixed(0)} MB`);
    }
  } finally {
    await streams.close();
  }
  return { text: rss.join(', '), perStreamKb };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'flags-propagation-'));
  const serverPort = await freePort();
  const proxyPort = await freePort();
  const server = spawnEntry(
    fileURLToPath(new URL('../packages/server/src/main.ts', import.meta.url)),
    {
      DATA_DIR: join(dir, 'data'),
      SERVER_PORT: String(serverPort),
      SERVER_HOST: '127.0.0.1',
      FLAGS_ADMIN_TOKENS: ADMIN,
      FLAGS_CLIENT_TOKENS: CLIENT,
      STREAMING_MAX_CONNECTIONS: '100',
      LOG_LEVEL: 'warn',
    },
  );
  const serverBase = `http://127.0.0.1:${serverPort}`;
  const proxyBase = `http://127.0.0.1:${proxyPort}`;
  let proxy: SpawnedEntry | undefined;
  let sdk: Unleash | undefined;
  let streams: StreamClients | undefined;
  let bare: SpawnedEntry | undefined;
  try {
    await waitFor(`${serverBase}/health`, server);
    const importFlags = async (probeEnabled: boolean) => {
      const response = await fetch(`${serverBase}/api/admin/features-batch/import`, {
        method: 'POST',
        headers: { authorization: ADMIN, 'content-type': 'application/json' },
        body: JSON.stringify(importBody(probeEnabled)),
      });
      const text = await response.text();
      if (response.status !== 200) throw new Error(`import failed: ${response.status} ${text}`);
    };
    await importFlags(false);

    proxy = spawnEntry(fileURLToPath(new URL('../packages/proxy/src/main.ts', import.meta.url)), {
      FLAGS_URL: `${serverBase}/api`,
      FLAGS_API_TOKEN: CLIENT,
      FLAGS_APP_NAME: 'bench-propagation',
      PORT: String(proxyPort),
      PROXY_HOST: '127.0.0.1',
      PROXY_STREAMING_MAX_CONNECTIONS: String(IDLE_STREAMS.at(-1)! + SSE_CLIENTS + 100),
      // Every idle stream comes from 127.0.0.1 with one token: no cap on connections, nor on
      // streams, per address or per token.
      PROXY_MAX_CONNECTIONS_PER_ADDRESS: '0',
      PROXY_STREAMING_MAX_CONNECTIONS_PER_ADDRESS: '0',
      PROXY_STREAMING_MAX_CONNECTIONS_PER_TOKEN: '0',
      LOG_LEVEL: 'warn',
    });
    const proxyPid = proxy.child.pid as number;
    await waitFor(`${proxyBase}/internal-backstage/ready`, proxy);

    // (a): the proxy's own answer for the probe, asked every 2 ms.
    const proxyServes = async (enabled: boolean): Promise<number> => {
      for (;;) {
        const response = await fetch(`${proxyBase}/api/client/features/${PROBE}`, {
          headers: { authorization: CLIENT },
        });
        const body = (await response.json()) as { enabled?: boolean };
        if (body.enabled === enabled) return now();
        await sleep(2);
      }
    };
    // (b): a streaming SDK on the proxy.
    sdk = new Unleash({
      url: `${proxyBase}/api/`,
      appName: 'bench-propagation-sdk',
      customHeaders: { authorization: CLIENT },
      disableMetrics: true,
      experimentalMode: { type: 'streaming' },
    } as ConstructorParameters<typeof Unleash>[0]);
    sdk.on('error', () => {});
    await new Promise((resolve) => sdk?.once('synchronized', resolve));
    const client = sdk;
    const sdkSees = (enabled: boolean): Promise<number> =>
      new Promise((resolve) => {
        const check = () => {
          if (client.isEnabled(PROBE) !== enabled) return;
          client.off('changed', check);
          resolve(now());
        };
        client.on('changed', check);
        check();
      });
    // (c): 1,000 SSE clients of the proxy.
    streams = new StreamClients(`${proxyBase}/api/client/streaming`, CLIENT);
    await streams.open(SSE_CLIENTS);

    const latencies = { proxy: [] as number[], sdk: [] as number[], last: [] as number[] };
    const medians: number[] = [];
    for (let change = 1; change <= CHANGES; change++) {
      const enabled = change % 2 === 1;
      const seen = Promise.all([proxyServes(enabled), sdkSees(enabled), streams.arrivals(enabled)]);
      await importFlags(enabled);
      const committed = now();
      const [proxyAt, sdkAt, arrivals] = await seen;
      latencies.proxy.push(proxyAt - committed);
      latencies.sdk.push(sdkAt - committed);
      latencies.last.push(Math.max(...arrivals) - committed);
      medians.push(percentile(arrivals, 50) - committed);
      await sleep(50);
    }
    const line = (label: string, values: number[], target: number) => {
      const p99 = percentile(values, 99);
      console.log(
        `${label.padEnd(44)} p50 ${percentile(values, 50).toFixed(1).padStart(6)} ms  p99 ${p99.toFixed(1).padStart(6)} ms` +
          `  (target p99 ≤ ${target} ms: ${p99 <= target ? 'met' : 'MISSED'})`,
      );
    };
    console.log(
      `${CHANGES} changes (each an import response received on flags-server, ${FLAGS + 1} flags), ` +
        'server on PGlite, proxy syncing by streaming, all on this machine:',
    );
    line('(a) flags-proxy serves the new answer', latencies.proxy, TARGET.proxyP99Ms);
    line('(b) streaming unleash-client on the proxy sees it', latencies.sdk, TARGET.sdkP99Ms);
    line(
      `(c) last of ${SSE_CLIENTS} proxy SSE clients notified`,
      latencies.last,
      TARGET.fanOutP99Ms,
    );
    console.log(
      `    (median client of the ${SSE_CLIENTS}: p50 ${percentile(medians, 50).toFixed(1)} ms)`,
    );

    sdk.destroy();
    sdk = undefined;
    await streams.close();
    streams = undefined;
    const proxyIdle = await idleStreamRss(proxyPid, `${proxyBase}/api/client/streaming`);
    console.log(
      `proxy RSS with idle streams: ${proxyIdle.text}: ${proxyIdle.perStreamKb.toFixed(1)} KB per stream ` +
        `(target ≤ ${TARGET.idleStreamKb} KB: ${proxyIdle.perStreamKb <= TARGET.idleStreamKb ? 'met' : 'MISSED'})`,
    );
    // The reference: what Node's own HTTP server keeps per open response, measured the same way.
    bare = spawnCommand(process.execPath, [BARE_SERVER], {});
    const barePort = await printedPort(bare);
    const bareIdle = await idleStreamRss(bare.child.pid as number, `http://127.0.0.1:${barePort}/`);
    console.log(
      `bare node:http RSS with idle streams: ${bareIdle.text}: ${bareIdle.perStreamKb.toFixed(1)} KB per stream (the reference)`,
    );
  } finally {
    sdk?.destroy();
    await streams?.close();
    proxy?.child.kill('SIGTERM');
    bare?.child.kill('SIGTERM');
    server.child.kill('SIGTERM');
    await Promise.all([proxy?.exited, bare?.exited, server.exited]);
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
