import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import type { ExportResult, ImportConstraint } from '@flags/schemas';
import pg from 'pg';
import { adminRequest } from '../../scripts/demo/seed.js';
import { importParts } from './import-parts.js';
import { freePort, type SpawnedEntry, spawnCommand, waitUntilHealthy } from './processes.js';

/**
 * The real unleash-server (the npm package, a devDependency) as a reference upstream for tests:
 * one child process per start, on a fresh PostgreSQL database of its own.
 *
 * Each database is a copy of a template migrated once per unleash-server version
 * (`CREATE DATABASE … TEMPLATE …`), so a start does not pay for unleash-server's migrations.
 * unleash-server needs Node.js >= 22: it runs on the current binary when that is new enough, else
 * on the one `scripts/node-binary.mjs` caches (the binaries CI tests on).
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const MAIN = fileURLToPath(new URL('./unleash-server-main.mjs', import.meta.url));
const POSTGRES_URL = process.env.TEST_DATABASE_URL;

/** `false` when the harness can run; otherwise why not, for `describe(…, { skip })`. */
export const unleashServerSkip: string | false = POSTGRES_URL
  ? false
  : 'unleash-server needs PostgreSQL: set TEST_DATABASE_URL';

/** The environments of unleash-server's open-source edition; it has one project, `default`. */
export const UNLEASH_ENVIRONMENTS = ['development', 'production'] as const;
export type UnleashEnvironment = (typeof UNLEASH_ENVIRONMENTS)[number];

export const UNLEASH_VERSION = (
  JSON.parse(readFileSync(`${ROOT}node_modules/unleash-server/package.json`, 'utf8')) as {
    version: string;
  }
).version;

export interface UnleashServerOptions {
  /** More environment variables for unleash-server (they win over the harness's). */
  readonly env?: Record<string, string>;
  /** How long to wait for `/health` (default 60 s). */
  readonly startTimeoutMs?: number;
  /**
   * How long `importFlags` waits for the frontend API to show (and drop) its probe flag, each
   * (default 15 s). With thousands of flags it rebuilds its frontend view slower than that.
   */
  readonly settleTimeoutMs?: number;
}

export interface TokenRequest {
  readonly type: 'client' | 'frontend';
  readonly environment: UnleashEnvironment;
  /** Default: every project (`*`). */
  readonly projects?: readonly string[];
}

export interface SegmentDefinition {
  readonly name: string;
  readonly constraints: readonly ImportConstraint[];
}

export interface UnleashServer {
  /** Base URL, without a trailing slash (`http://127.0.0.1:<port>`). */
  readonly url: string;
  /** An admin API token (`*:*.<secret>`). */
  readonly adminToken: string;
  /** The database it runs on (dropped by `stop`). */
  readonly database: string;
  /** Its process id (the bench reads the CPU time it spends). */
  readonly pid: number;
  /** Time spent starting it; `templateMs` is set when this start had to build the template. */
  readonly timings: { readonly totalMs: number; readonly templateMs: number | undefined };
  /** Creates an API token and answers its secret. */
  createToken(request: TokenRequest): Promise<string>;
  /** Creates a global segment and answers its id (import documents name segments, it needs them first). */
  createSegment(segment: SegmentDefinition): Promise<number>;
  /**
   * Imports `data` into project `default` and `environment` with unleash-server's own batch import
   * (the document flags-server's import takes; one over its 500 kB body limit in parts, in order),
   * then waits until its frontend API serves it. Answers how long the import requests took (the
   * wait excluded).
   */
  importFlags(data: ExportResult, environment: UnleashEnvironment): Promise<{ importMs: number }>;
  /**
   * Returns once the frontend API serves everything written so far in `environment`, rows written
   * into its database directly included (its caches refresh on the probe's events).
   */
  settle(environment: UnleashEnvironment): Promise<void>;
  /** Ends the process and drops its database. Safe to call twice. */
  stop(): Promise<void>;
}

