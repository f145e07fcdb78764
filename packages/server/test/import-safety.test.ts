import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import pg from 'pg';
import { request } from 'undici';
import { ADVISORY_LOCK_KEYS } from '../src/db/advisory-locks.js';
import { type Database, openPglite, openPostgres } from '../src/db/database.js';
import { admin, backends, DEV_TOKEN, dump, postgresUrl, startApp } from './helpers.js';
import { bigImport, postImport, spawnServer } from './server-process.js';

/**
 * Data safety of the import: a server process killed (SIGKILL) in the middle of an import leaves
 * the database exactly as before, and concurrent imports into one project serialize (the result
 * is exactly one of the payloads, applied whole).
 */

/** The whole database minus what a server writes by itself at start (insights snapshots). */
async function state(db: Database): Promise<Record<string, string[]>> {
  const all = await dump(db);
  for (const table of Object.keys(all)) if (table.startsWith('insights_')) delete all[table];
  return all;
}

interface Storage {
  readonly name: string;
  readonly env: Record<string, string>;
  /** Opens the storage in this process (only while no server process holds it, for PGlite). */
  open(): Promise<Database>;
  cleanup(): Promise<void>;
  /** PostgreSQL: whether the server process has an import transaction open right now. */
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
  let probe: pg.Client | undefined;
  return {
    name: 'postgres',
    env: { DATABASE_URL: withSchema.href },
    async inTransaction() {
      if (probe === undefined) {
        probe = new pg.Client({ connectionString: url });
        await probe.connect();
      }
      const { rows } = await probe.query(
        // The import's own transaction: it holds the import advisory lock (two-key form).
        `SELECT 1 FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
          WHERE a.application_name = $1 AND l.locktype = 'advisory' AND l.objsubid = 2
            AND l.classid = $2 AND l.granted`,
        [schema, ADVISORY_LOCK_KEYS.import],
      );
      return rows.length > 0;
    },
    open: async () => openPostgres(url, { schema, maxConnections: 2 }),
    async cleanup() {
      await probe?.end();
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
        let before = await state(db);
        await db.close();
        assert.equal(before.features?.length, FLAGS);

        const figures: string[] = [];
        let killedMidway = 0;
        let last = 0;
        for (const fraction of [0.3, 0.6]) {
          const server = await spawnServer(storage.env);
          const killAfter = Math.round(applied.ms * fraction);
          let answered = false;
          let settled = '';
          const sentAt = Date.now();
          const pending = postImport(server.base, JSON.stringify(bigImport(FLAGS, 1))).then(
            (result) => {
              answered = true;
              settled = `answered ${result.status} after ${result.ms} ms`;
            },
            (error: Error) => {
              settled = `failed after ${Date.now() - sentAt} ms: ${error.message}`;
            },
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
            `killed ${killAfter} ms into a ${applied.ms} ms import (${answered ? 'answered before the kill' : 'unanswered'}${open ? ', import transaction seen open in pg_locks' : ''})`,
          );
          if (storage.inTransaction !== undefined)
            assert.ok(open || answered, `no open transaction seen; ${settled} ${server.output()}`);
          if (answered) {
            // Done before the kill landed: applied whole, and the state the next attempt keeps.
            before = after;
            last = 1;
          } else {
            assert.deepEqual(after, before, 'the database is as before the import');
            killedMidway++;
          }
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
        assert.ok(
          body.features.every((f) => f.strategies[1]?.parameters?.userIds === `a${last},b${last}`),
        );
        assert.ok(killedMidway >= 1, 'at least one import was killed before it could answer');
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
        // Half of them list the flags in reverse order (two exports need not agree on order).
        const payloads = Array.from({ length: 5 }, (_, i) => {
          const payload = bigImport(200, i + 1);
          if (i % 2 === 1) {
            payload.data.features.reverse();
            payload.data.featureEnvironments?.reverse();
          }
          return payload;
        });
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
