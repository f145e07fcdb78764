import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { waitFor } from '../../../../test/helpers/wait.js';
import type { Database } from '../../src/db/database.js';
import { admin, backends, DEV_TOKEN, PROD_TOKEN, startApp } from '../helpers.js';
import { openSse, type SseConnection } from '../sse-client.js';

interface Event {
  eventId: number;
  type: string;
  feature?: { name: string; enabled: boolean };
  features?: { name: string; enabled: boolean }[];
}

/** Events the change log keeps per environment in these tests. */
const KEPT = 3;

/** An import of `names` into default/development, each enabled with one strategy. */
const importOf = (names: readonly string[]) => ({
  project: 'default',
  environment: 'development',
  data: {
    features: names.map((name) => ({ name, project: 'default' })),
    featureStrategies: names.map((name) => ({
      name: 'default',
      featureName: name,
      parameters: {},
    })),
    featureEnvironments: names.map((name) => ({ name, featureName: name, enabled: true })),
    segments: [],
    tagTypes: [],
  },
});

const eventIdOf = (etag: unknown) => Number(String(etag).replaceAll('"', ''));

for (const backend of backends) {
  describe(`change log resync points on ${backend.name}`, () => {
    let db: Database;
    let cleanup: () => Promise<void>;
    let app: FastifyInstance;
    let base: string;
    const open: SseConnection[] = [];

    const post = async (url: string, payload: object) => {
      const response = await app.inject({ method: 'POST', url, headers: admin, payload });
      assert.equal(response.statusCode, 200, response.body);
    };
    const delta = (token: string, etag?: string) =>
      app.inject({
        url: '/api/client/delta',
        headers: { authorization: token, ...(etag === undefined ? {} : { 'if-none-match': etag }) },
      });
    const logged = () =>
      db.query<{ environment: string; feature_name: string | null; type: string }>(
        `SELECT environment, feature_name, event->>'type' AS type FROM client_change_events ORDER BY id`,
      );

    before(async () => {
      ({ db, cleanup } = await backend.open());
      app = await startApp(db, { changeLogEventsPerEnvironment: KEPT, streamingKeepAliveMs: 100 });
      await post('/api/admin/features-batch/import', importOf(['small-a']));
      await app.listen({ port: 0, host: '127.0.0.1' });
      base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    });
    after(async () => {
      for (const connection of open) connection.close();
      await app.close();
      await cleanup();
    });

    it('records one resync point per environment for a write changing more flags than are kept', async () => {
      // A small write is recorded as events, one per flag and environment.
      assert.deepEqual(
        (await logged()).map((row) => [row.environment, row.feature_name, row.type]),
        [
          ['development', 'small-a', 'feature-updated'],
          ['production', 'small-a', 'feature-updated'],
        ],
      );
      const devEtag = (await delta(DEV_TOKEN)).headers.etag as string;
      const prodEtag = (await delta(PROD_TOKEN)).headers.etag as string;
      const connection = await openSse(`${base}/api/client/streaming`, {
        authorization: DEV_TOKEN,
        'unleash-client-spec': '5.2.0',
      });
      open.push(connection);
      assert.equal(connection.status, 200);
      await waitFor(() => connection.events.length >= 1, 10_000, 'the connected event');

      const names = ['bulk-1', 'bulk-2', 'bulk-3', 'bulk-4', 'bulk-5'];
      const before = (await logged()).length;
      await post('/api/admin/features-batch/import', importOf(names));
      const rows = (await logged()).slice(before);
      assert.deepEqual(
        rows.map((row) => [row.environment, row.feature_name, row.type]),
        [
          ['development', null, 'resync'],
          ['production', null, 'resync'],
        ],
      );

      // A delta client from before the resync point is hydrated with the new flags.
      for (const [token, etag, enabled] of [
        [DEV_TOKEN, devEtag, true],
        [PROD_TOKEN, prodEtag, false],
      ] as const) {
        const response = await delta(token, etag);
        assert.equal(response.statusCode, 200, response.body);
        const { events } = response.json() as { events: Event[] };
        assert.deepEqual(
          events.map((event) => event.type),
          ['hydration'],
        );
        for (const name of names) {
          const flag = events[0]!.features!.find((feature) => feature.name === name);
          assert.equal(flag?.enabled, enabled, name);
        }
        assert.ok(eventIdOf(response.headers.etag) > eventIdOf(etag));
      }

      // An open stream gets a hydration in place.
      await waitFor(() => connection.events.length >= 2, 10_000, 'the hydration after the resync');
      const updated = connection.events[1]!;
      assert.equal(updated.event, 'unleash-updated');
      const { events } = JSON.parse(updated.data) as { events: Event[] };
      assert.deepEqual(
        events.map((event) => event.type),
        ['hydration'],
      );
      assert.deepEqual(events[0]!.features!.map((feature) => feature.name).sort(), [
        ...names,
        'small-a',
      ]);
      assert.equal(updated.id, String(events[0]!.eventId));

      // The next small write is an ordinary event again, diffed against the state after the import.
      const afterImport = (await delta(DEV_TOKEN)).headers.etag as string;
      await post('/api/admin/projects/default/features/bulk-3/environments/development/off', {});
      assert.deepEqual(
        (await logged())
          .slice(before + 2)
          .map((row) => [row.environment, row.feature_name, row.type]),
        [['development', 'bulk-3', 'feature-updated']],
      );
      const next = await delta(DEV_TOKEN, afterImport);
      assert.equal(next.statusCode, 200, next.body);
      assert.deepEqual(
        (next.json() as { events: Event[] }).events.map((event) => [
          event.type,
          event.feature?.name,
          event.feature?.enabled,
        ]),
        [['feature-updated', 'bulk-3', false]],
      );
      await waitFor(() => connection.events.length >= 3, 10_000, 'the toggle on the stream');
      assert.deepEqual(
        (JSON.parse(connection.events[2]!.data) as { events: Event[] }).events.map((event) => [
          event.type,
          event.feature?.name,
        ]),
        [['feature-updated', 'bulk-3']],
      );
    });
  });
}