/** Starts unleash-server on a database of its own; `unleashServerSkip` says whether it can. */
export async function startUnleashServer(
  options: UnleashServerOptions = {},
): Promise<UnleashServer> {
  if (!POSTGRES_URL) throw new Error(String(unleashServerSkip));
  const started = Date.now();
  const node = nodeBinary();
  const { database, templateMs } = await createDatabase(POSTGRES_URL, node);
  const adminToken = `*:*.${randomBytes(16).toString('hex')}`;
  const adminPassword = randomBytes(12).toString('hex');
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const server = spawnCommand(
    node,
    [MAIN],
    {
      DATABASE_URL: databaseUrl(POSTGRES_URL, database),
      DATABASE_SSL: 'false',
      // The template is migrated already.
      DATABASE_DISABLE_MIGRATION: 'true',
      INIT_ADMIN_API_TOKENS: adminToken,
      UNLEASH_DEFAULT_ADMIN_USERNAME: 'admin',
      UNLEASH_DEFAULT_ADMIN_PASSWORD: adminPassword,
      HTTP_HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: 'error',
      // Feature-environment variants on new flags are refused (403) without it.
      UNLEASH_EXPERIMENTAL_ENABLE_LEGACY_VARIANTS: 'true',
      CHECK_VERSION: 'false',
      SEND_TELEMETRY: 'false',
      GRACEFUL_SHUTDOWN_ENABLE: 'false',
      // The tests' fetch keeps connections in one pool from test to test; unleash-server closing
      // one after its 15 idle seconds races a request that reuses it ("other side closed"),
      // which tests neither server. Idle connections are then closed by the client (or at stop).
      SERVER_KEEPALIVE_TIMEOUT: '600',
      ...options.env,
    },
    { detached: true, stdin: 'pipe' },
  );
  const killOnExit = () => killGroup(server);
  process.on('exit', killOnExit);
  // A test that forgets `stop` must not keep its file running: the exit hook and the closed
  // stdin pipe end the server.
  server.child.unref();
  for (const stream of [server.child.stdin, server.child.stdout, server.child.stderr]) {
    (stream as unknown as { unref?: () => void } | null)?.unref?.();
  }

  let stopped: Promise<void> | undefined;
  const stop = () => {
    stopped ??= (async () => {
      process.off('exit', killOnExit);
      server.child.ref(); // so this process waits for the exit below
      killGroup(server);
      await server.exited;
      await dropDatabase(POSTGRES_URL, database);
    })();
    return stopped;
  };

  try {
    await waitUntilHealthy(`${url}/health`, server.child, {
      timeoutMs: options.startTimeoutMs ?? 60_000,
      output: () => `\n${tail(server.output())}`,
    });
  } catch (error) {
    await stop();
    throw new Error(`unleash-server ${UNLEASH_VERSION} did not start: ${(error as Error).message}`);
  }

  const admin = (method: string, path: string, body?: unknown) =>
    adminRequest(url, adminToken, method, path, body);
  let tokenCount = 0;
  const createToken = async ({ type, environment, projects = ['*'] }: TokenRequest) => {
    const created = (await admin('POST', '/api/admin/api-tokens', {
      tokenName: `${type}-${environment}-${++tokenCount}`,
      type,
      environment,
      projects,
    })) as { secret: string };
    return created.secret;
  };

  // Imports refuse admin tokens (400); a personal access token of the admin user passes.
  let accessToken: Promise<string> | undefined;
  const personalAccessToken = () => {
    accessToken ??= createPersonalAccessToken(url, 'admin', adminPassword);
    return accessToken;
  };

  const probeTokens = new Map<UnleashEnvironment, Promise<string>>();
  let probeCount = 0;
  /**
   * Returns once the frontend API serves everything written so far in `environment`. Its cache
   * refreshes after a revision poll (every second) and nothing tells when: a probe flag made
   * after the writes is waited for, then archived and waited for until it is gone again.
   */
  const settle = async (environment: UnleashEnvironment) => {
    let token = probeTokens.get(environment);
    if (!token) {
      token = createToken({ type: 'frontend', environment });
      probeTokens.set(environment, token);
    }
    const secret = await token;
    const probe = `harness-probe-${++probeCount}`;
    const feature = `/api/admin/projects/default/features/${probe}`;
    await admin('POST', '/api/admin/projects/default/features', { name: probe });
    await admin('POST', `${feature}/environments/${environment}/on`);
    await waitForFrontend(url, secret, probe, true, options.settleTimeoutMs);
    await admin('DELETE', feature);
    await waitForFrontend(url, secret, probe, false, options.settleTimeoutMs);
  };

  return {
    url,
    adminToken,
    database,
    pid: server.child.pid!,
    timings: { totalMs: Date.now() - started, templateMs },
    createToken,
    async createSegment(segment) {
      const created = (await admin('POST', '/api/admin/segments', segment)) as { id: number };
      return created.id;
    },
    async importFlags(data, environment) {
      const token = await personalAccessToken();
      const importStarted = performance.now();
      for (const part of importParts(data)) {
        await adminRequest(url, token, 'POST', '/api/admin/features-batch/import', {
          project: 'default',
          environment,
          data: part,
        });
      }
      const importMs = performance.now() - importStarted;
      await settle(environment);
      return { importMs };
    },
    settle,
    stop,
  };
}

/** A Node.js binary unleash-server runs on (>= 22): this one, else the cached one. */
function nodeBinary(): string {
  if (Number(process.versions.node.split('.')[0]) >= 22) return process.execPath;
  const fetched = spawnSync(process.execPath, [`${ROOT}scripts/node-binary.mjs`, '22'], {
    encoding: 'utf8',
  });
  if (fetched.status !== 0) {
    throw new Error(`no Node.js 22 for unleash-server: ${fetched.stderr || fetched.error}`);
  }
  return fetched.stdout.trim();
}

