// `npm run bench admin`: flags-server's single-flag admin API against unleash-server 8.2, both
// measured in this run on this machine, each in its own process on a database of its own in local
// PostgreSQL (TEST_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test; unleash-server
// started by the e2e harness, test/helpers/unleash-server.ts). Both hold the same flags
// (bench/server-payload.ts: 3 strategies each), imported into flags-server in one request and
// into unleash-server in batches under its body limit; at 2,000 flags, then 10,000:
// - toggle latency: `POST /api/admin/projects/default/features/:feature/environments/development/on|off`
//   with an admin token, random flags each turned to the state it is not in, one request at a
//   time, each server in a phase of its own (the same flags and actions for both), after an
//   untimed warm-up; each request timed from its start to its whole answer;
// - the floor: a bare node:http server answering the same toggles after one round trip to
//   PostgreSQL each (bench/bare-toggle-server.mjs, on tables of its own);
// and at 10,000 flags, on flags-server:
// - a streaming unleash-client (`experimentalMode: { type: 'streaming' }`) sees each toggle: from
//   the toggle's answer received to the client's `changed` event that carries the new state;
// - the flag list's first page: `GET /api/admin/search/features?limit=50&offset=0` (unleash-server
//   too), and in Chromium the time from navigation to a usable list (the first row's switch
//   visible and enabled) for a signed-in Admin.
// First, the setup a team meets on day one, on both servers started afresh: 2,000 flags created
// through the Admin API (create, then one strategy, 100 flags in flight), an unleash-client
// connected (streaming to flags-server; polling to unleash-server, whose open-source edition has no
// streaming), then every 33rd flag turned on and then off, one request at a time, no warm-up:
// toggle latency as the first person to click meets it; then the same on other flags with the
// client gone, and the CPU of each toggle on the server and in the app (the unleash-client runs in
// a process of its own, bench/sdk-app.mjs, as in an app: not in the event loop that times).
// BENCH_FLAGS (default "2000,10000"), BENCH_TOGGLES (200), BENCH_STREAM_TOGGLES (120) shorten it;
// BENCH_PART=created runs only the day-one setup, BENCH_PART=imported only the rest.

import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import type { ExportResult } from '@flags/schemas';
import pg from 'pg';
import type { Browser } from 'playwright-core';
import { Unleash } from 'unleash-client';
import { buildUi } from '../scripts/build-ui.js';
import { adminRequest } from '../scripts/demo/seed.js';
import {
  freePort,
  printedPort,
  spawnCommand,
  spawnEntry,
  waitUntilHealthy,
} from '../test/helpers/processes.js';
import { seededRandom } from '../test/helpers/seeded-random.js';
import { stopSdk } from '../test/helpers/unleash-sdk.js';
import type { UnleashServer } from '../test/helpers/unleash-server.js';
import { POSTGRES_URL, withDatabase } from './bench-database.js';
import { importPayload } from './server-payload.js';

const FLAG_COUNTS = (process.env.BENCH_FLAGS ?? '2000,10000').split(',').map(Number);
const TOGGLES = Number(process.env.BENCH_TOGGLES ?? 200);
const WARMUP_TOGGLES = 30;
const STREAM_TOGGLES = Number(process.env.BENCH_STREAM_TOGGLES ?? 120);
const SEARCH_REQUESTS = 200;
const UI_LOADS = 20;
/** Flags per unleash-server import request: its body limit is about 1 MB. */
const UNLEASH_BATCH = 400;
const ENVIRONMENT = 'development';
const TARGET = { toggleSpeedup: 5, streamP99Ms: 100 };
/** The day-one setup: flags created through the Admin API, how many at once, toggles after. */
const CREATED = { flags: 2000, inFlight: 100, every: 33, toggled: 30 };
const CREATED_TARGET = { median: 1.5, p95: 3 };
const PART = process.env.BENCH_PART;
const ADMIN = 'bench-admin-token';
const CLIENT = '*:development.bench-admin-client';
const USER = { username: 'bench-admin', password: 'bench-admin-password-long-enough' };
const CHROMIUM = '/usr/bin/chromium';
// The harness reads TEST_DATABASE_URL when loaded; the bench defaults it to local PostgreSQL.
process.env.TEST_DATABASE_URL = POSTGRES_URL;
const { startUnleashServer, UNLEASH_VERSION } = await import('../test/helpers/unleash-server.js');
const MAIN = fileURLToPath(new URL('../packages/server/src/main.ts', import.meta.url));
const BARE_TOGGLE_SERVER = fileURLToPath(new URL('./bare-toggle-server.mjs', import.meta.url));
const SDK_APP = fileURLToPath(new URL('./sdk-app.mjs', import.meta.url));

