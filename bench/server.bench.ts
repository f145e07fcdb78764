// `npm run bench server`: flags-server's import time (5,000 flags × 3 strategies, ≈ 5.7 MB) on PGlite
// and PostgreSQL, and GET /api/client/features req/s (600 flags) with and without a matching ETag,
// against a flags-server process listening on a real port (autocannon in this process).
// Reference figures: unleash-server 8.2 measured on this machine class (issue 4).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { buildApp, type Database, loadConfig, openPglite, openPostgres } from '@flags/server';
import autocannon from 'autocannon';
import pg from 'pg';
import { seededRandom } from '../test/helpers/seeded-random.js';

const REFERENCE = { fullReqPerSec: 107, notModifiedReqPerSec: 713, importSecondsFor400: 20.5 };
const TARGET = { importSeconds: 5, ratio: 10 };
const ADMIN = 'bench-admin-token';
const CLIENT = '*:development.bench-client-token';
const POSTGRES_URL = process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';

/** An import payload of `count` flags with 3 strategies each (constraints, variants, tags). */
function importPayload(count: number) {
  const rand = seededRandom(4242);
  const pick = <T>(list: readonly T[]) => list[Math.floor(rand() * list.length)]!;
  const regions = ['eu-west', 'eu-north', 'us-east', 'us-west', 'ap-south', 'ap-east', 'sa-east'];
  const features = [];
  const featureStrategies = [];
  const featureEnvironments = [];
  const featureTags = [];
  for (let i = 0; i < count; i++) {
    const name = `bench.flag-${String(i).padStart(5, '0')}-${pick(['checkout', 'search', 'profile', 'billing'])}`;
    features.push({
      name,
      type: pick(['release', 'experiment', 'operational', 'kill-switch']),
      description: `Benchmark flag ${i}`,
      impressionData: rand() < 0.2,
    });
    featureStrategies.push(
      {
        name: 'flexibleRollout',
        featureName: name,
        sortOrder: 0,
        parameters: {
          rollout: String(Math.floor(rand() * 100)),
          stickiness: 'userId',
          groupId: name,
        },
        constraints: [
          { contextName: 'region', operator: 'IN', values: [pick(regions), pick(regions)] },
          {
            contextName: 'appVersion',
            operator: 'SEMVER_GT',
            value: `${Math.floor(rand() * 5)}.${Math.floor(rand() * 20)}.0`,
          },
        ],
        variants: [
          {
            name: 'control',
            weight: 500,
            weightType: 'variable',
            stickiness: 'userId',
            payload: { type: 'string', value: 'a' },
          },
          { name: 'treatment', weight: 500, weightType: 'variable', stickiness: 'userId' },
        ],
      },
      {
        name: 'userWithId',
        featureName: name,
        sortOrder: 1,
        parameters: {
          userIds: Array.from({ length: 3 }, () => `user-${Math.floor(rand() * 1e6)}`).join(','),
        },
      },
      {
        name: 'default',
        featureName: name,
        sortOrder: 2,
        parameters: {},
        constraints: [
          { contextName: 'email', operator: 'STR_ENDS_WITH', values: ['@example.com'] },
        ],
      },
    );
    featureEnvironments.push({ name, featureName: name, enabled: rand() < 0.7 });
    featureTags.push({
      featureName: name,
      tagType: 'team',
      tagValue: pick(['payments', 'growth', 'platform']),
    });
  }
  return {
    project: 'default',
    environment: 'development',
    data: {
      features,
      featureStrategies,
      featureEnvironments,
      contextFields: [{ name: 'region', legalValues: regions.map((value) => ({ value })) }],
      featureTags,
      tagTypes: [{ name: 'team', description: 'Owning team' }],
      segments: [],
      dependencies: [],
    },
  };
}

const config = (overrides = {}) =>
  loadConfig(
    {},
    { adminTokens: [ADMIN], clientTokens: [CLIENT], logLevel: 'silent', ...overrides },
  );

async function timeImport(label: string, db: Database, body: string): Promise<number | undefined> {
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
      throw new Error(`${label} import failed: ${response.statusCode} ${response.body}`);
    const flags = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM features');
    const strategies = await db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM feature_strategies',
    );
    console.log(
      `import on ${label.padEnd(10)} ${seconds.toFixed(2)} s  (${flags[0]!.n} flags, ${strategies[0]!.n} strategies; ` +
        `target ≤ ${TARGET.importSeconds} s: ${seconds <= TARGET.importSeconds ? 'met' : 'MISSED'}; ` +
        `unleash-server: ${REFERENCE.importSecondsFor400} s for 400 flags ≈ ${((REFERENCE.importSecondsFor400 / 400) * 5000).toFixed(0)} s extrapolated, ` +
        `bodies over ~1 MB refused)`,
    );
    return seconds;
  } finally {
    await app.close();
  }
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function cannon(url: string, headers: Record<string, string>) {
  const result = await autocannon({ url, headers, connections: 20, duration: 8, pipelining: 1 });
  if (result.non2xx > 0 && !headers['if-none-match'])
    throw new Error(`non-2xx responses: ${result.non2xx}`);
  return result;
}