/** The URL of `database` on the PostgreSQL server of `base`. */
export function databaseUrl(base: string, database: string): string {
  const url = new URL(base);
  url.pathname = `/${database}`;
  return url.href;
}

/** PostgreSQL names are unquoted identifiers here: only what the harness builds. */
const TEMPLATE = `unleash_template_${UNLEASH_VERSION.replace(/\W/g, '_')}`;
/** Serialises template building and copying across test files (one key for the harness). */
const TEMPLATE_LOCK = 7_413_202_611;

/** `use` with a client connected to `url`, ended afterwards. */
export async function withClient<T>(
  url: string,
  use: (client: pg.Client) => Promise<T>,
): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end();
  }
}

/**
 * A new database `unleash_<pid>_<random>` copied from the migrated template, which is built first
 * if this version has none yet. Databases left by test processes that died are dropped on the way.
 */
async function createDatabase(
  url: string,
  node: string,
): Promise<{ database: string; templateMs: number | undefined }> {
  const database = `unleash_${process.pid}_${randomBytes(4).toString('hex')}`;
  return withClient(url, async (client) => {
    await client.query('SELECT pg_advisory_lock($1)', [TEMPLATE_LOCK]);
    try {
      await dropOrphans(client);
      const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [
        TEMPLATE,
      ]);
      let templateMs: number | undefined;
      if (rowCount === 0) {
        const started = Date.now();
        await buildTemplate(client, url, node);
        templateMs = Date.now() - started;
      }
      await client.query(`CREATE DATABASE ${database} TEMPLATE ${TEMPLATE}`);
      return { database, templateMs };
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [TEMPLATE_LOCK]);
    }
  });
}

/** Migrates a scratch database with unleash-server's own migrator, then renames it into place. */
async function buildTemplate(client: pg.Client, url: string, node: string): Promise<void> {
  const scratch = `${TEMPLATE}_building`;
  await client.query(`DROP DATABASE IF EXISTS ${scratch} WITH (FORCE)`);
  await client.query(`CREATE DATABASE ${scratch}`);
  const migration = spawnCommand(
    node,
    [MAIN, 'migrate'],
    { DATABASE_URL: databaseUrl(url, scratch), DATABASE_SSL: 'false', LOG_LEVEL: 'error' },
    { stdin: 'pipe' },
  );
  const code = await migration.exited;
  if (code !== 0) {
    throw new Error(
      `unleash-server's migrations failed (exit ${code}):\n${tail(migration.output())}`,
    );
  }
  await client.query(`ALTER DATABASE ${scratch} RENAME TO ${TEMPLATE}`);
}

async function dropOrphans(client: pg.Client): Promise<void> {
  const { rows } = await client.query<{ datname: string }>(
    "SELECT datname FROM pg_database WHERE datname ~ '^unleash_[0-9]+_[0-9a-f]+$'",
  );
  for (const { datname } of rows) {
    const pid = Number(datname.split('_')[1]);
    if (!processAlive(pid)) await client.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`);
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function dropDatabase(url: string, database: string): Promise<void> {
  await withClient(url, (client) =>
    client.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`),
  );
}

function killGroup(server: SpawnedEntry): void {
  if (server.child.exitCode !== null || server.child.signalCode !== null) return;
  try {
    process.kill(-server.child.pid!, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

function tail(text: string, length = 4000): string {
  return text.length > length ? `…${text.slice(-length)}` : text;
}

/** Logs in as `username` and creates a personal access token (`user:<secret>`). */
async function createPersonalAccessToken(
  url: string,
  username: string,
  password: string,
): Promise<string> {
  const login = await fetch(`${url}/auth/simple/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username, password }),
  });
  if (login.status !== 200)
    throw new Error(`login answered ${login.status}: ${await login.text()}`);
  await login.arrayBuffer();
  const cookie = login.headers
    .getSetCookie()
    .map((header) => header.split(';')[0])
    .join('; ');
  const created = await fetch(`${url}/api/admin/user/tokens`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie },
    body: JSON.stringify({ description: 'test harness', expiresAt: '2999-01-01T00:00:00Z' }),
  });
  const text = await created.text();
  if (created.status !== 201)
    throw new Error(`creating a token answered ${created.status}: ${text}`);
  return (JSON.parse(text) as { secret: string }).secret;
}

/** Polls the frontend API until flag `name` is (or is no longer) in its answer. */
async function waitForFrontend(
  url: string,
  token: string,
  name: string,
  present: boolean,
  timeoutMs = 15_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const response = await fetch(`${url}/api/frontend`, { headers: { authorization: token } });
    const body = (await response.json()) as { toggles?: { name: string }[] };
    if ((body.toggles ?? []).some((toggle) => toggle.name === name) === present) return;
    if (Date.now() > deadline) {
      throw new Error(`unleash-server's frontend API did not ${present ? 'show' : 'drop'} ${name}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