type Payload = ReturnType<typeof importPayload>;

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

const ms = (value: number) => `${value.toFixed(1).padStart(6)} ms`;
const summary = (values: readonly number[]) =>
  `median ${ms(percentile(values, 50))}, p99 ${ms(percentile(values, 99))}`;

/** The flags `from` to `to` of `payload` as an import document of their own. */
function slice(payload: Payload, from: number, to: number): Payload {
  const { data } = payload;
  return {
    ...payload,
    data: {
      ...data,
      features: data.features.slice(from, to),
      // Three strategies a flag, in flag order.
      featureStrategies: data.featureStrategies.slice(from * 3, to * 3),
      featureEnvironments: data.featureEnvironments.slice(from, to),
      featureTags: data.featureTags.slice(from, to),
    },
  };
}

/** A server whose admin API the bench drives: its process and its PostgreSQL database. */
interface AdminTarget {
  readonly name: string;
  readonly url: string;
  readonly token: string;
  readonly pid: number;
  readonly database: string;
}

/** Kernel clock ticks per second (`getconf CLK_TCK`), the unit of /proc CPU times. */
const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout) || 100;

/** User + system CPU time of process `pid` so far, in ms (0 once it is gone). */
function cpuMs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS) * 1000;
  } catch {
    return 0;
  }
}

/**
 * CPU ms spent so far by `target`'s process and by the PostgreSQL backends serving its database:
 * what a toggle costs, which other load on the machine moves far less than its latency.
 */
async function cpuOf(target: AdminTarget): Promise<Map<number, number>> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    const { rows } = await client.query<{ pid: number }>(
      'SELECT pid FROM pg_stat_activity WHERE datname = $1',
      [target.database],
    );
    return new Map([target.pid, ...rows.map((row) => row.pid)].map((pid) => [pid, cpuMs(pid)]));
  } finally {
    await client.end();
  }
}

/** CPU ms between two `cpuOf` readings (processes present in either). */
function cpuSpent(before: Map<number, number>, after: Map<number, number>): number {
  let spent = 0;
  for (const [pid, ms] of after) spent += ms - (before.get(pid) ?? 0);
  return spent;
}

/** Sends one admin request and reads its whole answer; the milliseconds it took. */
async function timed(target: AdminTarget, method: string, path: string): Promise<number> {
  const start = performance.now();
  const response = await fetch(`${target.url}${path}`, {
    method,
    headers: { authorization: target.token },
  });
  const text = await response.text();
  const took = performance.now() - start;
  if (!response.ok) {
    throw new Error(`${target.name}: ${method} ${path} answered ${response.status}: ${text}`);
  }
  return took;
}

const togglePath = (flag: string, on: boolean) =>
  `/api/admin/projects/default/features/${flag}/environments/${ENVIRONMENT}/${on ? 'on' : 'off'}`;

/** Which flags are on in `development`, by name: the bench's view of both servers' state. */
type FlagStates = Map<string, boolean>;

/** Random flags of `states`, each turned to the state it is not in (and recorded so). */
function* toggles(states: FlagStates, random: () => number) {
  const names = [...states.keys()];
  for (;;) {
    const flag = names[Math.floor(random() * names.length)]!;
    const on = !states.get(flag);
    states.set(flag, on);
    yield { flag, on };
  }
}

/** Time left after a target's toggles for work it does after answering, counted as its CPU. */
const SETTLE_MS = 2000;

/** How long the reference is left to settle after a failed phase, before its one retry. */
const RETRY_AFTER_MS = 60_000;

/** One target's toggle phase: its latencies, its CPU per toggle, the states it left. */
interface TogglePhase {
  readonly latencies: number[];
  readonly cpuPerToggle: number;
  readonly states: FlagStates;
  readonly failed?: undefined;
}

