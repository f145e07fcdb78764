// `npm run bench server`: flags-server against unleash-server 8.2, both measured in this run on
// this machine (unleash-server started by the e2e harness, test/helpers/unleash-server.ts, on a
// database of its own in local PostgreSQL; TEST_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test):
// - import: flags-server imports 5,000 flags × 3 strategies (≈ 6 MB) on PGlite and on
//   PostgreSQL, then the same again (a re-import); unleash-server refuses a body that large, so it
//   imports the first 400 flags of the same set, and the ratio is per flag;
// - GET /api/client/features, 400 flags × 3 strategies: each server in its own process on
//   PostgreSQL, autocannon in this process (20 connections), 200 uncompressed, 200 gzip (what SDK
//   fetches ask for) and 304 on a matching If-None-Match, the two servers one after the other for
//   each kind; each run is warmed up untimed first. Besides req/s it prints each server's CPU time
//   per answer (from /proc), which depends far less than req/s on other load on the machine: the
//   load generator shares the machine's cores with the server it measures.
// A bare node:http process sending flags-server's body shows what the machine allows for it.
// BENCH_DURATION_S (default 8) and BENCH_WARMUP_S (3) shorten the runs; BENCH_ONLY=import or
// BENCH_ONLY=client runs one half.

import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { get } from 'node:http';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import type { ExportResult } from '@flags/schemas';
import { buildApp, type Database, loadConfig, openPglite, openPostgres } from '@flags/server';
import autocannon from 'autocannon';
import { freePort, spawnEntry, waitUntilHealthy } from '../test/helpers/processes.js';
import type { UnleashServer } from '../test/helpers/unleash-server.js';
import { POSTGRES_URL, withDatabase } from './bench-database.js';
import { importPayload } from './server-payload.js';

const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 8);
const WARMUP_S = Number(process.env.BENCH_WARMUP_S ?? 3);
const ONLY = process.env.BENCH_ONLY;
const CONNECTIONS = 20;
const IMPORT_FLAGS = 5000;
/** The client API's flag count, and unleash-server's import (under its body limit). */
const SERVED_FLAGS = 400;
const ADMIN = 'bench-admin-token';
const CLIENT = '*:development.bench-client-token';
// The harness reads TEST_DATABASE_URL when loaded; the bench defaults it to local PostgreSQL.
process.env.TEST_DATABASE_URL = POSTGRES_URL;
const { startUnleashServer, UNLEASH_VERSION } = await import('../test/helpers/unleash-server.js');
const MAIN = fileURLToPath(new URL('../packages/server/src/main.ts', import.meta.url));

const ratio = (value: number) => `${value >= 10 ? value.toFixed(0) : value.toFixed(1)}×`;

const config = () =>
  loadConfig({}, { adminTokens: [ADMIN], clientTokens: [CLIENT], logLevel: 'silent' });

/** Imports `body` into a flags-server built on `db`; answers the seconds of the request. */
async function timeImport(db: Database, body: string): Promise<number> {
  const app = await buildApp(config(), { db, logger: false });
  try {
    const start = performance.now();
    const response = await app.inject({
      method: 'POST',
      url: '/api/admin/features-batch/import',
      headers: { authorization: ADMIN, 'content-type': 'application/json' },
      payload: body,
    });
    const seconds = (performance.now() - start) / 1000;
    if (response.statusCode !== 200)
      throw new Error(`import failed: ${response.statusCode} ${response.body}`);
    const [counted] = await db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM feature_strategies',
    );
    if (counted!.n !== IMPORT_FLAGS * 3) throw new Error(`${counted!.n} strategies stored`);
    return seconds;
  } finally {
    await app.close();
  }
}

async function importFigures(unleash: UnleashServer): Promise<void> {
  const { data } = importPayload(SERVED_FLAGS);
  const { importMs } = await unleash.importFlags(data as unknown as ExportResult, 'development');
  const referencePerFlag = importMs / 1000 / SERVED_FLAGS;
  const body = JSON.stringify(importPayload(IMPORT_FLAGS));
  console.log(
    `import: flags-server ${IMPORT_FLAGS} flags × 3 strategies (${(body.length / 1e6).toFixed(2)} MB), ` +
      `unleash-server ${UNLEASH_VERSION} the first ${SERVED_FLAGS} of them (it refuses bodies over about 1 MB)`,
  );
  console.log(
    `  unleash-server on PostgreSQL      ${(importMs / 1000).toFixed(2)} s for ${SERVED_FLAGS} flags, ` +
      `${(referencePerFlag * 1000).toFixed(2)} ms a flag ` +
      `(${((referencePerFlag * IMPORT_FLAGS) / 60).toFixed(1)} min for ${IMPORT_FLAGS} at that rate)`,
  );
  const line = (label: string, seconds: number) => {
    const perFlag = seconds / IMPORT_FLAGS;
    console.log(
      `  flags-server on ${label.padEnd(18)} ${seconds.toFixed(2)} s, ${(perFlag * 1000).toFixed(2)} ms a flag: ` +
        `${ratio(referencePerFlag / perFlag)} unleash-server's speed a flag`,
    );
  };
  const pglite = await openPglite();
  try {
    line('PGlite', await timeImport(pglite, body));
    line('PGlite, again', await timeImport(pglite, body));
  } finally {
    await pglite.close();
  }
  await withDatabase(async (url) => {
    const db = openPostgres(url);
    try {
      line('PostgreSQL', await timeImport(db, body));
      line('PostgreSQL, again', await timeImport(db, body));
    } finally {
      await db.close();
    }
  });
}

