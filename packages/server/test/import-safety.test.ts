// test-runs: once (a slow end-to-end suite: CI runs it on one Node.js line, scripts/run-tests.mjs)
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { isDeepStrictEqual } from 'node:util';
import pg from 'pg';
import { request } from 'undici';
import { ADVISORY_LOCK_KEYS } from '../src/db/advisory-locks.js';
import { type Database, openPglite, openPostgres } from '../src/db/database.js';
import {
  admin,
  type Backend,
  backends,
  DEV_TOKEN,
  dump,
  postgresUrl,
  startApp,
} from './helpers.js';
import { bigImport, postImport, spawnServer } from './server-process.js';

/**
 * Data safety of the import: a server process killed (SIGKILL) during an import leaves the
 * database either exactly as before or with the whole import applied, never a part of it (and the
 * whole import when the 200 answer was read), and concurrent imports into one project serialize
 * (the result is exactly one of the payloads, applied whole).
 */

/** The whole database minus what a server writes by itself at start (insights snapshots). */
async function state(db: Database): Promise<Record<string, string[]>> {
  const all = await dump(db);
  for (const table of Object.keys(all)) if (table.startsWith('insights_')) delete all[table];
  return all;
}

const TIMESTAMP = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)/g;
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

/**
 * A state without what two runs of the same history need not share: times and random ids are
 * masked, serial ids become their rank (a killed transaction, and a crash, leave gaps in a
 * sequence). Everything else is compared as it is.
 */
function generatedMasked(all: Record<string, string[]>): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [table, rows] of Object.entries(all)) {
    const parsed = rows.map((row) => JSON.parse(row) as Record<string, unknown>);
    if (parsed.every((row) => typeof row.id === 'number')) {
      parsed.sort((a, b) => (a.id as number) - (b.id as number));
      for (const [rank, row] of parsed.entries()) row.id = rank + 1;
    }
    out[table] = parsed
      .map((row) => JSON.stringify(row).replace(TIMESTAMP, '<time>').replace(UUID, '<uuid>'))
      .sort();
  }
  return out;
}

/** The tables in which two states differ (or that only one of them has). */
function tablesDiffering(a: Record<string, string[]>, b: Record<string, string[]>): string[] {
  const tables = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
  return tables.filter((table) => !isDeepStrictEqual(a[table], b[table]));
}

/**
 * The states (masked) after each import of `variants` in turn, into a fresh database of `backend`
 * served in this process with the tokens `spawnServer` configures: what the killed server's
 * database must equal, up to generated values, once the same imports are applied whole.
 */
async function replay(backend: Backend, variants: readonly number[]) {
  const { db, cleanup } = await backend.open();
  const app = await startApp(db, { clientTokens: [DEV_TOKEN] });
  try {
    const states: Record<string, string[]>[] = [];
    for (const variant of variants) {
      const answer = await app.inject({
        method: 'POST',
        url: '/api/admin/features-batch/import',
        headers: admin,
        payload: bigImport(FLAGS, variant),
      });
      assert.equal(answer.statusCode, 200, answer.body);
      states.push(generatedMasked(await state(db)));
    }
    return states;
  } finally {
    await app.close();
    await cleanup();
  }
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

const FLAGS = 2000;
/**
 * When each kill lands, as a fraction of how long a whole import took. The later ones run only
 * while no kill has landed before the commit yet (a machine under load can finish an import
 * sooner than the first one took).
 */
const KILL_AT = [0.3, 0.6];
const KILL_AT_UNTIL_ONE_LANDS_MIDWAY = [0.3, 0.15];

function* killsAt(landedMidway: () => boolean): Generator<number> {
  yield* KILL_AT;
  for (const fraction of KILL_AT_UNTIL_ONE_LANDS_MIDWAY) {
    if (landedMidway()) return;
    yield fraction;
  }
}

for (const backend of backends) {
  describe(`an import killed mid-way on ${backend.name}`, () => {
    it('leaves the database as before or with the whole import, never a part (SIGKILL, then restart)', async (t) => {
      const storage =
        backend.name === 'pglite' ? await pgliteStorage() : await postgresStorage(postgresUrl!);
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

        // The imports applied whole so far; each kill imports payload 1 once more.
        const history = [0];
        const replays = new Map<string, Record<string, string[]>[]>();
        const figures: string[] = [];
        let killedMidway = 0;
        for (const fraction of killsAt(() => killedMidway > 0)) {
          // The state payload 1 applied whole gives, and (checking the replay) the state before it.
          const key = [...history, 1].join();
          const replayed = replays.get(key) ?? (await replay(backend, [...history, 1]));
          replays.set(key, replayed);
          const expectedBefore = replayed.at(-2);
          const expectedWhole = replayed.at(-1)!;
          assert.deepEqual(
            generatedMasked(before),
            expectedBefore,
            'the replay reproduces the state',
          );
          assert.notDeepEqual(expectedWhole, expectedBefore, 'the import changes the state');

          const server = await spawnServer(storage.env);
          const killAfter = Math.round(applied.ms * fraction);
          let status: number | undefined;
          let settled = '';
          const sentAt = Date.now();
          const pending = postImport(server.base, JSON.stringify(bigImport(FLAGS, 1))).then(
            (result) => {
              status = result.status;
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
            while (status === undefined && !open && Date.now() < deadline)
              open = await storage.inTransaction();
          }
          server.child.kill('SIGKILL');
          await server.exited;
          await pending;
          db = await storage.open();
          const after = await state(db);
          await db.close();
          if (storage.inTransaction !== undefined)
            assert.ok(
              open || status !== undefined,
              `no open transaction seen; ${settled} ${server.output()}`,
            );

          const asBefore = isDeepStrictEqual(after, before);
          const whole = isDeepStrictEqual(generatedMasked(after), expectedWhole);
          const outcome =
            status !== undefined
              ? `answered ${status} before the kill`
              : asBefore
                ? 'unanswered, rolled back'
                : whole
                  ? 'unanswered, committed just before the kill'
                  : 'unanswered, applied in part';
          const figure = `killed ${killAfter} ms into a ${applied.ms} ms import (${outcome}${open ? ', import transaction seen open in pg_locks' : ''})`;
          figures.push(figure);
          t.diagnostic(figure);
          if (status !== undefined) {
            assert.equal(status, 200, settled);
            assert.ok(
              whole,
              `answered 200, yet the import is not applied whole: tables off ${tablesDiffering(generatedMasked(after), expectedWhole).join(', ')}`,
            );
          } else if (asBefore) {
            killedMidway++;
          } else {
            assert.ok(
              whole,
              'killed unanswered: the database is neither as before nor with the whole import; ' +
                `tables off from before: ${tablesDiffering(after, before).join(', ')}; ` +
                `from the whole import: ${tablesDiffering(generatedMasked(after), expectedWhole).join(', ')}`,
            );
          }
          if (!asBefore) {
            before = after;
            history.push(1);
          }
        }
        // And the restarted server serves the state the last kill left.
        const last = history.at(-1)!;
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
        assert.ok(killedMidway >= 1, `no kill landed before the commit: ${figures.join('; ')}`);
        console.log(
          `import killed mid-way on ${storage.name}: ${FLAGS} flags × 3 strategies; ${figures.join('; ')}; ` +
            'after each restart every table equals the state before the import, or (killed after the commit) ' +
            'the state a replay of the same imports gives, up to times and generated ids',
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
