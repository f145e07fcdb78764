import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MAX_BULK_APPLICATIONS, MAX_BULK_METRICS } from '@flags/schemas';
import type { FastifyInstance } from 'fastify';
import type { Database } from '../../src/db/database.js';
import { endOfDay, isoWeek } from '../../src/features/insights/calendar.js';
import { runSnapshot } from '../../src/features/insights/snapshot-job.js';
import { admin, backends, DEV_TOKEN, startApp } from '../helpers.js';

/** One metric of a bulk report, as Unleash Edge serializes it. */
const metric = (
  featureName: string,
  timestamp: string | number,
  yes: number,
  no: number,
  variants: Record<string, number> = {},
  environment = 'development',
  appName = 'checkout',
) => ({ featureName, appName, environment, timestamp, yes, no, variants });

/** One application of a bulk report, as Unleash Edge serializes it (unset fields are null). */
const application = (appName: string, fields: Record<string, unknown> = {}) => ({
  appName,
  connectVia: [{ appName: 'unleash-edge', instanceId: 'edge-1' }],
  environment: 'development',
  projects: null,
  instanceId: null,
  connectionId: null,
  interval: 15000,
  started: '2026-03-01T09:00:00Z',
  strategies: [],
  sdkVersion: null,
  sdkType: 'backend',
  yggdrasilVersion: null,
  platformName: null,
  platformVersion: null,
  ...fields,
});