/** `count` toggles on `target` after an untimed warm-up, starting from `states` (left as they are). */
async function togglePhase(
  target: AdminTarget,
  states: FlagStates,
  count: number,
): Promise<TogglePhase> {
  const own: FlagStates = new Map(states);
  const next = toggles(own, seededRandom(count + states.size));
  const latencies: number[] = [];
  let cpuBefore = new Map<number, number>();
  for (let i = 0; i < WARMUP_TOGGLES + count; i++) {
    if (i === WARMUP_TOGGLES) cpuBefore = await cpuOf(target);
    const { flag, on } = next.next().value!;
    latencies.push(await timed(target, 'POST', togglePath(flag, on)));
  }
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
  const cpuPerToggle = cpuSpent(cpuBefore, await cpuOf(target)) / count;
  return { latencies: latencies.slice(WARMUP_TOGGLES), cpuPerToggle, states: own };
}

/**
 * `count` toggles (the same flags in the same order) sent to flags-server and then to the
 * reference, each in a phase of its own. The phases are apart, and each target's CPU is counted
 * until its work after answering has settled: one server's work after its answers
 * (unleash-server's takes about ten times its answer's CPU) then never lands in the other's
 * timings. A reference that fails (unleash-server answering 500 while busy after a large import)
 * is left to settle and tried once more; a second failure is reported, not hidden.
 */
async function toggleLatencies(
  ours: AdminTarget,
  reference: AdminTarget,
  states: FlagStates,
  count: number,
): Promise<{ ours: TogglePhase; reference: TogglePhase | { readonly failed: string } }> {
  const mine = await togglePhase(ours, states, count);
  let theirs: TogglePhase | { readonly failed: string } | undefined;
  for (let attempt = 1; !theirs; attempt++) {
    try {
      theirs = await togglePhase(reference, states, count);
    } catch (error) {
      if (attempt === 2) theirs = { failed: (error as Error).message };
      else await sleep(RETRY_AFTER_MS);
    }
  }
  for (const [flag, on] of mine.states) states.set(flag, on);
  return { ours: mine, reference: theirs };
}

/** flags-server as its users start it, on a database of its own. */
async function withFlagsServer<T>(use: (target: AdminTarget) => Promise<T>): Promise<T> {
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
    const url = `http://127.0.0.1:${port}`;
    try {
      await waitUntilHealthy(`${url}/health`, server.child, { output: server.output });
      return await use({
        name: 'flags-server',
        url,
        token: ADMIN,
        pid: server.child.pid!,
        database: new URL(databaseUrl).pathname.slice(1),
      });
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });
}

/**
 * The floor of a toggle on this machine (`bench/bare-toggle-server.mjs`), on a database of its own
 * holding the flags of `states` in the tables it writes.
 */
async function withBareToggleServer<T>(
  states: FlagStates,
  use: (target: AdminTarget) => Promise<T>,
): Promise<T> {
  return withDatabase(async (databaseUrl) => {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      await client.query(`
        CREATE TABLE features (name text PRIMARY KEY, version integer NOT NULL DEFAULT 1);
        CREATE TABLE feature_environments (
          feature_name text REFERENCES features, environment text, enabled boolean NOT NULL,
          PRIMARY KEY (feature_name, environment));
        CREATE TABLE events (
          id bigserial PRIMARY KEY, type text NOT NULL, created_at timestamptz NOT NULL DEFAULT now(),
          feature_name text, environment text);
        CREATE TABLE revision (id integer PRIMARY KEY, config bigint NOT NULL);
        INSERT INTO revision VALUES (1, 0);`);
      await client.query('INSERT INTO features (name) SELECT unnest($1::text[])', [
        [...states.keys()],
      ]);
      await client.query(
        `INSERT INTO feature_environments
         SELECT name, $2, enabled FROM unnest($1::text[], $3::boolean[]) AS t(name, enabled)`,
        [[...states.keys()], ENVIRONMENT, [...states.values()]],
      );
    } finally {
      await client.end();
    }
    const bare = spawnCommand(process.execPath, [BARE_TOGGLE_SERVER], {
      DATABASE_URL: databaseUrl,
    });
    try {
      return await use({
        name: 'bare node:http',
        url: `http://127.0.0.1:${await printedPort(bare)}`,
        token: '',
        pid: bare.child.pid!,
        database: new URL(databaseUrl).pathname.slice(1),
      });
    } finally {
      bare.child.kill('SIGTERM');
      await bare.exited;
    }
  });
}

