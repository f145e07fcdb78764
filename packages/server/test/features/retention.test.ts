import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it, mock } from 'node:test';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/load.js';
import { MIN_METRICS_RETENTION_DAYS } from '../../src/config/options.js';
import { ADVISORY_LOCK_KEYS } from '../../src/db/advisory-locks.js';
import type { Database } from '../../src/db/database.js';
import { captureSnapshot } from '../../src/features/insights/insights-store.js';
import {
  RETENTION_FIRST_RUN_DELAY_MS,
  RETENTION_INTERVAL_MS,
  startRetentionJob,
} from '../../src/features/metrics/retention-job.js';
import { runRetention } from '../../src/features/metrics/retention-store.js';
import { backends, postgresUrl, testConfig } from '../helpers.js';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
/** Sunday 2026-11-22 23:30 UTC: the last hour of ISO week 2026-47 (Monday 2026-11-16). */
const NOW = new Date('2026-11-22T23:30:00.000Z');
const ago = (ms: number) => new Date(NOW.getTime() - ms);
const DEFAULTS = loadConfig({});
const settings = {
  clientInstanceRetentionDays: DEFAULTS.clientInstanceRetentionDays,
  clientMetricsRetentionDays: DEFAULTS.clientMetricsRetentionDays,
};

const silent = {
  info() {},
  warn() {},
  error() {},
  debug() {},
} as unknown as FastifyInstance['log'];

