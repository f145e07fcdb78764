import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MAX_NAME_LENGTH, MAX_REGISTERED_STRATEGIES, MAX_REPORT_VARIANTS } from '@flags/schemas';
import type { FastifyInstance } from 'fastify';
import type { Database } from '../../src/db/database.js';
import { recordInstances } from '../../src/features/metrics/metrics-store.js';
import { admin, backends, DEV_TOKEN, startApp } from '../helpers.js';

/**
 * Issue 40 (MEDIUM "server disk and stalls", MEDIUM "registrations kept forever"): what a holder
 * of a frontend token (public) or a client token can make flags-server store. Only the variants a
 * flag defines (and `disabled`) are stored, whatever names a report carries; registrations keep
 * bounded fields.
 */

const DEV_FRONTEND = '*:development.frontend-dev-secret';
/** A report beyond the schema's bound: the probe (~770 KB, under the body limit). */
const HOSTILE_VARIANTS = 60_000;
const REPORTS_PER_PATH = 5;
const HOUR = '2026-03-01T10:00:00.000Z';
const STOP = '2026-03-01T10:05:00.000Z';

/** `count` made-up variant names (unique per `tag`, short as an attacker makes them), each counted once. */
function madeUp(tag: string, count: number): Record<string, number> {
  const variants: Record<string, number> = {};
  for (let index = 0; index < count; index += 1) variants[`${tag}${index.toString(36)}`] = 1;
  return variants;
}