/**
 * The most any server can do here for an uncompressed body of this size: a bare node:http
 * process answering every request with the same buffer, measured with the same autocannon setup.
 */
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
    const result = await cannon(`http://127.0.0.1:${port}/`, {});
    return result.requests.average;
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
  }
}

async function clientApiThroughput(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'flags-bench-'));
  const port = await freePort();
  const main = fileURLToPath(new URL('../packages/server/src/main.ts', import.meta.url));
  const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', main], {
    env: {
      ...process.env,
      DATABASE_URL: '',
      DATA_DIR: join(dir, 'data'),
      SERVER_PORT: String(port),
      SERVER_HOST: '127.0.0.1',
      FLAGS_ADMIN_TOKENS: ADMIN,
      FLAGS_CLIENT_TOKENS: CLIENT,
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        if ((await fetch(`${base}/health`)).ok) break;
      } catch {
        if (attempt > 200) throw new Error('flags-server did not start');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    const imported = await fetch(`${base}/api/admin/features-batch/import`, {
      method: 'POST',
      headers: { authorization: ADMIN, 'content-type': 'application/json' },
      body: JSON.stringify(importPayload(600)),
    });
    if (imported.status !== 200) throw new Error(`import failed: ${imported.status}`);
    const url = `${base}/api/client/features`;
    const first = await fetch(url, { headers: { authorization: CLIENT } });
    const etag = first.headers.get('etag')!;
    const size = (await first.arrayBuffer()).byteLength;
    const notModified = await fetch(url, {
      headers: { authorization: CLIENT, 'if-none-match': etag },
    });
    if (notModified.status !== 304) throw new Error(`expected 304, got ${notModified.status}`);
    await cannon(url, { authorization: CLIENT }); // warm-up
    const full = await cannon(url, { authorization: CLIENT });
    const gzipped = await cannon(url, {
      authorization: CLIENT,
      'accept-encoding': 'gzip, deflate',
    });
    const cached = await cannon(url, { authorization: CLIENT, 'if-none-match': etag });
    const ceiling = await rawCeiling(
      Buffer.from(await (await fetch(url, { headers: { authorization: CLIENT } })).arrayBuffer()),
    );
    const line = (label: string, reqPerSec: number, reference: number) =>
      console.log(
        `GET /api/client/features ${label.padEnd(10)} ${reqPerSec.toFixed(0).padStart(6)} req/s  ` +
          `(${(reqPerSec / reference).toFixed(1)}× unleash-server's ${reference} req/s; target ≥ ${TARGET.ratio}×: ` +
          `${reqPerSec / reference >= TARGET.ratio ? 'met' : 'MISSED'})`,
      );
    const zipped = await fetch(url, {
      headers: { authorization: CLIENT, 'accept-encoding': 'gzip' },
    });
    const zippedSize = Number(zipped.headers.get('content-length'));
    await zipped.arrayBuffer();
    console.log(
      `client API body: 600 flags, ${(size / 1024).toFixed(0)} KiB (gzip ${(zippedSize / 1024).toFixed(0)} KiB); ` +
        '20 connections, 8 s each, server process on PGlite',
    );
    console.log(
      `machine ceiling: a bare node:http server sending the same ${(size / 1024).toFixed(0)} KiB buffer: ` +
        `${ceiling.toFixed(0)} req/s (${(ceiling / REFERENCE.fullReqPerSec).toFixed(1)}× the reference)`,
    );
    line('200 full', full.requests.average, REFERENCE.fullReqPerSec);
    line('200 gzip', gzipped.requests.average, REFERENCE.fullReqPerSec);
    line('304', cached.requests.average, REFERENCE.notModifiedReqPerSec);
    console.log(
      `  latency p50/p99: full ${full.latency.p50}/${full.latency.p99} ms, gzip ${gzipped.latency.p50}/${gzipped.latency.p99} ms, ` +
        `304 ${cached.latency.p50}/${cached.latency.p99} ms`,
    );
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const body = JSON.stringify(importPayload(5000));
  console.log(`import payload: 5000 flags × 3 strategies, ${(body.length / 1e6).toFixed(2)} MB`);

  const pglite = await openPglite();
  await timeImport('PGlite', pglite, body);
  await timeImport('PGlite', pglite, body).then(() =>
    console.log('  (second run: re-import of the same payload)'),
  );
  await pglite.close();

  const schema = `bench_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 3000 });
  let reachable = true;
  try {
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${schema}`);
  } catch (error) {
    reachable = false;
    console.log(
      `import on PostgreSQL skipped: ${POSTGRES_URL} unreachable (${(error as Error).message})`,
    );
  }
  if (reachable) {
    const db = openPostgres(POSTGRES_URL, { schema });
    try {
      await timeImport('PostgreSQL', db, body);
      await timeImport('PostgreSQL', db, body).then(() =>
        console.log('  (second run: re-import of the same payload)'),
      );
    } finally {
      await db.close();
      await admin.query(`DROP SCHEMA ${schema} CASCADE`);
      await admin.end();
    }
  }

  await clientApiThroughput();
}

await main();
