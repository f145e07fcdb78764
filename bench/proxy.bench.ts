// `npm run bench proxy`: flags-proxy against @unleash/proxy 1.4.19 (the reference) and a bare
// node:http server, each in its own child process, all on one fake upstream serving 200 realistic
// flags. flags-proxy runs as its users start it, the `flags-proxy` command with its defaults
// (answer cache on: the 500 contexts repeat, as polling SDKs repeat theirs), and once more with
// the answer cache off ("uncached": every request evaluates all 200 flags). autocannon (in this
// process: 32 connections, ~10 s per run) cycles GET /proxy and POST /proxy through 500 distinct
// contexts, alternating ours and the reference over 2 rounds, and prints req/s, p50/p99 latency,
// server CPU µs per request, peak RSS and the ratios. CPU per request (the child's user + system
// time over the responses it sent) depends far less on other load on the machine than req/s does.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { compile } from '@flags/engine';
import autocannon from 'autocannon';
import { realisticContexts, realisticPayload } from '../packages/proxy/test/fixtures/realistic.js';
import { EdgeUpstream } from '../packages/proxy/test/helpers/edge-upstream.js';
import { FakeUpstream } from '../packages/proxy/test/helpers/fake-upstream.js';
import { freePort } from '../test/helpers/processes.js';
import { buildProxy, evaluationRequest, PROXY_COMMAND, waitReady } from './proxy-load.js';

const CLIENT_KEY = 'bench-client-key';
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const CONNECTIONS = 32;
const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** Kernel clock ticks per second (`getconf CLK_TCK`), the unit of /proc CPU times. */
const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout) || 100;

/**
 * The reference and the bare server, in plain JavaScript so that no TypeScript loader inflates the
 * measured RSS: each starts, then prints `{"port": n}`.
 */
const CHILD_CODE: Record<'reference' | 'bare', string> = {
  reference: `
    const { createRequire } = await import('node:module');
    const require = createRequire(process.cwd() + '/');
    const { createApp } = require('@unleash/proxy');
    const app = createApp({
      unleashUrl: UPSTREAM, unleashApiToken: 'bench-token', clientKeys: [KEY], unleashAppName: 'bench',
      logLevel: 'error', metricsInterval: 0, clientMode: 'new',
      storageProvider: { get: async () => undefined, set: async () => {} },
    });
    const server = app.listen(0, '127.0.0.1', async () => {
      const port = server.address().port;
      while ((await fetch('http://127.0.0.1:' + port + '/proxy/health')).status !== 200) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      report(port);
    });`,
  bare: `
    const { createServer } = await import('node:http');
    const body = Buffer.from('{"toggles":[' + '"x",'.repeat(Math.max(0, Math.floor((BYTES - 16) / 4))) + '"x"]}');
    const server = createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        response.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length });
        response.end(body);
      });
    });
    server.listen(0, '127.0.0.1', () => report(server.address().port));`,
};

interface Child {
  readonly process: ChildProcess;
  readonly base: string;
}

/**
 * flags-proxy as its users run it: the `flags-proxy` command as npm links it (what `npx
 * flags-proxy` runs), configured by environment variables, ready once `/proxy/health` answers 200.
 */
async function startCommand(upstreamUrl: string, env: Record<string, string> = {}): Promise<Child> {
  const port = await freePort();
  const child = spawn(PROXY_COMMAND, [], {
    cwd: ROOT,
    stdio: ['ignore', 'inherit', 'inherit'],
    // The environment the reference gets too, plus the settings.
    env: {
      ...process.env,
      FLAGS_URL: upstreamUrl,
      FLAGS_API_TOKEN: 'bench-token',
      FLAGS_PROXY_CLIENT_KEYS: CLIENT_KEY,
      FLAGS_APP_NAME: 'bench',
      PORT: String(port),
      PROXY_HOST: '127.0.0.1',
      LOG_LEVEL: 'error',
      JSON_LOGGER: 'true',
      ...env,
    },
  });
  const base = `http://127.0.0.1:${port}`;
  await waitReady(base, child);
  return { process: child, base };
}

