import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { instanceInsightsSchema } from '@flags/schemas';
import { Ajv } from 'ajv';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { buildApp } from '../../src/app.js';
import type { Database } from '../../src/db/database.js';
import { endOfDay, isoWeek, parseDay } from '../../src/features/insights/calendar.js';
import { health } from '../../src/features/insights/insights-store.js';
import { runSnapshot, startSnapshotJob } from '../../src/features/insights/snapshot-job.js';
import { CAPTURES, seedInsightsHistory, TODAY } from '../fixtures/insights-history.js';
import { admin, backends, DEV_TOKEN, postgresUrl, testConfig } from '../helpers.js';

const end = (day: string) => `${day}T23:59:59.999Z`;
const matchesSchema = new Ajv({ strict: false, validateFormats: false }).compile(
  instanceInsightsSchema,
);

describe('insights calendar', () => {
  it('names ISO weeks by ISO week-year, Monday start, zero-padded', () => {
    const cases: [string, string][] = [
      ['2026-11-02', '2026-45'], // Monday
      ['2026-11-08', '2026-45'], // Sunday of the same week
      ['2026-11-09', '2026-46'],
      ['2026-01-05', '2026-02'],
      ['2026-01-01', '2026-01'], // Thursday: week 1 of its own year
      ['2024-12-30', '2025-01'], // Monday in December, week 1 of the next year
      ['2027-01-01', '2026-53'], // Friday in January, last week of the previous year
      ['2021-01-03', '2020-53'],
      ['2021-01-04', '2021-01'],
    ];
    for (const [day, week] of cases) assert.equal(isoWeek(day), week, day);
  });

  it('parses only real yyyy-MM-dd dates and ends days at 23:59:59.999Z', () => {
    assert.equal(parseDay('2026-02-28')?.toISOString(), '2026-02-28T00:00:00.000Z');
    for (const bad of ['2026-02-30', '2026-13-01', '2026-1-01', '20261101', 'today', '']) {
      assert.equal(parseDay(bad), undefined, bad);
    }
    assert.equal(endOfDay('2026-11-20'), '2026-11-20T23:59:59.999Z');
  });

  it('rates health as round(100 − stale% − potentially stale%), 100 without flags', () => {
    assert.equal(health(0, 0, 0), 100);
    assert.equal(health(3, 1, 0), 67);
    assert.equal(health(5, 1, 2), 40);
    assert.equal(health(1, 1, 0), 0);
  });
});