/** Imports flags `from` to `to` into both servers; the seconds each took. */
async function importBoth(
  payload: Payload,
  from: number,
  to: number,
  ours: AdminTarget,
  unleash: UnleashServer,
): Promise<{ ours: number; theirs: number }> {
  let start = performance.now();
  await adminRequest(ours.url, ours.token, 'POST', '/api/admin/features-batch/import', {
    ...slice(payload, from, to),
  });
  const oursSeconds = (performance.now() - start) / 1000;
  start = performance.now();
  for (let batch = from; batch < to; batch += UNLEASH_BATCH) {
    const { data } = slice(payload, batch, Math.min(batch + UNLEASH_BATCH, to));
    await unleash.importFlags(data as unknown as ExportResult, ENVIRONMENT);
  }
  return { ours: oursSeconds, theirs: (performance.now() - start) / 1000 };
}

/**
 * `count` toggles on flags-server seen by a streaming unleash-client: from each toggle's answer
 * received (and from its request's start) to the client's `changed` event carrying the new state.
 */
async function streamingLatencies(
  ours: AdminTarget,
  states: FlagStates,
  count: number,
): Promise<{ fromAnswer: number[]; fromStart: number[]; hydrationMs: number }> {
  const hydrationStart = performance.now();
  const client = new Unleash({
    url: `${ours.url}/api/`,
    appName: 'bench-admin-streaming',
    customHeaders: { authorization: CLIENT },
    disableMetrics: true,
    // Streaming only: a polling fallback would take a minute.
    refreshInterval: 60_000,
    experimentalMode: { type: 'streaming' },
  } as ConstructorParameters<typeof Unleash>[0]);
  client.on('error', () => {});
  client.on('warn', () => {});
  try {
    await new Promise((resolve) => client.once('synchronized', resolve));
    const hydrationMs = performance.now() - hydrationStart;
    const seen = (flag: string, on: boolean) =>
      new Promise<number>((resolve) => {
        const check = () => {
          if (client.getFeatureToggleDefinition(flag)?.enabled !== on) return;
          client.off('changed', check);
          resolve(performance.now());
        };
        client.on('changed', check);
      });
    const next = toggles(states, seededRandom(count));
    const fromAnswer: number[] = [];
    const fromStart: number[] = [];
    for (let i = 0; i < count; i++) {
      const { flag, on } = next.next().value!;
      const arrival = seen(flag, on);
      const start = performance.now();
      const took = await timed(ours, 'POST', togglePath(flag, on));
      const arrivedAt = await arrival;
      fromAnswer.push(arrivedAt - (start + took));
      fromStart.push(arrivedAt - start);
      // Toggles a few ms apart, not back to back: each one's arrival is its own.
      await sleep(20);
    }
    return { fromAnswer, fromStart, hydrationMs };
  } finally {
    stopSdk(client);
  }
}

/** In Chromium, signed in: navigation to the first row's switch visible and enabled, `loads` times. */
async function uiLoadTimes(url: string, loads: number): Promise<number[]> {
  const { chromium } = await import('playwright-core');
  let browser: Browser | undefined;
  try {
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    });
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await page.goto(url);
    await page.getByLabel('User name').fill(USER.username);
    await page.getByLabel('Password').fill(USER.password);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('heading', { name: 'Flags', exact: true }).waitFor();
    const firstSwitch = page.locator('table.flags tbody tr').first().getByRole('switch').first();
    const times: number[] = [];
    for (let i = 0; i < loads; i++) {
      const start = performance.now();
      await page.goto(url, { waitUntil: 'commit' });
      await firstSwitch.waitFor({ state: 'visible' });
      while (!(await firstSwitch.isEnabled())) await sleep(1);
      times.push(performance.now() - start);
    }
    return times;
  } finally {
    await browser?.close();
  }
}

/** The first page of the flag search, `count` times after 20 untimed. */
async function searchLatencies(target: AdminTarget, count: number): Promise<number[]> {
  const path = '/api/admin/search/features?limit=50&offset=0';
  const times: number[] = [];
  for (let i = 0; i < 20 + count; i++) {
    const took = await timed(target, 'GET', path);
    if (i >= 20) times.push(took);
  }
  return times;
}

/** Creates `count` flags through `target`'s Admin API, each with one strategy, `inFlight` at once. */
/** The names of the day-one flags. */
const dayOneNames = (count: number) =>
  Array.from({ length: count }, (_, i) => `day-one-${String(i).padStart(5, '0')}`);