function startChild(
  role: 'reference' | 'bare',
  upstreamUrl: string,
  bodyBytes = 0,
): Promise<Child> {
  const code = `const UPSTREAM = ${JSON.stringify(upstreamUrl)}; const KEY = ${JSON.stringify(CLIENT_KEY)};
    const BYTES = ${bodyBytes}; const report = (port) => process.stdout.write(JSON.stringify({ port }) + '\\n');
    ${CHILD_CODE[role]}`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', code], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (chunk) => {
      out += chunk;
      const line = out.split('\n').find((candidate) => candidate.startsWith('{"port"'));
      if (line) resolve({ process: child, base: `http://127.0.0.1:${JSON.parse(line).port}` });
    });
    child.on('exit', (code) => reject(new Error(`${role} server exited with ${code}`)));
  });
}

/** User + system CPU time a process has used so far (Linux /proc/<pid>/stat), µs. */
function cpuMicros(pid: number | undefined): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the parenthesised command name; utime and stime are the 12th and 13th of them.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / CLOCK_TICKS;
}

/** Peak resident set size of a process so far (Linux VmHWM), MB. */
function peakRssMb(pid: number | undefined): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /VmHWM:\s+(\d+) kB/.exec(status);
  return match ? Number(match[1]) / 1024 : Number.NaN;
}

type Scenario = 'GET' | 'POST';

function requests(scenario: Scenario): autocannon.Request[] {
  return realisticContexts(500).map((context) => evaluationRequest(scenario, context, CLIENT_KEY));
}

interface Measure {
  readonly rps: number;
  readonly p50: number;
  readonly p99: number;
  /** Server CPU time per response, µs. */
  readonly cpu: number;
  readonly errors: number;
}

async function load(
  child: Child,
  scenario: Scenario,
  list: autocannon.Request[] = requests(scenario),
): Promise<Measure> {
  const cpuBefore = cpuMicros(child.process.pid);
  const result = await autocannon({
    url: child.base,
    connections: CONNECTIONS,
    duration: DURATION_S,
    requests: list,
  });
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    cpu: (cpuMicros(child.process.pid) - cpuBefore) / Math.max(1, result['2xx'] + result.non2xx),
    errors: result.errors + result.timeouts + result.non2xx,
  };
}

function average(values: readonly Measure[]): Measure {
  const mean = (pick: (m: Measure) => number) =>
    values.reduce((sum, m) => sum + pick(m), 0) / values.length;
  return {
    rps: mean((m) => m.rps),
    p50: mean((m) => m.p50),
    p99: mean((m) => m.p99),
    cpu: mean((m) => m.cpu),
    errors: mean((m) => m.errors),
  };
}