/** A server under load: where to send requests, with which token, and its process. */
interface Target {
  readonly name: string;
  readonly url: string;
  readonly token: string;
  readonly pid: number;
}

/** One measured run: autocannon's result and the server's CPU time per answer. */
interface Run {
  readonly result: autocannon.Result;
  readonly cpuMicrosPerRequest: number;
}

/** Kernel clock ticks per second (`getconf CLK_TCK`), the unit of /proc CPU times. */
const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout) || 100;

/** User + system CPU time of process `pid` so far, in µs. */
function cpuMicros(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS) * 1e6;
}

async function cannon(
  url: string,
  headers: Record<string, string>,
  expected: number,
  pid?: number,
) {
  const run = (duration: number) =>
    autocannon({ url, headers, connections: CONNECTIONS, duration, pipelining: 1 });
  if (WARMUP_S > 0) await run(WARMUP_S);
  const cpuBefore = pid === undefined ? 0 : cpuMicros(pid);
  const result = await run(DURATION_S);
  const cpu = pid === undefined ? 0 : cpuMicros(pid) - cpuBefore;
  const counts = Object.entries(result.statusCodeStats as Record<string, { count: number }>);
  const other = counts.filter(([status]) => Number(status) !== expected);
  if (other.length > 0 || result.errors > 0 || result.timeouts > 0) {
    const seen = counts.map(([status, { count }]) => `${count}× ${status}`).join(', ');
    throw new Error(`${url}: expected ${expected}, got ${seen}; ${result.errors} errors`);
  }
  return { result, cpuMicrosPerRequest: cpu / result.requests.total };
}

interface Prepared {
  readonly target: Target;
  readonly etag: string;
  readonly body: Buffer;
  readonly gzipBytes: number;
}

/** The size of a gzip answer as sent (fetch would decompress it; some servers send no length). */
function gzipSize(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    get(url, { headers }, (response) => {
      if (response.headers['content-encoding'] !== 'gzip') {
        response.resume();
        reject(new Error(`${url}: no gzip answer`));
        return;
      }
      let bytes = 0;
      response.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
      });
      response.on('end', () => resolve(bytes));
    }).on('error', reject);
  });
}