async function createThroughApi(target: AdminTarget, count: number): Promise<string[]> {
  const names = dayOneNames(count);
  const send = async (method: string, path: string, body: unknown) => {
    const response = await fetch(`${target.url}${path}`, {
      method,
      headers: { authorization: target.token, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    if (!response.ok)
      throw new Error(`${target.name}: ${method} ${path}: ${response.status} ${text}`);
  };
  for (let from = 0; from < count; from += CREATED.inFlight) {
    await Promise.all(
      names.slice(from, from + CREATED.inFlight).map(async (name) => {
        await send('POST', '/api/admin/projects/default/features', { name, type: 'release' });
        await send(
          'POST',
          `/api/admin/projects/default/features/${name}/environments/${ENVIRONMENT}/strategies`,
          {
            name: 'flexibleRollout',
            parameters: { rollout: '50', stickiness: 'default', groupId: name },
            constraints: [],
          },
        );
      }),
    );
  }
  return names;
}

/** One day-one toggle phase: latencies, and CPU per toggle of the server and of the app's SDK. */
interface DayOnePhase {
  readonly latencies: number[];
  readonly serverCpu: number;
  /** `undefined` with no app connected. */
  readonly appCpu: number | undefined;
}

/**
 * Every 33rd flag from `offset` turned on, then off, one request at a time, without warm-up;
 * `app` is the process of the connected app, if any.
 */
async function dayOneToggles(
  target: AdminTarget,
  names: readonly string[],
  offset: number,
  app?: number,
): Promise<DayOnePhase> {
  const picked = names.filter((_, i) => i % CREATED.every === offset).slice(0, CREATED.toggled);
  const latencies: number[] = [];
  const serverBefore = await cpuOf(target);
  const appBefore = app === undefined ? 0 : cpuMs(app);
  for (const on of [true, false]) {
    for (const flag of picked) latencies.push(await timed(target, 'POST', togglePath(flag, on)));
  }
  await sleep(SETTLE_MS);
  return {
    latencies,
    serverCpu: cpuSpent(serverBefore, await cpuOf(target)) / latencies.length,
    appCpu: app === undefined ? undefined : (cpuMs(app) - appBefore) / latencies.length,
  };
}

/**
 * The day-one setup on `target`: flags created through its Admin API, then toggles with an app
 * connected (bench/sdk-app.mjs: an unleash-client, `streaming` or polling, in a process of its
 * own) and, on other flags, with none.
 */
async function dayOneOn(
  target: AdminTarget,
  clientToken: string,
  streaming: boolean,
): Promise<{ connected: DayOnePhase; alone: DayOnePhase; createSeconds: number }> {
  const start = performance.now();
  const names = await createThroughApi(target, CREATED.flags);
  const createSeconds = (performance.now() - start) / 1000;
  const app = spawnCommand(
    process.execPath,
    [SDK_APP],
    {
      SDK_URL: `${target.url}/api/`,
      SDK_TOKEN: clientToken,
      SDK_STREAMING: streaming ? '1' : '0',
    },
    { stdin: 'pipe' },
  );
  let connected: DayOnePhase;
  try {
    await Promise.race([
      new Promise<void>((resolve) => {
        const seen = () => {
          if (app.output().includes('synchronized')) resolve();
          else setTimeout(seen, 50);
        };
        seen();
      }),
      app.exited.then((code) => {
        throw new Error(`the SDK app exited (${code}): ${app.output()}`);
      }),
    ]);
    connected = await dayOneToggles(target, names, 0, app.child.pid);
  } finally {
    app.child.stdin?.end();
    await app.exited;
  }
  return { connected, alone: await dayOneToggles(target, names, 1), createSeconds };
}

const p95 = (values: readonly number[]) => percentile(values, 95);

/** The day-one setup on both servers, each started afresh for it; prints both and the ratios. */
async function dayOne(): Promise<void> {
  const unleash = await startUnleashServer({
    env: { TOKEN_AUTHENTICATION_RATE_LIMIT_PER_MINUTE: '100000000' },
  });
  try {
    const theirs: AdminTarget = {
      name: 'unleash-server',
      url: unleash.url,
      token: unleash.adminToken,
      pid: unleash.pid,
      database: unleash.database,
    };
    const mine = await withFlagsServer((ours) => dayOneOn(ours, CLIENT, true));
    const clientToken = await unleash.createToken({ type: 'client', environment: ENVIRONMENT });
    const reference = await dayOneOn(theirs, clientToken, false);
    // The floor in the same setup: a process started afresh answering the same toggles, without
    // warm-up, after one round trip to PostgreSQL each.
    const names = dayOneNames(CREATED.flags);
    const floor = await withBareToggleServer(new Map(names.map((name) => [name, false])), (bare) =>
      dayOneToggles(bare, names, 0),
    );
    console.log(
      `day one: ${CREATED.flags.toLocaleString('en')} flags created through the Admin API ` +
        `(flag + one strategy, ${CREATED.inFlight} in flight: flags-server ${mine.createSeconds.toFixed(1)} s, ` +
        `unleash-server ${reference.createSeconds.toFixed(1)} s); every ${CREATED.every}rd flag on ` +
        `and off, ${CREATED.toggled * 2} toggles one at a time, no warm-up`,
    );
    const line = (phase: DayOnePhase) =>
      `median ${ms(percentile(phase.latencies, 50))}, p95 ${ms(p95(phase.latencies))}; ` +
      `CPU a toggle: server + PostgreSQL ${phase.serverCpu.toFixed(2)} ms` +
      (phase.appCpu === undefined ? '' : `, the app's SDK ${phase.appCpu.toFixed(2)} ms`);
    const ratios = (phase: DayOnePhase) => {
      const median =
        percentile(reference.connected.latencies, 50) / percentile(phase.latencies, 50);
      const tail = p95(reference.connected.latencies) / p95(phase.latencies);
      const met = median >= CREATED_TARGET.median && tail >= CREATED_TARGET.p95;
      return (
        `${median.toFixed(1)}× at the median, ${tail.toFixed(1)}× at p95 ` +
        `(target ≥ ${CREATED_TARGET.median}× and ≥ ${CREATED_TARGET.p95}×: ${met ? 'met' : 'MISSED'})`
      );
    };
    console.log(`    flags-server, streaming unleash-client connected  ${line(mine.connected)}`);
    console.log(`    flags-server, no client                           ${line(mine.alone)}`);
    console.log(
      `    unleash-server, polling unleash-client connected  ${line(reference.connected)}`,
    );
    console.log(`    unleash-server, no client                         ${line(reference.alone)}`);
    console.log(`    floor: bare node:http, one round trip a toggle    ${line(floor)}`);
    console.log(`    flags-server against unleash-server with clients: ${ratios(mine.connected)}`);
    console.log(`    flags-server without its client:                  ${ratios(mine.alone)}`);
    console.log(
      '    (the app is an unleash-client in a process of its own on the same cores: a streaming ' +
        'one gets the toggles as they happen and rewrites its backup file of every flag for ' +
        'each frame; a polling one fetches every 15 s)',
    );
  } finally {
    await unleash.stop();
  }
}

async function main(): Promise<void> {
  if (PART !== 'imported') await dayOne();
  if (PART === 'created') return;
  const counts = [...FLAG_COUNTS].sort((a, b) => a - b);
  const largest = counts.at(-1)!;
  const payload = importPayload(largest);
  const states: FlagStates = new Map(
    payload.data.featureEnvironments.map(({ featureName, enabled }) => [featureName, enabled]),
  );
  await buildUi();
  // Its search limit would answer the timed searches with 429.
  const unleash = await startUnleashServer({
    env: {
      SEARCH_FEATURES_RATE_LIMIT_PER_MINUTE: '100000000',
      // It refuses more than 5,000 flags by default.
      UNLEASH_FEATURE_FLAGS_LIMIT: '20000',
      TOKEN_AUTHENTICATION_RATE_LIMIT_PER_MINUTE: '100000000',
    },
    // Past a few thousand flags its frontend API takes longer than the tests' wait to show an import.
    settleTimeoutMs: 180_000,
  });
  try {
    await withFlagsServer(async (ours) => {
      await adminRequest(ours.url, ADMIN, 'POST', '/api/admin/user-admin', {
        ...USER,
        name: 'Bench Admin',
        rootRole: 'Admin',
      });
      const theirs: AdminTarget = {
        name: 'unleash-server',
        url: unleash.url,
        token: unleash.adminToken,
        pid: unleash.pid,
        database: unleash.database,
      };
      console.log(
        `flags-server and unleash-server ${UNLEASH_VERSION}, each on PostgreSQL, the same flags ` +
          `(3 strategies each); environment ${ENVIRONMENT}`,
      );
      let imported = 0;
      for (const count of counts) {
        const took = await importBoth(payload, imported, count, ours, unleash);
        console.log(
          `${count.toLocaleString('en')} flags (imported ${(count - imported).toLocaleString('en')}: ` +
            `flags-server ${took.ours.toFixed(1)} s in one request, unleash-server ${took.theirs.toFixed(1)} s ` +
            `in requests of ${UNLEASH_BATCH})`,
        );
        imported = count;
        const inUse: FlagStates = new Map(
          payload.data.features.slice(0, count).map(({ name }) => [name, states.get(name)!]),
        );
        // The floor first: no server's work after its answers is left to slow it down.
        const floor = await withBareToggleServer(inUse, (bare) =>
          togglePhase(bare, inUse, TOGGLES),
        );
        const result = await toggleLatencies(ours, theirs, inUse, TOGGLES);
        for (const [name, on] of inUse) states.set(name, on);
        const mine = result.ours;
        console.log(
          `  toggle, ${TOGGLES} after ${WARMUP_TOGGLES} untimed, one at a time, each server in a phase of its own`,
        );
        const cpu = (value: number) =>
          `${value.toFixed(2)} ms CPU a toggle (process + its PostgreSQL backends)`;
        console.log(`    flags-server   ${summary(mine.latencies)}, ${cpu(mine.cpuPerToggle)}`);
        console.log(
          `    bare node:http ${summary(floor.latencies)}, ${cpu(floor.cpuPerToggle)}: one exchange ` +
            'with PostgreSQL a toggle (flag locked, state, event, revision, commit), the floor',
        );
        const reference = result.reference;
        if (reference.failed !== undefined) {
          console.log(
            `    unleash-server failed twice, ${RETRY_AFTER_MS / 1000} s apart: ${reference.failed}`,
          );
          console.log(`    (target ≥ ${TARGET.toggleSpeedup}×: not measurable at this count)`);
          continue;
        }
        console.log(
          `    unleash-server ${summary(reference.latencies)}, ${cpu(reference.cpuPerToggle)}`,
        );
        const speedup = percentile(reference.latencies, 50) / percentile(mine.latencies, 50);
        const p99Speedup = percentile(reference.latencies, 99) / percentile(mine.latencies, 99);
        console.log(
          `    flags-server ${speedup.toFixed(1)}× faster at the median, ${p99Speedup.toFixed(1)}× at p99 ` +
            `(target ≥ ${TARGET.toggleSpeedup}×: ${Math.min(speedup, p99Speedup) >= TARGET.toggleSpeedup ? 'met' : 'MISSED'}); ` +
            `${(reference.cpuPerToggle / mine.cpuPerToggle).toFixed(1)}× less CPU a toggle`,
        );
      }

      console.log(`${largest.toLocaleString('en')} flags, flags-server:`);
      const stream = await streamingLatencies(ours, states, STREAM_TOGGLES);
      const streamP99 = percentile(stream.fromAnswer, 99);
      console.log(
        `  a streaming unleash-client sees a toggle (${STREAM_TOGGLES} toggles; it hydrated in ${(stream.hydrationMs / 1000).toFixed(1)} s)`,
      );
      console.log(
        `    from the toggle's answer  ${summary(stream.fromAnswer)} (target p99 ≤ ${TARGET.streamP99Ms} ms: ${streamP99 <= TARGET.streamP99Ms ? 'met' : 'MISSED'})`,
      );
      console.log(`    from the request's start  ${summary(stream.fromStart)}`);

      const search = await searchLatencies(ours, SEARCH_REQUESTS);
      const searchTheirs = await searchLatencies(theirs, SEARCH_REQUESTS);
      console.log(
        `  GET /api/admin/search/features?limit=50&offset=0, ${SEARCH_REQUESTS} requests one at a time`,
      );
      console.log(`    flags-server   ${summary(search)}`);
      console.log(`    unleash-server ${summary(searchTheirs)}`);
      if (existsSync(CHROMIUM)) {
        const loads = await uiLoadTimes(ours.url, UI_LOADS + 1);
        console.log(
          `  web UI in Chromium, signed in: navigation to the first row's switch visible and enabled, ${UI_LOADS} loads after one untimed`,
        );
        console.log(`    ${summary(loads.slice(1))}`);
      } else {
        console.log(`  web UI: skipped, ${CHROMIUM} is not installed`);
      }
    });
  } finally {
    await unleash.stop();
  }
}

await main();