for (const backend of backends) {
  describe(`client data retention on ${backend.name}`, () => {
    let db: Database;
    let cleanup: () => Promise<void>;

    const instance = (id: string, lastSeen: Date) =>
      db.query(
        `INSERT INTO client_instances (app_name, instance_id, environment, last_seen)
         VALUES ('app', $1, 'development', $2)`,
        [id, lastSeen],
      );
    const bucket = (feature: string, hour: Date, app = 'app') =>
      db.query(
        `INSERT INTO client_metrics (feature_name, app_name, environment, hour, yes, no)
         VALUES ($1, $3, 'development', $2, 10, 0)`,
        [feature, hour, app],
      );
    const variant = (feature: string, hour: Date) =>
      db.query(
        `INSERT INTO client_metrics_variants (feature_name, app_name, environment, hour, variant, count)
         VALUES ($1, 'app', 'development', $2, 'blue', 5)`,
        [feature, hour],
      );
    const application = (name: string, seenAt: Date) =>
      db.query(
        'INSERT INTO client_applications (app_name, created_at, seen_at) VALUES ($1, $2, $2)',
        [name, seenAt],
      );
    const applications = async () =>
      (
        await db.query<{ name: string }>(
          'SELECT app_name AS name FROM client_applications ORDER BY app_name',
        )
      ).map((row) => row.name);
    const remaining = async () => ({
      instances: (
        await db.query<{ id: string }>(
          'SELECT instance_id AS id FROM client_instances ORDER BY instance_id',
        )
      ).map((row) => row.id),
      metrics: (
        await db.query<{ hour: Date | string }>('SELECT hour FROM client_metrics ORDER BY hour')
      ).map((row) => new Date(row.hour).toISOString()),
      variants: (
        await db.query<{ hour: Date | string }>(
          'SELECT hour FROM client_metrics_variants ORDER BY hour',
        )
      ).map((row) => new Date(row.hour).toISOString()),
    });

    before(async () => {
      ({ db, cleanup } = await backend.open());
      // Migrations and the features the metrics rows belong to.
      const app = await buildApp(testConfig(), { db, logger: false });
      await app.close();
      await db.exec(
        `INSERT INTO features (name, project) VALUES ('alpha', 'default'), ('beta', 'default')`,
      );
    });
    after(async () => {
      await cleanup();
    });
    beforeEach(async () => {
      await db.exec(
        'DELETE FROM client_instances; DELETE FROM client_metrics; DELETE FROM client_metrics_variants; DELETE FROM client_applications;',
      );
    });

    it('deletes instances not seen and metrics buckets older than their settings, keeps the rest', async () => {
      assert.deepEqual(settings, { clientInstanceRetentionDays: 7, clientMetricsRetentionDays: 8 });
      await instance('gone-long-ago', ago(90 * DAY_MS));
      await instance('gone', ago(7 * DAY_MS + 60_000));
      await instance('quiet', ago(7 * DAY_MS - 60_000));
      await instance('live', NOW);
      for (const hour of [ago(30 * DAY_MS), ago(8 * DAY_MS + HOUR_MS), ago(8 * DAY_MS - HOUR_MS)]) {
        await bucket('alpha', hour);
        await variant('alpha', hour);
      }
      const result = await runRetention(db, NOW, settings);
      assert.deepEqual(result, {
        instances: { deleted: 2, batches: 1 },
        metrics: { deleted: 2, batches: 1 },
        variants: { deleted: 2, batches: 1 },
        applications: { deleted: 0, batches: 1 },
      });
      const kept = ago(8 * DAY_MS - HOUR_MS).toISOString();
      assert.deepEqual(await remaining(), {
        instances: ['live', 'quiet'],
        metrics: [kept],
        variants: [kept],
      });
      // Nothing more to do the second time.
      assert.deepEqual(await runRetention(db, NOW, settings), {
        instances: { deleted: 0, batches: 1 },
        metrics: { deleted: 0, batches: 1 },
        variants: { deleted: 0, batches: 1 },
        applications: { deleted: 0, batches: 1 },
      });
    });

    it('deletes applications not seen for the instance retention once none of their instances is left', async () => {
      // Issue 40: every new app name a registration or report carries was kept for ever.
      await application('made-up', ago(30 * DAY_MS));
      await application('gone', ago(7 * DAY_MS + 60_000));
      await application('quiet', ago(7 * DAY_MS - 60_000));
      await application('live', NOW);
      // Not seen by its application's row for long, but one of its instances still is.
      await application('app', ago(30 * DAY_MS));
      await instance('still-here', ago(DAY_MS));
      const result = await runRetention(db, NOW, settings);
      assert.deepEqual(result?.applications, { deleted: 2, batches: 1 });
      assert.deepEqual(await applications(), ['app', 'live', 'quiet']);
      // Once its last instance has gone, the application goes with it.
      const later = new Date(NOW.getTime() + 7 * DAY_MS);
      assert.deepEqual((await runRetention(db, later, settings))?.applications, {
        deleted: 2,
        batches: 1,
      });
      assert.deepEqual(await applications(), ['live']);
    });

    it('deletes in bounded batches until nothing old is left', async () => {
      for (let index = 0; index < 25; index += 1) {
        await instance(`old-${String(index).padStart(2, '0')}`, ago(30 * DAY_MS));
        await bucket('alpha', ago(30 * DAY_MS + index * HOUR_MS));
        await variant('beta', ago(30 * DAY_MS + index * HOUR_MS));
      }
      await instance('live', NOW);
      const result = await runRetention(db, NOW, settings, { batchSize: 10 });
      // 10 + 10 + 5 rows: three bounded deletes per table.
      assert.deepEqual(result, {
        instances: { deleted: 25, batches: 3 },
        metrics: { deleted: 25, batches: 3 },
        variants: { deleted: 25, batches: 3 },
        applications: { deleted: 0, batches: 1 },
      });
      assert.deepEqual(await remaining(), { instances: ['live'], metrics: [], variants: [] });
    });

    it('never deletes the buckets the insights snapshot sums (the current ISO week)', async () => {
      // Monday 00:00 of this week is 6 days 23.5 hours before NOW; last week's Sunday just before.
      const monday = new Date('2026-11-16T00:00:00.000Z');
      await bucket('alpha', monday, 'early');
      await bucket('beta', new Date('2026-11-19T10:00:00.000Z'), 'midweek');
      await bucket('alpha', new Date('2026-11-15T23:00:00.000Z'), 'last-week');
      const snapshotTotals = async () => {
        await db.transaction((tx) => captureSnapshot(tx, NOW));
        const [row] = await db.query<{ yes: number; apps: number }>(
          `SELECT total_yes::int AS yes, total_apps AS apps FROM insights_metrics_trends
            WHERE day = '2026-11-22' AND project = 'default'`,
        );
        return row;
      };
      const before = await snapshotTotals();
      assert.deepEqual(before, { yes: 20, apps: 2 });
      // The smallest retention the configuration accepts keeps them as well.
      for (const days of [settings.clientMetricsRetentionDays, MIN_METRICS_RETENTION_DAYS]) {
        await runRetention(db, NOW, { ...settings, clientMetricsRetentionDays: days });
        assert.deepEqual(await snapshotTotals(), before, `${days} days`);
      }
      await db.exec(`DELETE FROM insights_metrics_trends; DELETE FROM insights_user_trends;
        DELETE FROM insights_flag_trends; DELETE FROM insights_environment_trends;`);
    });

    it('runs on its own timer (first soon after start, then every interval) and stops', async () => {
      mock.timers.enable({ apis: ['setTimeout', 'setInterval'] });
      let clock = NOW;
      const job = startRetentionJob({ db, now: () => clock, log: silent, settings });
      try {
        await instance('old-1', ago(30 * DAY_MS));
        mock.timers.tick(RETENTION_FIRST_RUN_DELAY_MS - 1);
        await job.idle();
        assert.deepEqual((await remaining()).instances, ['old-1'], 'not before the first delay');
        mock.timers.tick(1);
        await job.idle();
        assert.deepEqual((await remaining()).instances, [], 'the first run');

        // An hour later, with the clock moved on: `now` comes from the clock of each run.
        await instance('seen-at-now', NOW);
        clock = new Date(NOW.getTime() + 8 * DAY_MS);
        mock.timers.tick(RETENTION_INTERVAL_MS);
        await job.idle();
        assert.deepEqual((await remaining()).instances, [], 'the interval run');

        await job.stop();
        await instance('old-2', ago(30 * DAY_MS));
        mock.timers.tick(10 * RETENTION_INTERVAL_MS);
        await job.idle();
        assert.deepEqual((await remaining()).instances, ['old-2'], 'nothing after stop');
      } finally {
        await job.stop();
        mock.timers.reset();
      }
    });

    it('is started with the app, from its configuration, and stopped when the app closes', async () => {
      mock.timers.enable({ apis: ['setTimeout', 'setInterval'] });
      try {
        const app = await buildApp(
          testConfig({ clientInstanceRetentionDays: 2, clientMetricsRetentionDays: 7 }),
          { db, logger: false, now: () => NOW },
        );
        await instance('three-days', ago(3 * DAY_MS));
        await instance('one-day', ago(DAY_MS));
        mock.timers.tick(RETENTION_FIRST_RUN_DELAY_MS);
        // Closing waits for the run in progress.
        await app.close();
        assert.deepEqual((await remaining()).instances, ['one-day']);
        await instance('three-days-again', ago(3 * DAY_MS));
        mock.timers.tick(10 * RETENTION_INTERVAL_MS);
        await new Promise((resolve) => setImmediate(resolve));
        assert.deepEqual((await remaining()).instances, ['one-day', 'three-days-again']);
      } finally {
        mock.timers.reset();
      }
    });

    if (backend.name === 'postgres' && postgresUrl) {
      /**
       * Runs `check` while another connection (another server) holds the advisory lock `key` of
       * this schema; `release` lets it go before the end.
       */
      async function whileLocked(
        key: number,
        check: (release: () => Promise<void>) => Promise<void>,
      ): Promise<void> {
        const [{ schema }] = (await db.query<{ schema: string }>(
          'SELECT current_schema() AS schema',
        )) as [{ schema: string }];
        const holder = new pg.Client({ connectionString: postgresUrl });
        await holder.connect();
        try {
          await holder.query('SELECT pg_advisory_lock($1, hashtext($2))', [key, schema]);
          await check(async () => {
            await holder.query('SELECT pg_advisory_unlock($1, hashtext($2))', [key, schema]);
          });
        } finally {
          await holder.end();
        }
      }

      it('lets one server clean up: a held advisory lock makes the others skip', async () => {
        await instance('old', ago(30 * DAY_MS));
        await whileLocked(ADVISORY_LOCK_KEYS.retention, async (release) => {
          assert.equal(await runRetention(db, NOW, settings), undefined);
          assert.deepEqual((await remaining()).instances, ['old']);
          await release();
          assert.equal((await runRetention(db, NOW, settings))?.instances.deleted, 1);
        });
      });

      it('runs while an import holds its own lock: every advisory lock has a key of its own', async () => {
        await instance('old', ago(30 * DAY_MS));
        await whileLocked(ADVISORY_LOCK_KEYS.import, async () => {
          assert.equal((await runRetention(db, NOW, settings))?.instances.deleted, 1);
        });
        assert.equal(
          new Set(Object.values(ADVISORY_LOCK_KEYS)).size,
          Object.keys(ADVISORY_LOCK_KEYS).length,
        );
      });
    }
  });
}