for (const backend of backends) {
  describe(`bounded usage storage on ${backend.name}`, () => {
    let db: Database;
    let cleanup: () => Promise<void>;
    let app: FastifyInstance;

    const post = (url: string, token: string, payload: object) =>
      app.inject({ method: 'POST', url, headers: { authorization: token }, payload });
    const variantRows = () =>
      db.query<{ feature_name: string; app_name: string; variant: string; count: number }>(
        `SELECT feature_name, app_name, variant, count::int AS count
           FROM client_metrics_variants ORDER BY feature_name, app_name, variant`,
      );
    const rowCounts = async () => {
      const [row] = await db.query<Record<string, number>>(
        `SELECT (SELECT count(*)::int FROM client_metrics) AS metrics,
                (SELECT count(*)::int FROM client_metrics_variants) AS variants,
                (SELECT count(*)::int FROM client_applications) AS applications,
                (SELECT count(*)::int FROM client_instances) AS instances`,
      );
      return row!;
    };

    /** One report per path, each carrying `variants` for `checkout` and `plain`. */
    const reports = (appName: string, variants: (flag: string) => Record<string, number>) => {
      const toggles = {
        checkout: { yes: 1, no: 0, variants: variants('checkout') },
        plain: { yes: 0, no: 1, variants: variants('plain') },
      };
      const report = { appName, bucket: { start: HOUR, stop: STOP, toggles } };
      return [
        ['/api/frontend/client/metrics', DEV_FRONTEND, report],
        ['/api/client/metrics', DEV_TOKEN, report],
        [
          '/api/client/metrics/bulk',
          DEV_TOKEN,
          {
            applications: [],
            metrics: Object.entries(toggles).map(([featureName, toggle]) => ({
              featureName,
              appName,
              environment: 'development',
              timestamp: STOP,
              ...toggle,
            })),
          },
        ],
      ] as const;
    };

    before(async () => {
      ({ db, cleanup } = await backend.open());
      app = await startApp(db, { frontendTokens: [DEV_FRONTEND] });
      const variant = (name: string) => ({
        name,
        weight: 500,
        weightType: 'variable',
        stickiness: 'default',
      });
      const imported = await app.inject({
        method: 'POST',
        url: '/api/admin/features-batch/import',
        headers: admin,
        payload: {
          project: 'default',
          environment: 'development',
          data: {
            features: [{ name: 'checkout' }, { name: 'plain' }],
            featureStrategies: [
              {
                name: 'flexibleRollout',
                featureName: 'checkout',
                parameters: { rollout: '100', stickiness: 'default', groupId: 'checkout' },
                constraints: [],
                variants: [{ ...variant('red'), weight: 1000 }],
              },
              { name: 'default', featureName: 'plain', parameters: {}, constraints: [] },
            ],
            featureEnvironments: [
              {
                name: 'checkout',
                featureName: 'checkout',
                environment: 'development',
                enabled: true,
                variants: [variant('blue'), variant('green')],
              },
              {
                name: 'plain',
                featureName: 'plain',
                environment: 'development',
                enabled: true,
                variants: [],
              },
            ],
            tagTypes: [],
          },
        },
      });
      assert.equal(imported.statusCode, 200, imported.body);
    });
    after(async () => {
      await app?.close();
      await cleanup();
    });

    it('stores only the variants a flag defines (and `disabled`), whatever names reports carry', async () => {
      for (let round = 0; round < REPORTS_PER_PATH; round += 1) {
        const paths = reports('shop', (flag) => ({
          // Within the schema's bound: made-up names plus a defined one and `disabled`.
          ...madeUp(`${flag}-${round}`, MAX_REPORT_VARIANTS - 3),
          ...(flag === 'checkout' ? { blue: 1, red: 1 } : { blue: 1 }),
          disabled: 1,
        }));
        for (const [url, token, payload] of paths) {
          const response = await post(url, token, payload);
          assert.equal(response.statusCode, 202, `${url}: ${response.body}`);
        }
      }
      const stored = 3 * REPORTS_PER_PATH;
      assert.deepEqual(await variantRows(), [
        { feature_name: 'checkout', app_name: 'shop', variant: 'blue', count: stored },
        { feature_name: 'checkout', app_name: 'shop', variant: 'disabled', count: stored },
        { feature_name: 'checkout', app_name: 'shop', variant: 'red', count: stored },
        // `plain` defines no variant: `blue` is made up for it.
        { feature_name: 'plain', app_name: 'shop', variant: 'disabled', count: stored },
      ]);
      // One yes/no bucket per flag, one application and one instance for all those reports.
      assert.deepEqual(await rowCounts(), {
        metrics: 2,
        variants: 4,
        applications: 1,
        instances: 1,
      });
    });

    it('adds at most one row per served flag and defined variant (and `disabled`) per report, whatever app it names', async () => {
      // The bound a report with a new app name each time meets: per report, a yes/no row per flag
      // it names, a variant row per variant that flag defines plus `disabled`, an application
      // and an instance. `checkout` defines blue, green and red; `plain` none.
      const perReport = { metrics: 2, variants: 4 + 1, applications: 1, instances: 1 };
      const before = await rowCounts();
      const reportsSent = 10;
      for (let index = 0; index < reportsSent; index += 1) {
        const [frontend] = reports(`app-${index}`, (flag) => ({
          ...madeUp(flag, MAX_REPORT_VARIANTS - 4),
          blue: 1,
          green: 1,
          red: 1,
          disabled: 1,
        }));
        const [url, token, payload] = frontend;
        const response = await post(url, token, { ...payload, instanceId: `instance-${index}` });
        assert.equal(response.statusCode, 202, response.body);
      }
      const after = await rowCounts();
      for (const table of Object.keys(perReport) as (keyof typeof perReport)[]) {
        assert.equal(
          after[table]! - before[table]!,
          reportsSent * perReport[table],
          `${table}: ${reportsSent} reports`,
        );
      }
    });

    it(`refuses a report of ${HOSTILE_VARIANTS} variant names on every path, and stores nothing of it`, async () => {
      const before = await rowCounts();
      const hostile = reports('hostile', (flag) =>
        flag === 'checkout' ? madeUp('v', HOSTILE_VARIANTS) : {},
      );
      for (const [url, token, payload] of hostile) {
        const response = await post(url, token, payload);
        assert.equal(response.statusCode, 400, `${url}: ${response.body}`);
        assert.equal(response.json().name, 'BadDataError', response.body);
      }
      assert.deepEqual(await rowCounts(), before);
    });

    it('stores no strategy list from the frontend API (its token is public; browsers evaluate nothing)', async () => {
      const strategies = Array.from({ length: MAX_REGISTERED_STRATEGIES }, (_, index) =>
        `s${index}-`.padEnd(MAX_NAME_LENGTH, 'x'),
      );
      const response = await post('/api/frontend/client/register', DEV_FRONTEND, {
        appName: 'browser',
        strategies,
      });
      assert.equal(response.statusCode, 202, response.body);
      const [row] = await db.query<{ strategies: string[] }>(
        `SELECT strategies FROM client_applications WHERE app_name = 'browser'`,
      );
      assert.deepEqual(row?.strategies, []);
    });

    it('keeps every field a registration or report stores within its bound', async () => {
      // A date-time may carry any number of fraction digits: 500,000 of them pass the format.
      const started = `2026-03-01T09:00:00.${'1'.repeat(500_000)}Z`;
      const sent = [
        await post('/api/client/register', DEV_TOKEN, { appName: 'long-started', started }),
        await post('/api/client/metrics/bulk', DEV_TOKEN, {
          applications: [{ appName: 'long-started-bulk', instanceId: 'i-1', started }],
          metrics: [],
        }),
      ];
      for (const response of sent)
        assert.ok([202, 400].includes(response.statusCode), response.body);
      const [longest] = await db.query<Record<string, number | null>>(
        `SELECT max(length(app_name)) AS app_name, max(length(instance_id)) AS instance_id,
                max(length(sdk_version)) AS sdk_version, max(length(client_ip)) AS client_ip,
                max(length(started)) AS started, max(length(connection_id)) AS connection_id
           FROM client_instances`,
      );
      for (const [column, length] of Object.entries(longest!)) {
        assert.ok(
          (length ?? 0) <= MAX_NAME_LENGTH,
          `client_instances.${column}: ${length} characters`,
        );
      }
    });

    it('keeps a registration bounded: 1,000 long strategy names are refused, and never stored whole', async () => {
      const strategies = Array.from({ length: 1000 }, (_, index) =>
        `strategy-${index}-`.padEnd(1000, 'x'),
      );
      const response = await post('/api/client/register', DEV_TOKEN, {
        appName: 'long-strategies',
        strategies,
      });
      assert.equal(response.statusCode, 400, response.body);
      // The store keeps within the schema's bounds even when called directly.
      await db.transaction((tx) =>
        recordInstances(
          tx,
          'development',
          [
            {
              appName: 'long-strategies',
              instanceId: 'direct',
              connectionId: null,
              sdkVersion: null,
              strategies,
              started: null,
              intervalMs: null,
            },
          ],
          '127.0.0.1',
        ),
      );
      const [row] = await db.query<{ strategies: string[] }>(
        `SELECT strategies FROM client_applications WHERE app_name = 'long-strategies'`,
      );
      assert.ok(
        row!.strategies.length <= MAX_REGISTERED_STRATEGIES,
        `${row!.strategies.length} strategies stored`,
      );
      for (const name of row!.strategies) {
        assert.ok(name.length <= MAX_NAME_LENGTH, `${name.length} characters stored`);
      }
    });
  });
}
