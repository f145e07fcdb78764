import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { ImportRequest } from '@flags/schemas';
import pg from 'pg';
import { request } from 'undici';
import { type Database, openPglite, openPostgres } from '../src/db/database.js';
import { ADMIN_TOKEN, admin, backends, DEV_TOKEN, dump, postgresUrl, startApp } from './helpers.js';

/**
 * Data safety of the import: a server process killed (SIGKILL) in the middle of an import leaves
 * the database exactly as before, and concurrent imports into one project serialize (the result
 * is exactly one of the payloads, applied whole).
 */

const MAIN = fileURLToPath(new URL('../src/main.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** `count` flags with three strategies each; `variant` changes every value but the names. */
export function bigImport(count: number, variant: number): ImportRequest {
  const names = Array.from({ length: count }, (_, i) => `safety-${String(i).padStart(5, '0')}`);
  return {
    project: 'default',
    environment: 'development',
    data: {
      features: names.map((name) => ({
        name,
        type: 'release',
        project: 'default',
        description: `variant ${variant}`,
      })),
      featureStrategies: names.flatMap((name) => [
        {
          name: 'flexibleRollout',
          featureName: name,
          sortOrder: 0,
          parameters: {
            rollout: String((variant * 17) % 101),
            stickiness: 'default',
            groupId: name,
          },
          constraints: [
            { contextName: 'userId', operator: 'IN', values: [`u${variant}`, `v${variant}`] },
          ],
        },
        {
          name: 'userWithId',
          featureName: name,
          sortOrder: 1,
          parameters: { userIds: `a${variant},b${variant}` },
          constraints: [],
        },
        { name: 'default', featureName: name, sortOrder: 2, parameters: {}, constraints: [] },
      ]),
      featureEnvironments: names.map((name) => ({
        name,
        featureName: name,
        environment: 'development',
        enabled: variant % 2 === 0,
        variants: [
          {
            name: `v${variant}`,
            weight: 1000,
            weightType: 'variable',
            stickiness: 'default',
            payload: { type: 'string', value: `payload ${variant}` },
          },
        ],
      })),
      contextFields: [],
      featureTags: [],
      segments: [],
      tagTypes: [],
      dependencies: [],
    },
  } as unknown as ImportRequest;
}

/** The whole database minus what a server writes by itself at start (insights snapshots). */
async function state(db: Database): Promise<Record<string, string[]>> {
  const all = await dump(db);
  for (const table of Object.keys(all)) if (table.startsWith('insights_')) delete all[table];
  return all;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

interface ServerProcess {
  readonly child: ChildProcess;
  readonly base: string;
  readonly exited: Promise<number | null>;
  output(): string;
}

/** `flags-server` as its own process on the given storage; resolves once it answers /health. */
async function spawnServer(env: Record<string, string>): Promise<ServerProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', MAIN], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      SERVER_PORT: String(port),
      SERVER_HOST: '127.0.0.1',
      FLAGS_ADMIN_TOKENS: ADMIN_TOKEN,
      FLAGS_CLIENT_TOKENS: DEV_TOKEN,
      LOG_LEVEL: 'warn',
      JSON_LOGGER: 'true',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk) => {
    output += String(chunk);
  });
  child.stderr?.on('data', (chunk) => {
    output += String(chunk);
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`flags-server exited at start: ${output}`);
    try {
      const health = await request(`${base}/health`);
      await health.body.dump();
      if (health.statusCode === 200) break;
    } catch {}
    if (Date.now() > deadline) throw new Error(`flags-server did not start: ${output}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { child, base, exited, output: () => output };
}

async function postImport(base: string, payload: string): Promise<{ status: number; ms: number }> {
  const started = Date.now();
  const response = await request(`${base}/api/admin/features-batch/import`, {
    method: 'POST',
    headers: { ...admin, 'content-type': 'application/json' },
    body: payload,
    headersTimeout: 120_000,
    bodyTimeout: 120_000,
  });
  await response.body.dump();
  return { status: response.statusCode, ms: Date.now() - started };
}

interface Storage {
  readonly name: string;
  readonly env: Record<string, string>;
  /** Opens the storage in this process (only while no server process holds it, for PGlite). */
  open(): Promise<Database>;
  cleanup(): Promise<void>;
  /** PostgreSQL: whether the server process has a transaction open right now. */
  inTransaction?(): Promise<boolean>;
}

async function pgliteStorage(): Promise<Storage> {
  const dir = mkdtempSync(join(tmpdir(), 'flags-safety-'));
  return {
    name: 'pglite',
    env: { DATA_DIR: dir },
    open: () => openPglite(dir),
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
  };
}

async function postgresStorage(url: string): Promise<Storage> {
  const schema = `safety_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query(`CREATE SCHEMA ${schema}`);
  await client.end();
  const withSchema = new URL(url);
  withSchema.searchParams.set('options', `-c search_path=${schema}`);
  withSchema.searchParams.set('application_name', schema);
  return {
    name: 'postgres',
    env: { DATABASE_URL: withSchema.href },
    async inTransaction() {
      const probe = new pg.Client({ connectionString: url });
      await probe.connect();
      const { rows } = await probe.query(
        `SELECT 1 FROM pg_stat_activity
          WHERE application_name = $1 AND xact_start IS NOT NULL AND state <> 'idle'`,
        [schema],
      );
      await probe.end();
      return rows.length > 0;
    },
    open: async () => openPostgres(url, { schema, maxConnections: 2 }),
    async cleanup() {
      const drop = new pg.Client({ connectionString: url });
      await drop.connect();
      await drop.query(`DROP SCHEMA ${schema} CASCADE`);
      await drop.end();
    },
  };
}

const storages: (() => Promise<Storage>)[] = [pgliteStorage];
if (postgresUrl) storages.push(() => postgresStorage(postgresUrl as string));

const FLAGS = 2000;

for (const makeStorage of storages) {
  describe('an import killed mid-way', () => {
    it('leaves the database exactly as it was (SIGKILL during the transaction, then restart)', async (t) => {
      const storage = await makeStorage();
      t.diagnostic(storage.name);
      try {
        // A first server imports payload 0 whole and measures how long an import of this size takes.
        const first = await spawnServer(storage.env);
        const applied = await postImport(first.base, JSON.stringify(bigImport(FLAGS, 0)));
        assert.equal(applied.status, 200);
        first.child.kill('SIGTERM');
        assert.equal(await first.exited, 0, first.output());
        let db = await storage.open();
        const before = await state(db);
        await db.close();
        assert.equal(before.features?.length, FLAGS);

        const figures: string[] = [];
        for (const fraction of [0.3, 0.6]) {
          const server = await spawnServer(storage.env);
          const killAfter = Math.round(applied.ms * fraction);
          let answered = false;
          const pending = postImport(server.base, JSON.stringify(bigImport(FLAGS, 1))).then(
            () => {
              answered = true;
            },
            () => undefined,
          );
          await new Promise((resolve) => setTimeout(resolve, killAfter));
          // On PostgreSQL, wait until the import's transaction is visibly open.
          let open = false;
          if (storage.inTransaction !== undefined) {
            const deadline = Date.now() + 10_000;
            while (!answered && !open && Date.now() < deadline)
              open = await storage.inTransaction();
          }
          server.child.kill('SIGKILL');
          await server.exited;
          await pending;
          db = await storage.open();
          const after = await state(db);
          await db.close();
          figures.push(
            `killed ${killAfter} ms into a ${applied.ms} ms import (${answered ? 'answered before the kill' : 'unanswered'}${open ? ', transaction seen open in pg_stat_activity' : ''})`,
          );
          if (storage.inTransaction !== undefined) assert.ok(open || answered);
          if (!answered) assert.deepEqual(after, before, 'the database is as before the import');
        }
        // And the restarted server serves the state from before.
        const again = await spawnServer(storage.env);
        const features = await request(`${again.base}/api/client/features`, {
          headers: { authorization: DEV_TOKEN },
        });
        const body = (await features.body.json()) as {
          features: { name: string; strategies: { parameters?: Record<string, string> }[] }[];
        };
        again.child.kill('SIGTERM');
        assert.equal(await again.exited, 0);
        assert.equal(body.features.length, FLAGS);
        assert.ok(body.features.every((f) => f.strategies[1]?.parameters?.userIds === 'a0,b0'));
        console.log(
          `import killed mid-way on ${storage.name}: ${FLAGS} flags × 3 strategies; ${figures.join('; ')}; ` +
            'after each restart the database equals the state before the import (every table compared)',
        );
      } finally {
        await storage.cleanup();
      }
    });
  });
}

for (const backend of backends) {
  describe(`concurrent imports into one project on ${backend.name}`, () => {
    it('serialize: the result is exactly one payload applied whole, and none fails', async () => {
      const { db, cleanup } = await backend.open();
      const app = await startApp(db);
      try {
        const payloads = Array.from({ length: 5 }, (_, i) => bigImport(200, i + 1));
        const readState = async () => {
          const response = await app.inject({
            url: '/api/client/features',
            headers: { authorization: DEV_TOKEN },
          });
          const body = response.json() as { features: unknown[] };
          return JSON.stringify(body.features);
        };
        const rounds = 3;
        const statuses: number[] = [];
        const finals: string[] = [];
        for (let round = 0; round < rounds; round++) {
          const answers = await Promise.all(
            payloads.map((payload) =>
              app.inject({
                method: 'POST',
                url: '/api/admin/features-batch/import',
                headers: admin,
                payload,
              }),
            ),
          );
          statuses.push(...answers.map((answer) => answer.statusCode));
          finals.push(await readState());
        }
        // Each payload applied alone, one after another: the states a serial order can end in.
        const expected: string[] = [];
        for (const payload of payloads) {
          const answer = await app.inject({
            method: 'POST',
            url: '/api/admin/features-batch/import',
            headers: admin,
            payload,
          });
          assert.equal(answer.statusCode, 200);
          expected.push(await readState());
        }
        const matches = finals.map((final) => expected.indexOf(final));
        console.log(
          `concurrent imports on ${backend.name}: ${rounds} rounds of 5 parallel imports (200 flags × 3 strategies each); ` +
            `statuses ${JSON.stringify(statuses)}; final state = payload #${matches.map((m) => m + 1).join(', #')}`,
        );
        assert.ok(
          statuses.every((status) => status === 200),
          JSON.stringify(statuses),
        );
        assert.ok(
          matches.every((match) => match >= 0),
          'no mixed state',
        );
        assert.equal(new Set(expected).size, payloads.length, 'the payloads differ');
      } finally {
        await app.close();
        await cleanup();
      }
    });
  });
}