async function bench(): Promise<void> {
  const upstream = await new FakeUpstream(realisticPayload(200)).start();
  const ours = await startCommand(upstream.url);
  const reference = await startChild('reference', upstream.url);
  // The bare server sends a fixed body as large as our average GET /proxy answer.
  let bytes = 0;
  const sample = requests('GET').slice(0, 100);
  for (const request of sample) {
    const response = await fetch(`${ours.base}${request.path}`, {
      headers: { authorization: CLIENT_KEY },
    });
    bytes += (await response.text()).length;
  }
  const bodyBytes = Math.round(bytes / sample.length);
  const bare = await startChild('bare', upstream.url, bodyBytes);
  // The same with the answer cache off: every request evaluates all 200 flags.
  const uncached = await startCommand(upstream.url, { PROXY_ANSWER_CACHE_BYTES: '0' });
  console.log(
    `200 flags, 500 contexts, ${CONNECTIONS} connections, ${DURATION_S} s per run, ${ROUNDS} rounds; average GET body ${bodyBytes} B`,
  );

  const runs = new Map<string, Measure[]>();
  const record = (key: string, measure: Measure) => {
    runs.set(key, [...(runs.get(key) ?? []), measure]);
    console.log(
      `  ${key.padEnd(16)} ${measure.rps.toFixed(0).padStart(8)} req/s  p50 ${measure.p50} ms  p99 ${measure.p99} ms  CPU ${measure.cpu.toFixed(0)} µs/req${measure.errors ? `  errors ${measure.errors}` : ''}`,
    );
  };
  for (let round = 1; round <= ROUNDS; round++) {
    console.log(`round ${round}`);
    for (const scenario of ['GET', 'POST'] as const) {
      const order =
        round % 2 === 1
          ? [
              ['ours', ours],
              ['reference', reference],
            ]
          : [
              ['reference', reference],
              ['ours', ours],
            ];
      for (const [name, child] of order as Array<[string, Child]>)
        record(`${name} ${scenario}`, await load(child, scenario));
    }
    record('uncached GET', await load(uncached, 'GET'));
    record('bare GET', await load(bare, 'GET'));
  }

  const rss = {
    ours: peakRssMb(ours.process.pid),
    reference: peakRssMb(reference.process.pid),
    bare: peakRssMb(bare.process.pid),
    uncached: peakRssMb(uncached.process.pid),
  };
  const rows: string[][] = [
    ['scenario', 'server', 'req/s', 'p50 ms', 'p99 ms', 'CPU µs/req', 'peak RSS MB'],
  ];
  const summary: Record<string, Measure> = {};
  for (const [key, measures] of runs) summary[key] = average(measures);
  for (const key of Object.keys(summary)) {
    const [server, scenario] = key.split(' ') as [keyof typeof rss, string];
    const m = summary[key] as Measure;
    rows.push([
      scenario,
      server,
      m.rps.toFixed(0),
      m.p50.toFixed(1),
      m.p99.toFixed(1),
      m.cpu.toFixed(0),
      rss[server].toFixed(0),
    ]);
  }
  console.log('\nsummary (mean of rounds)');
  const widths = (rows[0] as string[]).map((_, i) =>
    Math.max(...rows.map((row) => (row[i] as string).length)),
  );
  for (const row of rows)
    console.log(`| ${row.map((cell, i) => cell.padEnd(widths[i] as number)).join(' | ')} |`);
  console.log('\nratios (ours vs reference; targets: req/s ≥ 25×, p99 ≤ 1/10, RSS ≤ 1/2)');
  for (const scenario of ['GET', 'POST']) {
    const mine = summary[`ours ${scenario}`] as Measure;
    const theirs = summary[`reference ${scenario}`] as Measure;
    console.log(
      `  ${scenario.padEnd(4)} req/s ${(mine.rps / theirs.rps).toFixed(1)}×   p99 1/${(theirs.p99 / Math.max(mine.p99, 0.001)).toFixed(1)}   CPU per request 1/${(theirs.cpu / Math.max(mine.cpu, 0.001)).toFixed(1)}`,
    );
  }
  const uncachedGet = summary['uncached GET'] as Measure;
  const referenceGet = summary['reference GET'] as Measure;
  console.log(
    `  GET with the answer cache off: req/s ${(uncachedGet.rps / referenceGet.rps).toFixed(1)}×   p99 1/${(referenceGet.p99 / Math.max(uncachedGet.p99, 0.001)).toFixed(1)}   CPU per request 1/${(referenceGet.cpu / Math.max(uncachedGet.cpu, 0.001)).toFixed(1)}`,
  );
  console.log(
    `  RSS  ${(rss.ours / rss.reference).toFixed(2)} of the reference's peak (cache off: ${(rss.uncached / rss.reference).toFixed(2)})`,
  );
  const bareGet = summary['bare GET'] as Measure;
  console.log(
    `  ours GET = ${((summary['ours GET'] as Measure).rps / bareGet.rps).toFixed(2)} of a bare node:http server (${bareGet.rps.toFixed(0)} req/s, ${bareGet.cpu.toFixed(0)} µs CPU per request)`,
  );

  for (const child of [ours, reference, bare, uncached]) child.process.kill('SIGTERM');
  await upstream.stop();
}

const ENVIRONMENTS = ['development', 'production', 'staging'] as const;
const tokenOf = (type: 'client' | 'frontend', environment: string) =>
  `*:${environment}.bench-${type}-${'0'.repeat(32)}`;

/** `realisticPayload(200)` with every name (and dependency) prefixed: each environment its own flags. */
function environmentPayload(environment: string) {
  const payload = realisticPayload(200);
  const rename = (name: string) => `${environment}.${name}`;
  return {
    ...payload,
    features: payload.features.map((feature) => ({
      ...feature,
      name: rename(feature.name),
      dependencies: feature.dependencies?.map((d) => ({ ...d, feature: rename(d.feature) })),
    })),
  };
}

