// `npm run bench proxy`: flags-proxy against @unleash/proxy 1.4.19 (the reference) and a bare
// node:http server, each in its own child process, on fake upstreams serving 5, 200 and 1,000
// realistic flags. flags-proxy runs as its users start it, the `flags-proxy` command with its
// defaults. autocannon (in this process: 32 connections, ~10 s per run) sends two shapes of
// traffic: "unique", every GET a never-seen context (a new sessionId, written by `setupRequest`),
// and "recurring", GET and POST /proxy cycling through 500 contexts, as polling SDKs repeat
// theirs. Servers alternate over 2 rounds; it prints req/s, p50/p99 latency, server CPU µs per
// request, peak RSS and the ratios. Each run is first warmed up untimed (`BENCH_WARMUP_S`, 2 s),
// so that no figure includes a server compiling its hot code. CPU per request (the child's user +
// system time over the responses it sent) depends far less on other load on the machine than
// req/s does. "Of bare" divides by the bare server driven by the fixed request list; the bare
// server driven by the unique shape too shows how fast the load generator can send never-seen
// requests at all, and "the floor" (that bare server also parsing each context and evaluating
// every flag with the engine) what evaluation alone leaves of bare.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { get } from 'node:http';
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
/** Untimed load each run gets before its first measured one: V8 compiles the hot code meanwhile. */
const WARMUP_S = Number(process.env.BENCH_WARMUP_S ?? 2);
const CONNECTIONS = 32;
const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** Kernel clock ticks per second (`getconf CLK_TCK`), the unit of /proc CPU times. */
const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout) || 100;

/** The one answer of the bare server and the floor, `send(response)`: `BYTES` bytes, two headers. */
const FIXED_ANSWER = `
    const body = Buffer.from('{"toggles":[' + '"x",'.repeat(Math.max(0, Math.floor((BYTES - 16) / 4))) + '"x"]}');
    const send = (response) => {
      response.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length });
      response.end(body);
    };`;

/**
 * The reference, the bare server and the floor, in plain JavaScript so that no TypeScript loader
 * inflates the measured RSS: each starts, then prints `{"port": n}`.
 */
