import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { pino } from 'pino';
import { buildApp } from '../../src/app.js';
import { openPostgres } from '../../src/db/database.js';
import { admin, DEV_TOKEN, postgresUrl, testConfig } from '../helpers.js';
import { startTcpRelay, type TcpRelay } from '../tcp-relay.js';

/**
 * flags-server while PostgreSQL is unreachable (issue 18): a TCP relay between the server and the
 * test PostgreSQL is cut and restored. The issue's outage lasts 30 s; what matters is that every
 * request of the outage is answered, and the test holds the issue's 30 s (`OUTAGE_MS` shortens it
 * while working on this file). The server re-checks the revision every 100 ms and retries the
 * database every 100 ms, so the outage spans hundreds of checks and retries.
 */
const OUTAGE_MS = Number(process.env.OUTAGE_MS ?? 30_000);
const METRICS_POSTS = 1000;
/** Acceptance: writes work again within 10 s of the relay's restoring. */
const RECOVERY_LIMIT_MS = 10_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` until it returns true, failing after `limitMs`; returns the time it took. */
async function within(limitMs: number, what: string, check: () => Promise<boolean>) {
  const started = Date.now();
  while (!(await check())) {
    assert.ok(Date.now() - started < limitMs, `${what}: not within ${limitMs} ms`);
    await sleep(25);
  }
  return Date.now() - started;
}

/** A fresh schema on the test PostgreSQL, reached through `relay`. */
async function schemaBehind(relay: TcpRelay, url: string) {
  const schema = `test_${randomBytes(6).toString('hex')}`;
  const direct = new pg.Client({ connectionString: url });
  await direct.connect();
  await direct.query(`CREATE SCHEMA ${schema}`);
  const db = openPostgres(relay.url, { schema, maxConnections: 4, connectTimeoutMs: 1000 });
  return {
    db,
    /** Reads the schema without the relay, so a test can look while the relay is cut. */
    direct: async <Row>(sql: string) => {
      await direct.query(`SET search_path TO ${schema}`);
      return (await direct.query(sql)).rows as Row[];
    },
    async cleanup() {
      await db.close();
      await direct.query(`DROP SCHEMA ${schema} CASCADE`);
      await direct.end();
    },
  };
}

/** A pino logger whose lines the test reads. */
function capturedLogger() {
  const lines: { level: number; msg: string }[] = [];
  const logger = pino(
    { level: 'info' },
    { write: (line: string) => void lines.push(JSON.parse(line)) },
  );
  return { logger, messages: () => lines.map((line) => line.msg) };
}

const FRONTEND_TOKEN = '*:development.outage-frontend-secret';
const frontend = { authorization: FRONTEND_TOKEN };

const outageConfig = () =>
  testConfig({
    frontendTokens: [FRONTEND_TOKEN],
    revisionCheckMs: 100,
    databaseRetryMs: 100,
    metricsBufferMaxReports: METRICS_POSTS,
  });

const importFlags = (app: FastifyInstance, names: readonly string[]) =>
  app.inject({
    method: 'POST',
    url: '/api/admin/features-batch/import',
    headers: admin,
    payload: {
      project: 'default',
      environment: 'development',
      data: {
        features: names.map((name) => ({ name, type: 'release', project: 'default' })),
        featureStrategies: names.map((name) => ({
          name: 'flexibleRollout',
          featureName: name,
          parameters: { rollout: '50', stickiness: 'default', groupId: name },
        })),
        featureEnvironments: names.map((name) => ({
          name,
          featureName: name,
          environment: 'development',
          enabled: true,
        })),
        tagTypes: [],
      },
    },
  });

const client = { authorization: DEV_TOKEN, 'unleash-client-spec': '5.1.0' };

/** Report `i`: one evaluation of `steady` per report, alternating the single and bulk routes. */
const usageReport = (app: FastifyInstance, i: number) =>
  i % 2 === 0
    ? app.inject({
        method: 'POST',
        url: '/api/client/metrics',
        headers: client,
        payload: {
          appName: 'checkout',
          instanceId: `pod-${i % 7}`,
          bucket: {
            start: '2026-03-01T10:00:00Z',
            stop: '2026-03-01T10:00:10Z',
            toggles: { steady: { yes: 1, no: 0, variants: {} } },
          },
        },
      })
    : app.inject({
        method: 'POST',
        url: '/api/client/metrics/bulk',
        headers: client,
        payload: {
          applications: [],
          metrics: [
            {
              featureName: 'steady',
              appName: 'checkout',
              environment: 'development',
              timestamp: '2026-03-01T10:00:05Z',
              yes: 0,
              no: 1,
              variants: {},
            },
          ],
        },
      });

if (postgresUrl) {
  const url = postgresUrl;

  describe('flags-server while PostgreSQL is unreachable', () => {
    let relay: TcpRelay;
    let storage: Awaited<ReturnType<typeof schemaBehind>>;
    let app: FastifyInstance;
    const log = capturedLogger();

    before(async () => {
      relay = await startTcpRelay(url);
      storage = await schemaBehind(relay, url);
      app = await buildApp(outageConfig(), { db: storage.db, logger: log.logger });
      assert.equal((await importFlags(app, ['steady', 'rollout'])).statusCode, 200);
    });
    after(async () => {
      relay.restore();
      await app.close();
      await storage.cleanup();
      await relay.close();
    });

    it('serves the client API from memory, refuses writes, holds usage reports, and recovers by itself', async () => {
      const loaded = await app.inject({ url: '/api/client/features', headers: client });
      assert.equal(loaded.statusCode, 200);
      const etag = loaded.headers.etag as string;
      const gzipped = await app.inject({
        url: '/api/client/features',
        headers: { ...client, 'accept-encoding': 'gzip' },
      });
      assert.equal(gzipped.statusCode, 200);
      const evaluated = await app.inject({ url: '/api/frontend?userId=u1', headers: frontend });
      assert.equal(evaluated.statusCode, 200, evaluated.body);
      const frontendEtag = evaluated.headers.etag as string;

      relay.cut();
      const cutAt = Date.now();
      const statuses = new Map<number, number>();
      let requests = 0;
      let metricsSent = 0;
      const outage = async () => {
        while (Date.now() - cutAt < OUTAGE_MS) {
          // Every request of the outage: with the ETag (304), plain and gzip (200).
          const kind = requests++ % 3;
          const response = await app.inject({
            url: '/api/client/features',
            headers: {
              ...client,
              ...(kind === 0 ? { 'if-none-match': etag } : {}),
              ...(kind === 1 ? { 'accept-encoding': 'gzip' } : {}),
            },
          });
          statuses.set(response.statusCode, (statuses.get(response.statusCode) ?? 0) + 1);
          assert.equal(response.statusCode, kind === 0 ? 304 : 200, response.body);
          assert.equal(response.headers.etag, etag);
          if (kind === 1) assert.deepEqual(response.rawPayload, gzipped.rawPayload);
          if (kind === 2) assert.equal(response.body, loaded.body);
          // The frontend API evaluates the same configuration from memory.
          const browser = await app.inject({ url: '/api/frontend?userId=u1', headers: frontend });
          assert.equal(browser.statusCode, 200, browser.body);
          assert.equal(browser.headers.etag, frontendEtag);
          assert.equal(browser.body, evaluated.body);
          // Usage reports of the outage, spread over it.
          for (let i = 0; i < 20 && metricsSent < METRICS_POSTS; i++) {
            const accepted = await usageReport(app, metricsSent++);
            assert.equal(accepted.statusCode, 202, accepted.body);
          }
          await sleep(10);
        }
      };
      await outage();
      while (metricsSent < METRICS_POSTS) {
        assert.equal((await usageReport(app, metricsSent++)).statusCode, 202);
      }
      // The buffer is full: the next report is refused, so the SDK keeps its counts.
      const refused = await usageReport(app, METRICS_POSTS);
      assert.equal(refused.statusCode, 503);
      assert.equal(refused.json().name, 'ServiceUnavailableError');

      // Writes answer 503 in the error shape, naming the database, and leave nothing behind.
      const rejected = await importFlags(app, ['outage-a', 'outage-b']);
      assert.equal(rejected.statusCode, 503, rejected.body);
      const error = rejected.json();
      assert.deepEqual(Object.keys(error), ['code', 'name', 'message', 'details']);
      assert.equal(error.name, 'ServiceUnavailableError');
      assert.match(error.message, /database is unreachable/);
      const project = await app.inject({
        method: 'POST',
        url: '/api/admin/projects',
        headers: admin,
        payload: { id: 'during-outage' },
      });
      assert.equal(project.statusCode, 503);
      // A token check from the last known token set: an unknown one is still refused.
      const unknown = await app.inject({
        url: '/api/client/features',
        headers: { authorization: '*:development.unknown' },
      });
      assert.equal(unknown.statusCode, 401);

      const ready = await app.inject({ url: '/ready' });
      assert.equal(ready.statusCode, 200);
      assert.deepEqual(ready.json(), {
        status: 'DEGRADED',
        database: 'unreachable',
        heldUsageReports: METRICS_POSTS,
      });
      assert.ok(
        log.messages().some((msg) => /^database unreachable: degraded/.test(msg)),
        log.messages().join('\n'),
      );
      // The outage is logged once, not once per refused request.
      assert.ok(!log.messages().includes('request failed'), log.messages().join('\n'));
      const gauges = await app.inject({ url: '/internal-backstage/prometheus' });
      assert.match(gauges.body, /^flags_server_database_up 0$/m);
      assert.match(gauges.body, /^flags_server_ready 1$/m);
      assert.match(
        gauges.body,
        new RegExp(`^flags_server_usage_reports_held ${METRICS_POSTS}$`, 'm'),
      );
      const outageMs = Date.now() - cutAt;

      relay.restore();
      const recoveryMs = await within(RECOVERY_LIMIT_MS, 'a write after restoring', async () => {
        const response = await app.inject({
          method: 'POST',
          url: '/api/admin/projects',
          headers: admin,
          payload: { id: 'after-outage' },
        });
        return response.statusCode === 201;
      });
      await within(RECOVERY_LIMIT_MS, 'the held reports written', async () => {
        const body = (await app.inject({ url: '/ready' })).json();
        return body.status === 'READY' && body.heldUsageReports === 0;
      });
      assert.ok(
        log
          .messages()
          .includes('database reachable again: serving from the database, writes accepted'),
      );
      const after = (await app.inject({ url: '/internal-backstage/prometheus' })).body;
      assert.match(after, /^flags_server_database_up 1$/m);
      assert.match(after, /^flags_server_usage_reports_held 0$/m);

      // Every evaluation of the outage counted once: 500 reports of one yes, 500 of one no.
      const counted = await storage.direct<{ yes: number; no: number }>(
        `SELECT sum(yes)::int AS yes, sum(no)::int AS no FROM client_metrics WHERE feature_name = 'steady'`,
      );
      assert.deepEqual(counted, [{ yes: METRICS_POSTS / 2, no: METRICS_POSTS / 2 }]);
      const leftovers = await storage.direct<{ n: number }>(
        `SELECT (SELECT count(*) FROM features WHERE name LIKE 'outage-%')::int
              + (SELECT count(*) FROM feature_strategies WHERE feature_name LIKE 'outage-%')::int
              + (SELECT count(*) FROM events WHERE feature_name LIKE 'outage-%')::int
              + (SELECT count(*) FROM projects WHERE id = 'during-outage')::int AS n`,
      );
      assert.deepEqual(leftovers, [{ n: 0 }]);
      // And the configuration moves again.
      assert.equal((await importFlags(app, ['after'])).statusCode, 200);
      const moved = await app.inject({
        url: '/api/client/features',
        headers: { ...client, 'if-none-match': etag },
      });
      assert.equal(moved.statusCode, 200);
      assert.notEqual(moved.headers.etag, etag);
      console.log(
        `database outage of ${outageMs} ms: ${requests} client API requests (${[...statuses].map(([s, n]) => `${n}× ${s}`).join(', ')}), ` +
          `${METRICS_POSTS} usage reports held and written; writes again ${recoveryMs} ms after restoring`,
      );
    });

    it('answers the client API while the database drops every packet, and recovers', async () => {
      const before = await app.inject({ url: '/api/client/features', headers: client });
      assert.equal(before.statusCode, 200);
      const etag = before.headers.etag as string;
      relay.cut('drop');
      const cutAt = Date.now();
      let answered = 0;
      // Each request waits at most one revision check (100 ms) for a database that never answers.
      while (Date.now() - cutAt < Math.min(OUTAGE_MS, 1500)) {
        const response = await app.inject({
          url: '/api/client/features',
          headers: { ...client, 'if-none-match': etag },
        });
        assert.equal(response.statusCode, 304, response.body);
        answered++;
        await sleep(10);
      }
      relay.restore();
      await within(RECOVERY_LIMIT_MS, 'a write after the drop', async () => {
        const response = await app.inject({
          method: 'POST',
          url: '/api/admin/projects',
          headers: admin,
          payload: { id: `after-drop-${Date.now()}` },
        });
        return response.statusCode === 201;
      });
      assert.ok(answered > 10, `${answered} answered`);
    });

    it('rolls back a transaction whose connection is cut, and the pool reconnects', async () => {
      await assert.rejects(
        storage.db.transaction(async (tx) => {
          await tx.query(`INSERT INTO projects (id, name) VALUES ('half', 'Half')`);
          relay.cut();
          await tx.query('SELECT 1');
        }),
      );
      relay.restore();
      assert.deepEqual(await storage.direct(`SELECT id FROM projects WHERE id = 'half'`), []);
      assert.deepEqual(await storage.db.query('SELECT 1 AS one'), [{ one: 1 }]);
    });
  });

  describe('flags-server started while PostgreSQL is unreachable', () => {
    it('answers /ready 503 until the database answers, then loads and serves', async () => {
      const relay = await startTcpRelay(url);
      const storage = await schemaBehind(relay, url);
      const log = capturedLogger();
      relay.cut();
      const app = await buildApp(outageConfig(), { db: storage.db, logger: log.logger });
      try {
        const notReady = await app.inject({ url: '/ready' });
        assert.equal(notReady.statusCode, 503);
        assert.deepEqual(notReady.json(), {
          code: 'NOT_READY',
          name: 'ServiceUnavailableError',
          message:
            'flags-server has not loaded its configuration from the database yet; it keeps retrying.',
          details: [
            {
              message:
                'flags-server has not loaded its configuration from the database yet; it keeps retrying.',
            },
          ],
        });
        assert.equal((await app.inject({ url: '/health' })).statusCode, 200);
        const gauges = (await app.inject({ url: '/internal-backstage/prometheus' })).body;
        assert.match(gauges, /^flags_server_ready 0$/m);
        assert.match(gauges, /^flags_server_database_up 0$/m);
        const features = await app.inject({ url: '/api/client/features', headers: client });
        assert.equal(features.statusCode, 503);
        assert.ok(
          log.messages().includes('database unreachable at start: not ready; retrying'),
          log.messages().join('\n'),
        );

        relay.restore();
        await within(RECOVERY_LIMIT_MS, '/ready after the relay opens', async () => {
          return (await app.inject({ url: '/ready' })).statusCode === 200;
        });
        assert.deepEqual((await app.inject({ url: '/ready' })).json(), {
          status: 'READY',
          database: 'reachable',
          heldUsageReports: 0,
        });
        assert.ok(log.messages().includes('database loaded: ready'));
        const served = await app.inject({ url: '/api/client/features', headers: client });
        assert.equal(served.statusCode, 200, served.body);
        assert.deepEqual(served.json().features, []);
      } finally {
        relay.restore();
        await app.close();
        await storage.cleanup();
        await relay.close();
      }
    });
  });
}