/**
 * Many environments: flags-proxy with Edge-style tokens syncing one environment, then three
 * (3 × 200 flags), answering `GET /api/frontend` with frontend tokens (validated upstream) of each
 * environment in turn over the same 500 contexts. The cost per request should not depend on how
 * many environments the proxy serves; memory grows by the added environments' snapshots and the
 * answers kept for them.
 */
async function benchEnvironments(): Promise<void> {
  const upstream = new EdgeUpstream(
    new Map(ENVIRONMENTS.map((environment) => [environment, environmentPayload(environment)])),
  );
  for (const environment of ENVIRONMENTS)
    for (const type of ['client', 'frontend'] as const)
      upstream.tokens.set(tokenOf(type, environment), { type, environment, projects: ['*'] });
  await upstream.start();
  const edgeStyle = (environments: readonly string[]) => ({
    FLAGS_API_TOKEN: environments.map((environment) => tokenOf('client', environment)).join(','),
    FLAGS_PROXY_CLIENT_KEYS: '',
  });
  const one = await startCommand(upstream.url, edgeStyle(ENVIRONMENTS.slice(0, 1)));
  const three = await startCommand(upstream.url, edgeStyle(ENVIRONMENTS));
  const contexts = realisticContexts(500);
  const list = (environments: readonly string[]) =>
    contexts.map((context, i) =>
      evaluationRequest(
        'GET',
        context,
        tokenOf('frontend', environments[i % environments.length] as string),
        '/api/frontend',
      ),
    );
  console.log(
    `\nenvironments: GET /api/frontend with frontend tokens, 500 contexts, ${ENVIRONMENTS.length} × 200 flags`,
  );
  const runs = { one: [] as Measure[], three: [] as Measure[] };
  for (let round = 1; round <= ROUNDS; round++) {
    for (const [name, child, environments] of [
      ['one', one, ENVIRONMENTS.slice(0, 1)],
      ['three', three, ENVIRONMENTS],
    ] as const) {
      const measure = await load(child, 'GET', list(environments));
      runs[name].push(measure);
      console.log(
        `  ${`${name} environment${name === 'one' ? '' : 's'}`.padEnd(18)} ${measure.rps.toFixed(0).padStart(8)} req/s  p99 ${measure.p99} ms  CPU ${measure.cpu.toFixed(0)} µs/req${measure.errors ? `  errors ${measure.errors}` : ''}`,
      );
    }
  }
  const oneEnv = average(runs.one);
  const threeEnv = average(runs.three);
  const rssOne = peakRssMb(one.process.pid);
  const rssThree = peakRssMb(three.process.pid);
  const snapshotMb = snapshotHeapMb();
  console.log(
    `  three environments: req/s ${((threeEnv.rps / oneEnv.rps) * 100).toFixed(0)} % of one (target ≥ 90 %), CPU ${threeEnv.cpu.toFixed(0)} vs ${oneEnv.cpu.toFixed(0)} µs/req`,
  );
  console.log(
    `  peak RSS ${rssOne.toFixed(0)} → ${rssThree.toFixed(0)} MB (+${(rssThree - rssOne).toFixed(1)} MB) for 2 more environments: their snapshots take ${(2 * snapshotMb).toFixed(1)} MB of heap (${snapshotMb.toFixed(1)} MB each, compiled here), the rest is the answers kept for their contexts (≤ PROXY_ANSWER_CACHE_BYTES each)`,
  );
  for (const child of [one, three]) child.process.kill('SIGTERM');
  await upstream.stop();
}

/** Heap one compiled 200-flag snapshot takes, measured in this process (MB). */
function snapshotHeapMb(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) return Number.NaN;
  const keep: unknown[] = [];
  gc();
  const before = process.memoryUsage().heapUsed;
  for (let i = 0; i < 10; i++) keep.push(compile(environmentPayload(`env${i}`)));
  gc();
  const after = process.memoryUsage().heapUsed;
  keep.length = 0;
  return (after - before) / 10 / 2 ** 20;
}

buildProxy();
// BENCH_PART=environments runs only the environments part (BENCH_PART=main only the first).
const part = process.env.BENCH_PART;
if (part !== 'environments') await bench();
if (part !== 'main') await benchEnvironments();