for (const backend of backends) {
  describe(`Edge's bulk metrics and instance data on ${backend.name}`, () => {
    let db: Database;
    let cleanup: () => Promise<void>;
    let app: FastifyInstance;
    /** Posts with the development client token; a string payload is sent as raw JSON text. */
    const post = (url: string, payload: unknown, headers: Record<string, string> = {}) =>
      app.inject({
        method: 'POST',
        url,
        headers: {
          authorization: DEV_TOKEN,
          ...(typeof payload === 'string' ? { 'content-type': 'application/json' } : {}),
          ...headers,
        },
        payload: payload as string | object,
      });
    const bulk = (payload: unknown) => post('/api/client/metrics/bulk', payload);
    const buckets = () =>
      db.query(
        `SELECT feature_name, app_name, environment, hour, yes::int AS yes, no::int AS no
           FROM client_metrics ORDER BY hour, feature_name, app_name`,
      );
    const variantBuckets = () =>
      db.query(
        `SELECT feature_name, hour, variant, count::int AS count
           FROM client_metrics_variants ORDER BY hour, feature_name, variant`,
      );

    before(async () => {
      ({ db, cleanup } = await backend.open());
      app = await startApp(db);
      const imported = await app.inject({
        method: 'POST',
        url: '/api/admin/features-batch/import',
        headers: admin,
        payload: {
          project: 'default',
          environment: 'development',
          data: {
            features: [{ name: 'dark-mode' }, { name: 'checkout-v2' }],
            featureStrategies: [],
            // Only the variants a flag defines are stored (issue 40).
            featureEnvironments: [
              {
                name: 'dark-mode',
                featureName: 'dark-mode',
                environment: 'development',
                enabled: true,
                variants: ['dark', 'dim'].map((name) => ({
                  name,
                  weight: 500,
                  weightType: 'variable',
                  stickiness: 'default',
                })),
              },
            ],
            tagTypes: [],
          },
        },
      });
      assert.equal(imported.statusCode, 200, imported.body);
    });
    after(async () => {
      await app.close();
      await cleanup();
    });

    it("adds the token environment's metrics into the hourly buckets; others are dropped", async () => {
      const report = {
        applications: [
          application('checkout', {
            instanceId: 'pod-1',
            connectionId: 'conn-1',
            sdkVersion: 'unleash-client-node:6.1.0',
            strategies: ['default', 'flexibleRollout'],
          }),
          application('web', { environment: null, interval: 0, sdkType: 'frontend' }),
          application('reports', { environment: 'production', instanceId: 'r-1' }),
        ],
        metrics: [
          metric('dark-mode', '2026-03-01T10:05:00Z', 3, 1, { dark: 2 }),
          metric('dark-mode', '2026-03-01T10:40:00.123Z', 2, 0, { dark: 1, dim: 1, 'made-up': 4 }),
          metric('dark-mode', '2026-03-01T11:00:00Z', 1, 0),
          metric('dark-mode', '2026-03-01T10:05:00Z', 100, 0, {}, 'production'),
          metric('not-a-flag', '2026-03-01T10:05:00Z', 5, 0),
          metric('checkout-v2', Date.parse('2026-03-01T10:05:00Z'), 0, 0, {}, 'development', 'web'),
        ],
        impactMetrics: [{ name: 'checkouts', help: 'done', type: 'counter', samples: [] }],
      };
      const accepted = await bulk(report);
      assert.equal(accepted.statusCode, 202, accepted.body);
      assert.equal(accepted.body, '');
      const row = (hour: string, yes: number, no: number) => ({
        feature_name: 'dark-mode',
        app_name: 'checkout',
        environment: 'development',
        hour: new Date(hour),
        yes,
        no,
      });
      assert.deepEqual(await buckets(), [
        row('2026-03-01T10:00:00Z', 5, 1),
        row('2026-03-01T11:00:00Z', 1, 0),
      ]);
      // A second report of the same hour adds to the same buckets.
      assert.equal((await bulk({ applications: [], metrics: report.metrics })).statusCode, 202);
      assert.deepEqual(await buckets(), [
        row('2026-03-01T10:00:00Z', 10, 2),
        row('2026-03-01T11:00:00Z', 2, 0),
      ]);
      const hour = new Date('2026-03-01T10:00:00Z');
      assert.deepEqual(await variantBuckets(), [
        { feature_name: 'dark-mode', hour, variant: 'dark', count: 6 },
        { feature_name: 'dark-mode', hour, variant: 'dim', count: 2 },
      ]);

      const instances = await db.query(
        `SELECT app_name, instance_id, environment, sdk_version, interval_ms, connection_id
           FROM client_instances ORDER BY app_name`,
      );
      assert.deepEqual(instances, [
        {
          app_name: 'checkout',
          instance_id: 'pod-1',
          environment: 'development',
          sdk_version: 'unleash-client-node:6.1.0',
          interval_ms: 15000,
          connection_id: 'conn-1',
        },
        {
          app_name: 'web',
          instance_id: 'default',
          environment: 'development',
          sdk_version: null,
          interval_ms: 0,
          connection_id: null,
        },
      ]);
      const applications = await db.query(
        'SELECT app_name, strategies FROM client_applications ORDER BY app_name',
      );
      assert.deepEqual(applications, [
        { app_name: 'checkout', strategies: ['default', 'flexibleRollout'] },
        { app_name: 'web', strategies: [] },
      ]);
    });

    it('accepts an empty report (202) and refuses malformed ones with 400 JSON, writing nothing', async () => {
      assert.equal((await bulk({ applications: [], metrics: [] })).statusCode, 202);
      const before = [await buckets(), await variantBuckets()];
      const good = metric('dark-mode', '2026-03-01T12:00:00Z', 1, 0);
      const tiny = { featureName: 'a', appName: 'a', environment: '', timestamp: 0, yes: 0, no: 0 };
      const cases: unknown[] = [
        {},
        { applications: [] },
        { applications: [], metrics: [good, { featureName: 'dark-mode' }] },
        { applications: [], metrics: [good, { ...good, yes: -1 }] },
        { applications: [], metrics: [good, { ...good, timestamp: 'yesterday' }] },
        { applications: [], metrics: [good, { ...good, timestamp: 1e20 }] },
        { applications: [], metrics: [good, { ...good, variants: { dark: -2 } }] },
        { applications: [{}], metrics: [good] },
        { applications: [], metrics: Array(MAX_BULK_METRICS + 1).fill(tiny) },
        { applications: Array(MAX_BULK_APPLICATIONS + 1).fill({ appName: 'a' }), metrics: [] },
        '{"applications": [',
      ];
      for (const payload of cases) {
        const response = await bulk(payload);
        const label = JSON.stringify(payload).slice(0, 100);
        assert.equal(response.statusCode, 400, label);
        assert.equal(response.json().name, 'BadDataError', label);
        assert.deepEqual(Object.keys(response.json()), ['code', 'name', 'message', 'details']);
      }
      const tooLarge = await bulk(
        JSON.stringify({ applications: [], metrics: [], padding: 'x'.repeat(2 * 1024 * 1024) }),
      );
      assert.equal(tooLarge.statusCode, 413);
      assert.equal(tooLarge.json().name, 'ContentTooLargeError');
      assert.deepEqual([await buckets(), await variantBuckets()], before);
    });

    it("answers an Edge's instance data with 202, recording only the Edge as seen", async () => {
      const instanceData = {
        identifier: 'edge-eu-1',
        appName: 'unleash-edge',
        region: 'eu',
        edgeVersion: '20.4.1',
        started: '2026-03-01T08:00:00Z',
        connectedEdges: [],
        processMetrics: { cpuUsage: 0.5 },
      };
      const headers = {
        'unleash-appname': 'unleash-edge',
        'unleash-instanceid': 'edge-eu-1',
        'unleash-connection-id': 'edge-conn',
        'unleash-sdk': 'unleash-edge:20.4.1',
      };
      const seen = await post('/api/client/metrics/edge', instanceData, headers);
      assert.equal(seen.statusCode, 202, seen.body);
      assert.equal(seen.body, '');
      assert.deepEqual(
        await db.query(
          `SELECT instance_id, environment, sdk_version, connection_id FROM client_instances
            WHERE app_name = 'unleash-edge'`,
        ),
        [
          {
            instance_id: 'edge-eu-1',
            environment: 'development',
            sdk_version: 'unleash-edge:20.4.1',
            connection_id: 'edge-conn',
          },
        ],
      );
      const count = async () => (await db.query('SELECT 1 FROM client_instances')).length;
      const instances = await count();
      assert.equal((await post('/api/client/metrics/edge', {})).statusCode, 202);
      assert.equal(await count(), instances);
      for (const payload of ['[]', '"edge"', '{"identifier":']) {
        const refused = await post('/api/client/metrics/edge', payload);
        assert.equal(refused.statusCode, 400, payload);
        assert.equal(refused.json().name, 'BadDataError');
      }
    });

    it('counts bulk metrics in the insights metricsSummaryTrends of their week', async () => {
      // Wednesday of ISO week 2026-10; the metrics above (Sunday 1 March) belong to week 09.
      const wednesday = '2026-03-04';
      const report = {
        applications: [application('edge-app', { instanceId: 'e-1' })],
        metrics: [
          metric('dark-mode', '2026-03-02T08:00:00Z', 7, 2, {}, 'development', 'edge-app'),
          metric('checkout-v2', '2026-03-03T09:30:00Z', 4, 0, {}, 'development', 'edge-app'),
          metric('checkout-v2', '2026-03-03T09:30:00Z', 50, 0, {}, 'production', 'edge-app'),
        ],
      };
      assert.equal((await bulk(report)).statusCode, 202);
      assert.equal(await runSnapshot(db, new Date(`${wednesday}T12:00:00Z`)), true);
      const response = await app.inject({
        url: `/api/admin/insights?from=${wednesday}&to=${wednesday}`,
        headers: admin,
      });
      assert.equal(response.statusCode, 200, response.body);
      assert.deepEqual(response.json().metricsSummaryTrends, [
        {
          week: isoWeek(wednesday),
          date: endOfDay(wednesday),
          project: 'default',
          totalRequests: 13,
          totalYes: 11,
          totalNo: 2,
          totalApps: 1,
          totalFlags: 2,
          totalEnvironments: 1,
        },
      ]);
    });
  });
}