const CHILD_CODE: Record<'reference' | 'bare' | 'floor', string> = {
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
    ${FIXED_ANSWER}
    const server = createServer((request, response) => {
      request.resume();
      request.on('end', () => send(response));
    });
    server.listen(0, '127.0.0.1', () => report(server.address().port));`,
  // The bare server that also does what no server answering a context can skip: it reads the
  // context from the query (flags-proxy's parser) and evaluates every flag of the upstream's
  // payload with @flags/engine, then sends the same fixed body. What the engine leaves of bare.
  floor: `
    const { createServer } = await import('node:http');
    const { compile } = await import('@flags/engine');
    const { contextFromQueryString } = await import('./packages/proxy/dist/context/query-string.js');
    const payload = await (await fetch(UPSTREAM + '/client/features', { headers: { authorization: 'bench-token' } })).json();
    const snapshot = compile(payload);
    const defaults = { appName: 'bench', environment: undefined, ignoreCallerRemoteAddress: false };
    const visitor = { visit() {} };
    ${FIXED_ANSWER}
    const server = createServer((request, response) => {
      const url = request.url;
      const query = url.indexOf('?');
      const context = contextFromQueryString(query < 0 ? '' : url.slice(query + 1), request.socket.remoteAddress, defaults);
      snapshot.evaluateEach(context, visitor);
      send(response);
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
  role: 'reference' | 'bare' | 'floor',
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

/** Users the unique-context shape draws from. */
const USERS = 20_000;

/**
 * The unique-context shape, as browsers send it: every request a new `sessionId` (a counter) and a
 * `userId` drawn from 20,000 users, the other fields from the 500 realistic contexts. autocannon's
 * `setupRequest` writes each path as the request goes out (a request list would recur).
 */
/** Where the session counter of the unique shape stands: shared by all its runs, so none recurs. */
interface Sessions {
  next: number;
}

function uniqueRequests(
  sessions: Sessions,
  headers: Record<string, string> = {},
): autocannon.Request[] {
  const rest = realisticContexts(500).map((context) => {
    const query = new URLSearchParams({ remoteAddress: context.remoteAddress });
    for (const [name, value] of Object.entries(context.properties))
      query.append(`properties[${name}]`, value);
    return query.toString();
  });
  return [
    {
      method: 'GET',
      headers: { authorization: CLIENT_KEY, ...headers },
      setupRequest: (request) => {
        const n = sessions.next++;
        // A multiplicative step spreads consecutive requests over the users.
        request.path = `/proxy?userId=user-${(n * 7919) % USERS}&sessionId=s-${n}&${rest[n % rest.length]}`;
        return request;
      },
    },
  ];
}

type Shape = 'unique' | 'recurring';

/** What browsers send: every evaluation answer of the compressed run is asked for so. */
const BROWSER_ACCEPT_ENCODING = 'gzip, deflate, br';

function shapeRequests(run: Run, sessions: Sessions): autocannon.Request[] {
  const headers: Record<string, string> =
    run.acceptEncoding === undefined ? {} : { 'accept-encoding': run.acceptEncoding };
  return run.shape === 'unique' ? uniqueRequests(sessions, headers) : requests(run.scenario);
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
  list: autocannon.Request[],
  seconds = DURATION_S,
): Promise<Measure> {
  const cpuBefore = cpuMicros(child.process.pid);
  const result = await autocannon({
    url: child.base,
    connections: CONNECTIONS,
    duration: seconds,
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

/** Highest memory figures of a flags-proxy process seen by `sampleMemory`, MB. */
interface MemoryPeaks {
  heapTotal: number;
  heapUsed: number;
  external: number;
  /** Resident memory backed by files (the node binary and libraries), /proc `RssFile`. */
  rssFile: number;
}

/**
 * Samples a flags-proxy's memory once a second while `during` runs: V8's heap and external memory
 * (Buffers and other memory V8 does not manage) from its Prometheus endpoint, and the file-backed
 * part of its resident set. What is left of the peak RSS is the allocator's and V8's own overhead.
 */
async function sampleMemory<T>(child: Child, peaks: MemoryPeaks, during: Promise<T>): Promise<T> {
  let running = true;
  const sampling = (async () => {
    while (running) {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const text = await (await fetch(`${child.base}/proxy/internal-backstage/prometheus`)).text();
      const metric = (name: string) =>
        Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? Number.NaN) / 2 ** 20;
      peaks.heapTotal = Math.max(peaks.heapTotal, metric('nodejs_heap_size_total_bytes'));
      peaks.heapUsed = Math.max(peaks.heapUsed, metric('nodejs_heap_size_used_bytes'));
      peaks.external = Math.max(peaks.external, metric('nodejs_external_memory_bytes'));
      const status = readFileSync(`/proc/${child.process.pid}/status`, 'utf8');
      peaks.rssFile = Math.max(
        peaks.rssFile,
        Number(/RssFile:\s+(\d+) kB/.exec(status)?.[1]) / 1024,
      );
    }
  })();
  try {
    return await during;
  } finally {
    running = false;
    await sampling;
  }
}

const noPeaks = (): MemoryPeaks => ({ heapTotal: 0, heapUsed: 0, external: 0, rssFile: 0 });

/** Average `GET /proxy` body of `list`'s first 100 requests as `child` answers them, bytes. */
async function averageBody(child: Child, list: autocannon.Request[]): Promise<number> {
  let bytes = 0;
  const count = 100;
  for (let i = 0; i < count; i++) {
    const template = list[i % list.length] as autocannon.Request;
    const setup = template.setupRequest as
      | ((request: autocannon.Request, context: object) => autocannon.Request)
      | undefined;
    const request = setup ? setup({ ...template }, {}) : template;
    const response = await fetch(`${child.base}${request.path}`, {
      headers: { authorization: CLIENT_KEY },
    });
    bytes += (await response.arrayBuffer()).byteLength;
  }
  return Math.round(bytes / count);
}

/** Average bytes on the wire of the first answers of `list` asked for with `acceptEncoding`. */
async function averageEncodedBody(
  child: Child,
  list: autocannon.Request[],
  acceptEncoding: string,
): Promise<number> {
  let bytes = 0;
  const count = 100;
  for (let i = 0; i < count; i++) {
    const template = list[i % list.length] as autocannon.Request;
    const setup = template.setupRequest as
      | ((request: autocannon.Request, context: object) => autocannon.Request)
      | undefined;
    const request = setup ? setup({ ...template }, {}) : template;
    // node:http, not fetch: fetch decodes the body.
    bytes += await new Promise<number>((resolve, reject) => {
      get(
        `${child.base}${request.path}`,
        { headers: { authorization: CLIENT_KEY, 'accept-encoding': acceptEncoding } },
        (response) => {
          let length = 0;
          response.on('data', (chunk: Buffer) => {
            length += chunk.length;
          });
          response.on('end', () => resolve(length));
        },
      ).on('error', reject);
    });
  }
  return Math.round(bytes / count);
}

/** Flag counts of the unique-context runs: how the cost grows with the number of flags. */
const FLAG_COUNTS = [5, 200, 1000] as const;

interface Server {
  readonly name: string;
  readonly child: Child;
  /** Memory breakdown sampled under load (flags-proxy only). */
  readonly memory?: MemoryPeaks;
}

interface Run {
  /** `Accept-Encoding` of every request (none: no header). */
  readonly acceptEncoding?: string;
  readonly flags: number;
  readonly shape: Shape;
  readonly scenario: Scenario;
  readonly server: Server;
}

async function bench(): Promise<void> {
  const upstreams = new Map<number, FakeUpstream>();
  for (const flags of FLAG_COUNTS)
    upstreams.set(flags, await new FakeUpstream(realisticPayload(flags)).start());
  const upstreamOf = (flags: number) => (upstreams.get(flags) as FakeUpstream).url;
  // One process per shape and flag count, so that each peak RSS is that load's alone.
  const servers: Server[] = [];
  const runs: Run[] = [];
  const bareOf = new Map<number, Server>();
  const bodyOf = new Map<number, number>();
  const sessions: Sessions = { next: 0 };
  let encodedBytes = Number.NaN;
  for (const flags of FLAG_COUNTS) {
    const unique: Server = {
      name: `flags-proxy ${flags}`,
      child: await startCommand(upstreamOf(flags)),
      memory: noPeaks(),
    };
    const bytes = await averageBody(unique.child, uniqueRequests(sessions));
    bodyOf.set(flags, bytes);
    // The bare server sends a fixed body as large as our average answer at this many flags.
    const bare: Server = { name: 'bare node:http', child: await startChild('bare', '', bytes) };
    bareOf.set(flags, bare);
    servers.push(unique, bare);
    runs.push({ flags, shape: 'unique', scenario: 'GET', server: unique });
    if (flags === 200) {
      // Edge mode compresses every answer (`compression`, on in edge mode; set here explicitly so
      // that compression is the one difference): the same never-seen requests, as browsers send
      // them, against a flags-proxy that compresses.
      const compressed: Server = {
        name: 'flags-proxy, compression on',
        child: await startCommand(upstreamOf(flags), { PROXY_COMPRESSION: 'true' }),
        memory: noPeaks(),
      };
      encodedBytes = await averageEncodedBody(
        compressed.child,
        uniqueRequests(sessions),
        BROWSER_ACCEPT_ENCODING,
      );
      servers.push(compressed);
      runs.push({
        flags,
        shape: 'unique',
        scenario: 'GET',
        server: compressed,
        acceptEncoding: BROWSER_ACCEPT_ENCODING,
      });
      const recurring: Server = {
        name: 'flags-proxy',
        child: await startCommand(upstreamOf(flags)),
        memory: noPeaks(),
      };
      const referenceUnique: Server = {
        name: '@unleash/proxy',
        child: await startChild('reference', upstreamOf(flags)),
      };
      const referenceRecurring: Server = {
        name: '@unleash/proxy',
        child: await startChild('reference', upstreamOf(flags)),
      };
      servers.push(recurring, referenceUnique, referenceRecurring);
      runs.push({ flags, shape: 'unique', scenario: 'GET', server: referenceUnique });
      for (const scenario of ['GET', 'POST'] as const) {
        runs.push({ flags, shape: 'recurring', scenario, server: recurring });
        runs.push({ flags, shape: 'recurring', scenario, server: referenceRecurring });
      }
    }
    runs.push({ flags, shape: 'recurring', scenario: 'GET', server: bare });
    // The same bare server under the unique shape: how fast the load generator itself can send
    // never-seen requests (it writes every path as it goes), the ceiling of any server in that run.
    if (flags === 200) {
      runs.push({ flags, shape: 'unique', scenario: 'GET', server: bare });
      // The floor under the same requests: the most any server evaluating with the engine can
      // answer in this run.
      const floor: Server = {
        name: 'floor (bare + engine)',
        child: await startChild('floor', upstreamOf(flags), bytes),
      };
      servers.push(floor);
      runs.push({ flags, shape: 'unique', scenario: 'GET', server: floor });
    }
  }
  console.log(
    `${CONNECTIONS} connections, ${DURATION_S} s per run, ${ROUNDS} rounds; unique: every GET a new sessionId over ${USERS} users; recurring: 500 contexts; average GET body ${FLAG_COUNTS.map((flags) => `${bodyOf.get(flags)} B at ${flags} flags`).join(', ')}`,
  );

  const measures = new Map<Run, Measure[]>();
  const label = (run: Run) =>
    `${run.flags} flags ${run.shape} ${run.scenario} ${run.server.name}`.padEnd(56);
  // The unique shape's warm-up draws from the same session counter, so no measured context recurs.
  if (WARMUP_S > 0) {
    console.log(`warm-up: ${WARMUP_S} s of each run, untimed`);
    for (const run of runs) await load(run.server.child, shapeRequests(run, sessions), WARMUP_S);
  }
  for (let round = 1; round <= ROUNDS; round++) {
    console.log(`round ${round}`);
    // Every other round runs in reverse, so that no server always goes first.
    for (const run of round % 2 === 1 ? runs : [...runs].reverse()) {
      const list = shapeRequests(run, sessions);
      const pending = load(run.server.child, list);
      const measure = run.server.memory
        ? await sampleMemory(run.server.child, run.server.memory, pending)
        : await pending;
      measures.set(run, [...(measures.get(run) ?? []), measure]);
      console.log(
        `  ${label(run)} ${measure.rps.toFixed(0).padStart(8)} req/s  p50 ${measure.p50} ms  p99 ${measure.p99} ms  CPU ${measure.cpu.toFixed(0)} µs/req${measure.errors ? `  errors ${measure.errors}` : ''}`,
      );
    }
  }

  const summary = new Map<Run, Measure>();
  for (const [run, list] of measures) summary.set(run, average(list));
  const find = (flags: number, shape: Shape, scenario: Scenario, name: string) => {
    for (const [run, measure] of summary)
      if (
        run.flags === flags &&
        run.shape === shape &&
        run.scenario === scenario &&
        run.acceptEncoding === undefined &&
        run.server.name.startsWith(name)
      )
        return measure;
    return undefined;
  };
  const rows: string[][] = [
    [
      'flags',
      'shape',
      'request',
      'server',
      'req/s',
      'p50 ms',
      'p99 ms',
      'CPU µs/req',
      'peak RSS MB',
      'of bare',
      '× reference',
    ],
  ];
  /** The bare server's measure at `flags` (fixed request list, the one "of bare" divides by). */
  const bareAt = (flags: number) =>
    summary.get(
      runs.find((r) => r.server === bareOf.get(flags) && r.shape === 'recurring') as Run,
    ) as Measure;
  for (const [run, m] of summary) {
    const bare = bareAt(run.flags);
    const isBare = run.server === bareOf.get(run.flags);
    const isFloor = run.server.name.startsWith('floor');
    const reference = find(run.flags, run.shape, run.scenario, '@unleash/proxy');
    const ours = run.server.name.startsWith('flags-proxy');
    rows.push([
      String(run.flags),
      isBare && run.shape === 'recurring' ? '—' : run.shape,
      `${run.scenario} /proxy${run.acceptEncoding === undefined ? '' : `, Accept-Encoding: ${run.acceptEncoding}`}`,
      run.server.name.replace(/ \d+$/, ''),
      m.rps.toFixed(0),
      m.p50.toFixed(1),
      m.p99.toFixed(1),
      m.cpu.toFixed(0),
      peakRssMb(run.server.child.process.pid).toFixed(0),
      ours || isFloor || (isBare && run.shape === 'unique') ? (m.rps / bare.rps).toFixed(2) : '',
      ours && reference ? `${(m.rps / reference.rps).toFixed(1)}×` : '',
    ]);
  }
  console.log(
    '\nsummary (mean of rounds; "of bare": req/s over the bare server\'s with the same body size)',
  );
  const widths = (rows[0] as string[]).map((_, i) =>
    Math.max(...rows.map((row) => (row[i] as string).length)),
  );
  for (const row of rows)
    console.log(`| ${row.map((cell, i) => cell.padEnd(widths[i] as number)).join(' | ')} |`);

  console.log(
    '\nratios at 200 flags (targets: unique ≥ 0.5 of bare and ≥ 40× the reference, p99 ≤ 1/10; recurring ≥ 0.6 of bare)',
  );
  for (const [shape, scenario] of [
    ['unique', 'GET'],
    ['recurring', 'GET'],
    ['recurring', 'POST'],
  ] as const) {
    const mine = find(200, shape, scenario, 'flags-proxy') as Measure;
    const theirs = find(200, shape, scenario, '@unleash/proxy') as Measure;
    const bare = find(200, 'recurring', 'GET', 'bare') as Measure;
    console.log(
      `  ${`${shape} ${scenario}`.padEnd(14)} req/s ${(mine.rps / theirs.rps).toFixed(1)}×   p99 1/${(theirs.p99 / Math.max(mine.p99, 0.001)).toFixed(1)}   CPU per request 1/${(theirs.cpu / Math.max(mine.cpu, 0.001)).toFixed(1)}   ${(mine.rps / bare.rps).toFixed(2)} of bare (${bare.rps.toFixed(0)} req/s, ${bare.cpu.toFixed(0)} µs CPU/req)`,
    );
  }
  const ceiling = find(200, 'unique', 'GET', 'bare') as Measure;
  const uniqueOurs = find(200, 'unique', 'GET', 'flags-proxy') as Measure;
  console.log(
    `  the unique shape's ceiling: the bare server driven by the same never-seen requests answers ${ceiling.rps.toFixed(0)} req/s, ${(ceiling.rps / bareAt(200).rps).toFixed(2)} of bare (the load generator writing each request is the limit); flags-proxy's unique GET is ${(uniqueOurs.rps / ceiling.rps).toFixed(2)} of it, and its CPU per request ${(ceiling.cpu / uniqueOurs.cpu).toFixed(2)} of the bare server's (${ceiling.cpu.toFixed(0)} µs)`,
  );
  const floor = find(200, 'unique', 'GET', 'floor') as Measure;
  console.log(
    `  the floor: the bare server that also reads each never-seen context and evaluates the 200 flags with the engine (same fixed body) answers ${floor.rps.toFixed(0)} req/s, ${(floor.rps / bareAt(200).rps).toFixed(2)} of bare, ${floor.cpu.toFixed(0)} µs CPU/req: reading the context and evaluating cost ${(floor.cpu - ceiling.cpu).toFixed(0)} µs; flags-proxy's unique GET is ${(uniqueOurs.rps / floor.rps).toFixed(2)} of the floor, ${(uniqueOurs.cpu - floor.cpu).toFixed(0)} µs more per request (the answer built, its headers, the answer cache, usage counts)`,
  );
  const compressedRun = [...summary.keys()].find((run) => run.acceptEncoding !== undefined) as Run;
  const compressed = summary.get(compressedRun) as Measure;
  const compressedRatio = compressed.rps / uniqueOurs.rps;
  console.log(
    `  compression (on in edge mode), the unique GET with Accept-Encoding: ${BROWSER_ACCEPT_ENCODING} (as browsers send it): ${compressed.rps.toFixed(0)} req/s, ${compressed.cpu.toFixed(0)} µs CPU/req, ${encodedBytes} B per answer, against ${uniqueOurs.rps.toFixed(0)} req/s, ${uniqueOurs.cpu.toFixed(0)} µs and ${bodyOf.get(200)} B uncompressed: ${compressedRatio.toFixed(2)} of the uncompressed throughput (target ≥ 0.8: ${compressedRatio >= 0.8 ? 'met' : 'not met'}), ${(compressed.cpu - uniqueOurs.cpu).toFixed(0)} µs more CPU per request`,
  );
  const uniqueServer = servers.find((s) => s.name === 'flags-proxy 200') as Server;
  const recurringServer = servers.find((s) => s.name === 'flags-proxy') as Server;
  const referencePeak = Math.max(
    ...servers
      .filter((s) => s.name === '@unleash/proxy')
      .map((s) => peakRssMb(s.child.process.pid)),
  );
  for (const [shape, server] of [
    ['unique', uniqueServer],
    ['recurring', recurringServer],
  ] as const) {
    const peak = peakRssMb(server.child.process.pid);
    const memory = server.memory as MemoryPeaks;
    console.log(
      `  peak RSS ${shape.padEnd(9)} ${peak.toFixed(0)} MB = ${(peak / referencePeak).toFixed(2)} of the reference's ${referencePeak.toFixed(0)} MB (target ≤ 100 MB, ≤ 0.6); highest samples: V8 heap ${memory.heapTotal.toFixed(0)} MB (${memory.heapUsed.toFixed(0)} used), external ${memory.external.toFixed(0)} MB, file-backed ${memory.rssFile.toFixed(0)} MB`,
    );
  }
  const cpuAt = (flags: number) => (find(flags, 'unique', 'GET', 'flags-proxy') as Measure).cpu;
  const growth = (cpuAt(1000) - cpuAt(200)) / 800;
  console.log(
    `  unique GET CPU per request: ${FLAG_COUNTS.map((flags) => `${cpuAt(flags).toFixed(0)} µs at ${flags} flags`).join(', ')}; 200 → 1000 flags ×${(cpuAt(1000) / cpuAt(200)).toFixed(2)} (linear in flags: ≤ ×5), ${(growth * 1000).toFixed(0)} ns per added flag (the 200-flag figure per flag: ${((cpuAt(200) / 200) * 1000).toFixed(0)} ns)`,
  );

  for (const server of servers) server.child.process.kill('SIGTERM');
  for (const upstream of upstreams.values()) await upstream.stop();
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
      const measure = await load(child, list(environments));
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