/** Waits until `target` serves `SERVED_FLAGS` flags; its body, gzip size and ETag. */
async function prepare(target: Target): Promise<Prepared> {
  const deadline = Date.now() + 30_000;
  const headers = { authorization: target.token };
  for (;;) {
    const response = await fetch(target.url, { headers });
    const body = Buffer.from(await response.arrayBuffer());
    const features = (JSON.parse(body.toString()) as { features?: unknown[] }).features ?? [];
    const etag = response.headers.get('etag');
    if (features.length === SERVED_FLAGS && etag) {
      const gzipBytes = await gzipSize(target.url, { ...headers, 'accept-encoding': 'gzip' });
      const again = await fetch(target.url, { headers: { ...headers, 'if-none-match': etag } });
      if (again.status !== 304) throw new Error(`${target.name}: ${again.status} on its ETag`);
      return { target, etag, body, gzipBytes };
    }
    if (Date.now() > deadline) throw new Error(`${target.name} serves ${features.length} flags`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** flags-server as its users start it, on a database of its own, serving `SERVED_FLAGS` flags. */
async function withFlagsServer<T>(use: (target: Target) => Promise<T>): Promise<T> {
  return withDatabase(async (databaseUrl) => {
    const port = await freePort();
    const server = spawnEntry(MAIN, {
      DATABASE_URL: databaseUrl,
      SERVER_PORT: String(port),
      SERVER_HOST: '127.0.0.1',
      FLAGS_ADMIN_TOKENS: ADMIN,
      FLAGS_CLIENT_TOKENS: CLIENT,
      LOG_LEVEL: 'warn',
    });
    const base = `http://127.0.0.1:${port}`;
    try {
      await waitUntilHealthy(`${base}/health`, server.child, { output: server.output });
      const imported = await fetch(`${base}/api/admin/features-batch/import`, {
        method: 'POST',
        headers: { authorization: ADMIN, 'content-type': 'application/json' },
        body: JSON.stringify(importPayload(SERVED_FLAGS)),
      });
      if (imported.status !== 200) throw new Error(`import failed: ${imported.status}`);
      await imported.arrayBuffer();
      return await use({
        name: 'flags-server',
        url: `${base}/api/client/features`,
        token: CLIENT,
        pid: server.child.pid!,
      });
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });
}

/** A bare node:http process answering every request with `body`: the machine's ceiling for it. */
async function rawCeiling(body: Buffer): Promise<number> {
  const port = await freePort();
  const source = `
    process.once('message', (base64) => {
      const body = Buffer.from(base64, 'base64');
      require('node:http').createServer((req, res) => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
        res.end(body);
      }).listen(${port}, '127.0.0.1', () => process.send('up'));
    });`;
  const child = spawn(process.execPath, ['-e', source], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  try {
    child.send(body.toString('base64'));
    await new Promise((resolve) => child.once('message', resolve));
    return (await cannon(`http://127.0.0.1:${port}/`, {}, 200)).result.requests.average;
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
  }
}

const KINDS = [
  { label: '200 uncompressed', headers: {}, status: 200 },
  { label: '200 gzip', headers: { 'accept-encoding': 'gzip, deflate' }, status: 200 },
  { label: '304', headers: {}, status: 304 },
] as const;

async function clientApiFigures(unleash: UnleashServer): Promise<void> {
  const reference: Target = {
    name: 'unleash-server',
    url: `${unleash.url}/api/client/features`,
    token: await unleash.createToken({ type: 'client', environment: 'development' }),
    pid: unleash.pid,
  };
  await withFlagsServer(async (ours) => {
    const servers = [await prepare(ours), await prepare(reference)] as const;
    console.log(
      `GET /api/client/features: ${SERVED_FLAGS} flags × 3 strategies, each server on PostgreSQL; ` +
        `${CONNECTIONS} connections, ${DURATION_S} s a run after ${WARMUP_S} s of warm-up, ` +
        'the two servers one after the other for each kind of request',
    );
    const kib = (bytes: number) => `${(bytes / 1024).toFixed(0)} KiB`;
    console.log(
      `  body: ${servers.map((s) => `${s.target.name} ${kib(s.body.length)} (gzip ${kib(s.gzipBytes)})`).join(', ')}`,
    );
    for (const kind of KINDS) {
      const runs: Run[] = [];
      for (const { target, etag } of servers) {
        const headers: Record<string, string> = { authorization: target.token, ...kind.headers };
        if (kind.status === 304) headers['if-none-match'] = etag;
        runs.push(await cannon(target.url, headers, kind.status, target.pid));
      }
      const [mine, theirs] = runs as [Run, Run];
      const describe = (run: Run) =>
        `${run.result.requests.average.toFixed(0).padStart(6)} req/s, ` +
        `${run.cpuMicrosPerRequest.toFixed(0).padStart(5)} µs CPU a request, ` +
        `p50/p99 ${run.result.latency.p50}/${run.result.latency.p99} ms`;
      console.log(`  ${kind.label}`);
      console.log(`    flags-server   ${describe(mine)}`);
      console.log(`    unleash-server ${describe(theirs)}`);
      console.log(
        `    flags-server: ${ratio(mine.result.requests.average / theirs.result.requests.average)} the requests a second, ` +
          `${ratio(theirs.cpuMicrosPerRequest / mine.cpuMicrosPerRequest)} less CPU a request`,
      );
    }
    const ceiling = await rawCeiling(servers[0].body);
    console.log(
      `  a bare node:http process sending flags-server's ${kib(servers[0].body.length)} body: ${ceiling.toFixed(0)} req/s`,
    );
  });
}

async function main(): Promise<void> {
  // Its SDK API limit (20,000 requests a minute per address) would answer the load with 429s.
  const unleash = await startUnleashServer({
    env: {
      SDK_API_RATE_LIMIT_PER_MINUTE: '100000000',
      TOKEN_AUTHENTICATION_RATE_LIMIT_PER_MINUTE: '100000000',
    },
  });
  try {
    // unleash-server's import comes first: the client API then serves the flags it imported.
    if (ONLY !== 'client') await importFigures(unleash);
    else
      await unleash.importFlags(
        importPayload(SERVED_FLAGS).data as unknown as ExportResult,
        'development',
      );
    if (ONLY !== 'import') await clientApiFigures(unleash);
  } finally {
    await unleash.stop();
  }
}

await main();
