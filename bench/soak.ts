// `npm run soak`: drives a flags-proxy process (the built `flags-proxy` command, as deployed) at
// full rate for SOAK_SECONDS (default 120) with autocannon in this process, while
// the fake upstream changes its payload every SOAK_UPDATE_MS (default 3000). Prints requests
// served, errors and non-2xx answers (must be 0), the proxy's RSS at start/end/peak and the bound
// (end ≤ start + SOAK_RSS_BOUND_MB, default 64), and exits non-zero when a check fails.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { ClientFeatures } from '@flags/schemas';
import autocannon from 'autocannon';
import { realisticContexts, realisticPayload } from '../packages/proxy/test/fixtures/realistic.js';
import { freePort } from '../test/helpers/processes.js';
import { buildProxy, evaluationRequest, PROXY_COMMAND, waitReady } from './proxy-load.js';

const SECONDS = Number(process.env.SOAK_SECONDS ?? 120);
const UPDATE_MS = Number(process.env.SOAK_UPDATE_MS ?? 3000);
const RSS_BOUND_MB = Number(process.env.SOAK_RSS_BOUND_MB ?? 64);
const CONNECTIONS = Number(process.env.SOAK_CONNECTIONS ?? 32);
const WARMUP_S = Math.min(10, Math.max(2, Math.round(SECONDS / 12)));
const CLIENT_KEY = 'soak-client-key';
const API_TOKEN = 'soak-upstream-token';
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const MB = 2 ** 20;

/** The upstream: the realistic 200-flag payload, one flag's rollout and one marker flag per version. */
class Upstream {
  version = 0;
  polls = 0;
  metricsReports = 0;
  private body = '';
  private etag = '';
  private server: Server | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly base: ClientFeatures) {
    this.publish();
  }

  publish(): void {
    this.version++;
    const features = this.base.features.map((feature, i) =>
      i === this.version % this.base.features.length
        ? { ...feature, enabled: !feature.enabled }
        : feature,
    );
    features.push({
      name: `soak-version-${this.version}`,
      enabled: true,
      strategies: [{ name: 'default', parameters: {}, constraints: [] }],
    });
    this.body = JSON.stringify({ ...this.base, features });
    this.etag = `"${createHash('sha1').update(this.body).digest('hex').slice(0, 16)}"`;
  }

  async start(): Promise<string> {
    this.server = createServer((request, response) => {
      const path = (request.url ?? '').split('?', 1)[0];
      request.resume();
      request.on('end', () => {
        if (path === '/api/client/features') {
          this.polls++;
          if (request.headers['if-none-match'] === this.etag) {
            response.writeHead(304, { etag: this.etag }).end();
          } else {
            response
              .writeHead(200, { 'content-type': 'application/json', etag: this.etag })
              .end(this.body);
          }
          return;
        }
        if (path === '/api/client/metrics') this.metricsReports++;
        response.writeHead(202).end();
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.timer = setInterval(() => this.publish(), UPDATE_MS);
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/api`;
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return (kb * 1024) / MB;
}

function requests(): autocannon.Request[] {
  return realisticContexts(500).flatMap((context) => [
    evaluationRequest('GET', context, CLIENT_KEY),
    evaluationRequest('POST', context, CLIENT_KEY),
  ]);
}

async function main(): Promise<number> {
  const upstream = new Upstream(realisticPayload(200));
  const flagsUrl = await upstream.start();
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const child = spawn(PROXY_COMMAND, [], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      FLAGS_URL: flagsUrl,
      FLAGS_API_TOKEN: API_TOKEN,
      FLAGS_PROXY_CLIENT_KEYS: CLIENT_KEY,
      PORT: String(port),
      PROXY_HOST: '127.0.0.1',
      FLAGS_FETCH_INTERVAL: '1000',
      FLAGS_METRICS_INTERVAL: '5000',
      LOG_LEVEL: 'warn',
      JSON_LOGGER: 'true',
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  try {
    await waitReady(base, child);
    const pid = child.pid as number;
    console.log(
      `soak: ${SECONDS} s against flags-proxy (pid ${pid}), ${CONNECTIONS} connections, ` +
        `GET and POST /proxy over 500 contexts, upstream payload (200 flags) changes every ${UPDATE_MS} ms`,
    );
    let rssStart = 0;
    let rssPeak = 0;
    const samples: number[] = [];
    const startedAt = Date.now();
    const sampler = setInterval(() => {
      const rss = rssMb(pid);
      samples.push(rss);
      rssPeak = Math.max(rssPeak, rss);
      if (rssStart === 0 && Date.now() - startedAt >= WARMUP_S * 1000) rssStart = rss;
    }, 1000);
    const result = await autocannon({
      url: base,
      connections: CONNECTIONS,
      duration: SECONDS,
      requests: requests(),
    });
    clearInterval(sampler);
    const rssEnd = rssMb(pid);
    // The last version published must be served (the proxy kept syncing under load).
    const latest = await fetch(`${base}/proxy`, { headers: { authorization: CLIENT_KEY } });
    const toggles = ((await latest.json()) as { toggles: { name: string }[] }).toggles;
    const seenVersion = Math.max(
      0,
      ...toggles
        .map((toggle) => /^soak-version-(\d+)$/.exec(toggle.name)?.[1])
        .filter((v): v is string => v !== undefined)
        .map(Number),
    );
    child.kill('SIGTERM');
    const code = await exited;

    const served = result.requests.total;
    const failures = result.errors + result.timeouts + result.non2xx;
    const bound = rssStart + RSS_BOUND_MB;
    const lines = [
      `requests served: ${served} (${Math.round(result.requests.average)} req/s average, p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms)`,
      `errors: ${result.errors}, timeouts: ${result.timeouts}, non-2xx: ${result.non2xx}`,
      `upstream: ${upstream.version} payload versions published, ${upstream.polls} polls, ${upstream.metricsReports} usage reports received; proxy serves version ${seenVersion}`,
      `proxy RSS: ${rssStart.toFixed(1)} MB after ${WARMUP_S} s warm-up, ${rssEnd.toFixed(1)} MB at the end, peak ${rssPeak.toFixed(1)} MB; bound: end ≤ start + ${RSS_BOUND_MB} MB = ${bound.toFixed(1)} MB`,
      `RSS every 10 s (MB): ${samples
        .filter((_, i) => i % 10 === 0)
        .map((v) => v.toFixed(0))
        .join(' ')}`,
      `flags-proxy exit code after SIGTERM: ${code}`,
    ];
    for (const line of lines) console.log(`soak: ${line}`);
    const problems: string[] = [];
    if (served === 0) problems.push('no request served');
    if (failures > 0) problems.push(`${failures} failed requests`);
    if (rssEnd > bound) problems.push(`RSS grew beyond the bound (${rssEnd.toFixed(1)} MB)`);
    if (seenVersion < upstream.version - 2) problems.push('the proxy fell behind the upstream');
    if (code !== 0) problems.push(`exit code ${code}`);
    console.log(problems.length === 0 ? 'soak: PASS' : `soak: FAIL: ${problems.join('; ')}`);
    return problems.length === 0 ? 0 : 1;
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
    await upstream.stop();
  }
}

buildProxy();
main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
