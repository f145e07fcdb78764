import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import type { Database } from '../../src/db/database.js';
import { endOfDay, isoWeek, utcDay } from '../../src/features/insights/calendar.js';
import { runSnapshot } from '../../src/features/insights/snapshot-job.js';
import { admin, backends, testConfig } from '../helpers.js';

const flag = (name: string, type: string) => ({ name, type, project: 'shop' });

/** Insights over data written by the real admin API: projects, imports, enabling. */
for (const backend of backends) {
  describe(`insights over imported configuration on ${backend.name}`, () => {
    let cleanup: () => Promise<void>;
    let db: Database;
    let app: FastifyInstance;

    before(async () => {
      const opened = await backend.open();
      db = opened.db;
      cleanup = opened.cleanup;
      app = await buildApp(testConfig(), { db, logger: false });
    });
    after(async () => {
      await app.close();
      await cleanup();
    });

    const importInto = (environment: string, enabled: Record<string, boolean>) =>
      app.inject({
        method: 'POST',
        url: '/api/admin/features-batch/import',
        headers: admin,
        payload: {
          project: 'shop',
          environment,
          data: {
            features: [flag('cart', 'release'), flag('promo', 'experiment')],
            featureStrategies: [],
            featureEnvironments: Object.entries(enabled).map(([name, on]) => ({
              name: environment,
              featureName: name,
              enabled: on,
            })),
            tagTypes: [],
          },
        },
      });

    it('records enabling events from imports and counts them in the snapshot', async () => {
      const project = await app.inject({
        method: 'POST',
        url: '/api/admin/projects',
        headers: admin,
        payload: { id: 'shop' },
      });
      assert.equal(project.statusCode, 201, project.body);
      assert.equal((await importInto('development', { cart: true, promo: false })).statusCode, 200);
      assert.equal((await importInto('production', { cart: true, promo: true })).statusCode, 200);
      // Importing the same state again enables nothing new.
      assert.equal((await importInto('production', { cart: true, promo: true })).statusCode, 200);

      const events = await db.query<{ type: string; feature_name: string; environment: string }>(
        `SELECT type, feature_name, environment FROM events
          WHERE type = 'feature-environment-enabled' ORDER BY id`,
      );
      assert.deepEqual(
        events.map((e) => `${e.feature_name}@${e.environment}`),
        ['cart@development', 'cart@production', 'promo@production'],
      );

      const now = new Date();
      assert.equal(await runSnapshot(db, now), true);
      const today = utcDay(now);
      const response = await app.inject({
        url: `/api/admin/insights?from=${today}&to=${today}`,
        headers: admin,
      });
      const body = response.json();
      const shop = body.projectFlagTrends.find(
        (row: { project: string }) => row.project === 'shop',
      );
      // Created and enabled in production the same day: zero whole days, over release flags only.
      assert.deepEqual(shop, {
        week: isoWeek(today),
        project: 'shop',
        date: endOfDay(today),
        total: 2,
        active: 2,
        stale: 0,
        potentiallyStale: 0,
        health: 100,
        timeToProduction: 0,
        users: 0,
      });
      // This week's updates: the three imports plus the three enablings.
      const updates = Object.fromEntries(
        body.environmentTypeTrends.map((row: { environmentType: string; totalUpdates: number }) => [
          row.environmentType,
          row.totalUpdates,
        ]),
      );
      assert.deepEqual(updates, { development: 2, production: 4 });
    });
  });
}

for (const backend of backends) {
  describe(`insights right after an import on ${backend.name}`, () => {
    let cleanup: () => Promise<void>;
    let app: FastifyInstance;

    before(async () => {
      const opened = await backend.open();
      cleanup = opened.cleanup;
      app = await buildApp(testConfig(), { db: opened.db, logger: false });
    });
    after(async () => {
      await app.close();
      await cleanup();
    });

    it('counts the imported flags today without waiting for a snapshot', async () => {
      // The server wrote today's snapshot when it started, with no flags; none runs after this.
      const imported = await app.inject({
        method: 'POST',
        url: '/api/admin/features-batch/import',
        headers: admin,
        payload: {
          project: 'default',
          environment: 'development',
          data: {
            features: ['a', 'b', 'c'].map((name) => ({
              name,
              type: 'release',
              project: 'default',
            })),
            featureStrategies: [],
            featureEnvironments: [],
            tagTypes: [],
          },
        },
      });
      assert.equal(imported.statusCode, 200, imported.body);
      const response = await app.inject({ url: '/api/admin/insights', headers: admin });
      assert.equal(response.statusCode, 200);
      const body = response.json();
      const today = endOfDay(utcDay(new Date()));
      assert.deepEqual(body.flagTrends.at(-1), {
        date: today,
        total: 3,
        active: 3,
        stale: 0,
        potentiallyStale: 0,
      });
      assert.deepEqual(
        body.projectFlagTrends.map((row: { project: string; date: string; total: number }) => [
          row.project,
          row.date,
          row.total,
        ]),
        [['default', today, 3]],
      );
      assert.equal(body.flagTrends.length, 1);
    });
  });
}