for (const backend of backends) {
  describe(`instance insights on ${backend.name}`, () => {
    let cleanup: () => Promise<void>;
    let db: Database;
    let app: FastifyInstance;
    let now = TODAY;

    before(async () => {
      const opened = await backend.open();
      db = opened.db;
      cleanup = opened.cleanup;
      app = await buildApp(testConfig(), { db, logger: false, now: () => now });
    });
    after(async () => {
      await app.close();
      await cleanup();
    });

    const insights = (query = '') =>
      app.inject({ url: `/api/admin/insights${query}`, headers: admin });

    it('writes today’s snapshot when the server starts', async () => {
      const rows = await db.query<{ day: string; total: number }>(
        `SELECT to_char(day, 'YYYY-MM-DD') AS day, total FROM insights_user_trends`,
      );
      assert.deepEqual(rows, [{ day: '2026-11-20', total: 0 }]);
      const response = await insights();
      assert.equal(response.statusCode, 200);
      const body = response.json();
      assert.deepEqual(body.userTrends, [
        { date: end('2026-11-20'), total: 0, active: 0, inactive: 0 },
      ]);
      assert.deepEqual(body.projectFlagTrends, [
        {
          week: '2026-47',
          project: 'default',
          date: end('2026-11-20'),
          total: 0,
          active: 0,
          stale: 0,
          potentiallyStale: 0,
          health: 100,
          users: 0,
        },
      ]);
    });

    it('requires an admin token', async () => {
      assert.equal((await app.inject({ url: '/api/admin/insights' })).statusCode, 401);
      const client = await app.inject({
        url: '/api/admin/insights',
        headers: { authorization: DEV_TOKEN },
      });
      assert.equal(client.statusCode, 403);
    });

    it('computes every series from the seeded history', async () => {
      await seedInsightsHistory(db);
      for (const at of CAPTURES) assert.equal(await runSnapshot(db, at), true);
      const response = await insights('?from=2026-11-01&to=2026-11-20');
      assert.equal(response.statusCode, 200);
      const body = response.json();
      assert.ok(matchesSchema(body), JSON.stringify(matchesSchema.errors));
      assert.deepEqual(Object.keys(body), [
        'userTrends',
        'flagTrends',
        'projectFlagTrends',
        'metricsSummaryTrends',
        'environmentTypeTrends',
      ]);

      assert.deepEqual(body.userTrends, [
        { date: end('2026-11-02'), total: 3, active: 2, inactive: 1 },
        { date: end('2026-11-06'), total: 3, active: 2, inactive: 1 },
        { date: end('2026-11-13'), total: 4, active: 2, inactive: 2 },
        { date: end('2026-11-20'), total: 4, active: 2, inactive: 2 },
      ]);
      assert.deepEqual(body.flagTrends, [
        { date: end('2026-11-02'), total: 6, active: 2, stale: 2, potentiallyStale: 2 },
        { date: end('2026-11-06'), total: 7, active: 3, stale: 2, potentiallyStale: 2 },
        { date: end('2026-11-13'), total: 7, active: 4, stale: 2, potentiallyStale: 1 },
        { date: end('2026-11-20'), total: 8, active: 4, stale: 2, potentiallyStale: 2 },
      ]);

      const projectRow = (
        week: string,
        day: string,
        project: string,
        [total, active, stale, potentiallyStale, healthValue, users]: number[],
        timeToProduction?: number,
      ) => ({
        week,
        project,
        date: end(day),
        total,
        active,
        stale,
        potentiallyStale,
        health: healthValue,
        ...(timeToProduction === undefined ? {} : { timeToProduction }),
        users,
      });
      // Week 45 comes from its latest capture (Friday 6th), not Monday's.
      assert.deepEqual(body.projectFlagTrends, [
        projectRow('2026-45', '2026-11-06', 'default', [5, 2, 1, 2, 40, 1], 5.7),
        projectRow('2026-45', '2026-11-06', 'empty', [0, 0, 0, 0, 100, 1]),
        projectRow('2026-45', '2026-11-06', 'web', [2, 1, 1, 0, 50, 2]),
        projectRow('2026-46', '2026-11-13', 'default', [5, 3, 1, 1, 60, 2], 5.7),
        projectRow('2026-46', '2026-11-13', 'empty', [0, 0, 0, 0, 100, 1]),
        projectRow('2026-46', '2026-11-13', 'web', [2, 1, 1, 0, 50, 2], 9),
        projectRow('2026-47', '2026-11-20', 'default', [5, 2, 1, 2, 40, 2], 5.7),
        projectRow('2026-47', '2026-11-20', 'empty', [0, 0, 0, 0, 100, 1]),
        projectRow('2026-47', '2026-11-20', 'web', [3, 2, 1, 0, 67, 2], 9),
      ]);

      const metricsRow = (
        week: string,
        day: string,
        project: string,
        [totalYes, totalNo, totalApps, totalFlags, totalEnvironments]: number[],
      ) => ({
        week,
        date: end(day),
        project,
        totalRequests: totalYes! + totalNo!,
        totalYes,
        totalNo,
        totalApps,
        totalFlags,
        totalEnvironments,
      });
      assert.deepEqual(body.metricsSummaryTrends, [
        metricsRow('2026-45', '2026-11-06', 'default', [31, 7, 2, 2, 2]),
        metricsRow('2026-45', '2026-11-06', 'empty', [0, 0, 0, 0, 0]),
        metricsRow('2026-45', '2026-11-06', 'web', [7, 3, 1, 1, 1]),
        metricsRow('2026-46', '2026-11-13', 'default', [100, 50, 1, 1, 1]),
        metricsRow('2026-46', '2026-11-13', 'empty', [0, 0, 0, 0, 0]),
        metricsRow('2026-46', '2026-11-13', 'web', [0, 0, 0, 0, 0]),
        metricsRow('2026-47', '2026-11-20', 'default', [5, 4, 1, 1, 1]),
        metricsRow('2026-47', '2026-11-20', 'empty', [0, 0, 0, 0, 0]),
        metricsRow('2026-47', '2026-11-20', 'web', [0, 0, 0, 0, 0]),
      ]);
      assert.equal(body.metricsSummaryTrends[0]?.totalRequests, 38);

      const envRow = (
        week: string,
        day: string,
        environmentType: string,
        totalUpdates: number,
      ) => ({
        date: end(day),
        week,
        environmentType,
        totalUpdates,
      });
      assert.deepEqual(body.environmentTypeTrends, [
        envRow('2026-45', '2026-11-06', 'development', 1),
        envRow('2026-45', '2026-11-06', 'production', 2),
        envRow('2026-45', '2026-11-06', 'test', 0),
        envRow('2026-46', '2026-11-13', 'development', 0),
        envRow('2026-46', '2026-11-13', 'production', 1),
        envRow('2026-46', '2026-11-13', 'test', 0),
        envRow('2026-47', '2026-11-20', 'development', 1),
        envRow('2026-47', '2026-11-20', 'production', 0),
        envRow('2026-47', '2026-11-20', 'test', 0),
      ]);
    });

    it('filters by range: a range ending on Monday shows that week as captured on Monday', async () => {
      const body = (await insights('?from=2026-11-02&to=2026-11-05')).json();
      assert.deepEqual(body.userTrends, [
        { date: end('2026-11-02'), total: 3, active: 2, inactive: 1 },
      ]);
      assert.deepEqual(body.flagTrends, [
        { date: end('2026-11-02'), total: 6, active: 2, stale: 2, potentiallyStale: 2 },
      ]);
      assert.deepEqual(
        body.projectFlagTrends.map((row: Record<string, unknown>) => [
          row.week,
          row.date,
          row.project,
          row.total,
          row.health,
          row.users,
        ]),
        [
          ['2026-45', end('2026-11-02'), 'default', 5, 40, 1],
          ['2026-45', end('2026-11-02'), 'empty', 0, 100, 1],
          ['2026-45', end('2026-11-02'), 'web', 1, 0, 2],
        ],
      );
      assert.deepEqual(
        body.metricsSummaryTrends.map((row: Record<string, unknown>) => [
          row.project,
          row.totalRequests,
        ]),
        [
          ['default', 15],
          ['empty', 0],
          ['web', 0],
        ],
      );
      assert.deepEqual(
        body.environmentTypeTrends.map((row: Record<string, unknown>) => row.totalUpdates),
        [0, 0, 0],
      );

      const one = (await insights('?from=2026-11-13&to=2026-11-13')).json();
      assert.deepEqual(
        Object.values(one).map((series) => (series as unknown[]).length),
        [1, 1, 3, 3, 3],
      );
      const none = (await insights('?from=2026-10-01&to=2026-10-31')).json();
      assert.deepEqual(Object.values(none), [[], [], [], [], []]);
    });

    it('defaults to the last 12 weeks up to today', async () => {
      const all = (await insights()).json();
      assert.equal(all.userTrends.length, 4);
      await db.query(
        `INSERT INTO insights_user_trends (day, total, active, captured_at) VALUES
           ('2026-08-27', 1, 1, now()), ('2026-08-28', 2, 2, now())`,
      );
      const dates = (await insights()).json().userTrends.map((row: { date: string }) => row.date);
      assert.deepEqual(dates, [
        end('2026-08-28'),
        end('2026-11-02'),
        end('2026-11-06'),
        end('2026-11-13'),
        end('2026-11-20'),
      ]);
      const fromOnly = (await insights('?from=2026-11-13')).json();
      assert.equal(fromOnly.userTrends.length, 2);
      const toOnly = (await insights('?to=2026-11-02')).json();
      assert.deepEqual(
        toOnly.userTrends.map((row: { date: string }) => row.date),
        [end('2026-08-27'), end('2026-08-28'), end('2026-11-02')],
      );
      await db.query(`DELETE FROM insights_user_trends WHERE day < '2026-11-01'`);
    });

    it('answers 400 for malformed dates and for from after to', async () => {
      for (const query of [
        '?from=2026-13-01',
        '?from=2026-02-30',
        '?to=20261120',
        '?from=yesterday',
        '?from=2026-1-01&to=2026-11-20',
        '?from=2026-11-20&to=2026-11-19',
        '?from=2026-11-21',
      ]) {
        const response = await insights(query);
        assert.equal(response.statusCode, 400, query);
        const body = response.json();
        assert.deepEqual(Object.keys(body), ['code', 'name', 'message', 'details']);
        assert.equal(body.name, 'BadDataError');
      }
    });

    it('is idempotent within a day and updates the day’s rows when the data changed', async () => {
      const snapshotTables = async () => ({
        users: await db.query('SELECT * FROM insights_user_trends ORDER BY day'),
        flags: await db.query('SELECT * FROM insights_flag_trends ORDER BY day, project'),
        metrics: await db.query('SELECT * FROM insights_metrics_trends ORDER BY day, project'),
        environments: await db.query(
          'SELECT * FROM insights_environment_trends ORDER BY day, environment_type',
        ),
      });
      const before = await snapshotTables();
      assert.equal(await runSnapshot(db, TODAY), true);
      assert.equal(await runSnapshot(db, TODAY), true);
      assert.deepEqual(await snapshotTables(), before);

      // Later the same day: the 13:00 metrics bucket and the 15:00 event now count; no new rows.
      const evening = new Date('2026-11-20T18:00:00.000Z');
      assert.equal(await runSnapshot(db, evening), true);
      const after = await snapshotTables();
      for (const table of ['users', 'flags', 'metrics', 'environments'] as const) {
        assert.equal(after[table].length, before[table].length, table);
      }
      // Today's point is computed when read, as of the clock's now.
      now = evening;
      const body = (await insights('?from=2026-11-20&to=2026-11-20')).json();
      now = TODAY;
      const defaultMetrics = body.metricsSummaryTrends.find(
        (row: { project: string }) => row.project === 'default',
      );
      assert.equal(defaultMetrics.totalYes, 1005);
      assert.equal(defaultMetrics.totalRequests, 1009);
      assert.deepEqual(
        body.environmentTypeTrends.map((row: { totalUpdates: number }) => row.totalUpdates),
        [1, 1, 0],
      );
      assert.equal(await runSnapshot(db, TODAY), true);
      assert.deepEqual(await snapshotTables(), before);
    });

    it('keeps writing on its own every interval and stops cleanly', async () => {
      let clock = new Date('2026-11-21T00:30:00.000Z');
      const job = await startSnapshotJob({ db, now: () => clock, log: app.log, intervalMs: 20 });
      try {
        clock = new Date('2026-11-22T00:30:00.000Z');
        const deadline = Date.now() + 5_000;
        for (;;) {
          const rows = await db.query<{ day: string }>(
            `SELECT to_char(day, 'YYYY-MM-DD') AS day FROM insights_user_trends
              WHERE day > '2026-11-20' ORDER BY day`,
          );
          if (rows.length === 2) {
            assert.deepEqual(rows, [{ day: '2026-11-21' }, { day: '2026-11-22' }]);
            break;
          }
          assert.ok(Date.now() < deadline, 'the job did not run again');
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      } finally {
        await job.stop();
        await db.query(`DELETE FROM insights_user_trends WHERE day > '2026-11-20'`);
      }
    });

    if (backend.name === 'postgres' && postgresUrl) {
      it('lets one server run the snapshot: a held advisory lock makes the others skip', async () => {
        const [{ schema }] = (await db.query<{ schema: string }>(
          'SELECT current_schema() AS schema',
        )) as [{ schema: string }];
        const holder = new pg.Client({ connectionString: postgresUrl });
        await holder.connect();
        try {
          await holder.query('SELECT pg_advisory_lock($1, hashtext($2))', [7_314_222, schema]);
          const day = new Date('2026-11-25T12:00:00.000Z');
          assert.equal(await runSnapshot(db, day), false);
          const rows = await db.query(
            `SELECT 1 FROM insights_user_trends WHERE day = '2026-11-25'`,
          );
          assert.equal(rows.length, 0);
          await holder.query('SELECT pg_advisory_unlock($1, hashtext($2))', [7_314_222, schema]);
          assert.equal(await runSnapshot(db, day), true);
          await db.query(`DELETE FROM insights_user_trends WHERE day = '2026-11-25'`);
        } finally {
          await holder.end();
        }
      });
    }
  });
}
