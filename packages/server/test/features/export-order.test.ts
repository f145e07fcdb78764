import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { Database } from '../../src/db/database.js';
import { admin, backends, DEV_TOKEN, startApp } from '../helpers.js';

/** Strategies in one import: ties and gaps in `sortOrder`, which only the payload order breaks. */
const strategies = [
  { name: 'userWithId', featureName: 'tied', parameters: { userIds: 'a' } },
  { name: 'default', featureName: 'tied', parameters: {}, title: 'second' },
  { name: 'remoteAddress', featureName: 'tied', parameters: { IPs: '10.0.0.1' } },
  { name: 'userWithId', featureName: 'gaps', sortOrder: 9, parameters: { userIds: 'c' } },
  { name: 'default', featureName: 'gaps', sortOrder: 3, parameters: {} },
  { name: 'userWithId', featureName: 'gaps', sortOrder: 3, parameters: { userIds: 'b' } },
  { name: 'default', featureName: 'gaps', sortOrder: 4, disabled: true, parameters: {} },
];

const importInto = (app: FastifyInstance, data: object) =>
  app.inject({
    method: 'POST',
    url: '/api/admin/features-batch/import',
    headers: admin,
    payload: { project: 'default', environment: 'development', data },
  });

const exportFrom = async (app: FastifyInstance) => {
  const response = await app.inject({
    method: 'POST',
    url: '/api/admin/features-batch/export',
    headers: admin,
    payload: { environment: 'development', project: 'default' },
  });
  assert.equal(response.statusCode, 200, response.body);
  return response.json() as {
    featureStrategies: { featureName: string; name: string; sortOrder: number }[];
  };
};

/** Each flag's strategies as the client API evaluates them, in order. */
const servedOrder = async (app: FastifyInstance) => {
  const response = await app.inject({
    url: '/api/client/features',
    headers: { authorization: DEV_TOKEN },
  });
  const features = response.json().features as {
    name: string;
    strategies: { name: string; parameters: Record<string, string> }[];
  }[];
  return Object.fromEntries(
    features.map((f) => [
      f.name,
      f.strategies.map((s) => `${s.name}${JSON.stringify(s.parameters)}`),
    ]),
  );
};

for (const backend of backends) {
  describe(`export strategy order on ${backend.name}`, () => {
    let db: Database;
    let cleanup: () => Promise<void>;
    let app: FastifyInstance;

    before(async () => {
      ({ db, cleanup } = await backend.open());
      app = await startApp(db);
      const response = await importInto(app, {
        features: [
          { name: 'tied', type: 'release', project: 'default' },
          { name: 'gaps', type: 'release', project: 'default' },
        ],
        featureStrategies: strategies,
        featureEnvironments: [
          { name: 'tied', featureName: 'tied', environment: 'development', enabled: true },
          { name: 'gaps', featureName: 'gaps', environment: 'development', enabled: true },
        ],
        tagTypes: [],
      });
      assert.equal(response.statusCode, 200, response.body);
    });
    after(async () => {
      await app.close();
      await cleanup();
    });

    it('exports each strategy with its position as sortOrder, 0..n-1 per feature', async () => {
      const exported = await exportFrom(app);
      assert.deepEqual(
        exported.featureStrategies.map((s) => [s.featureName, s.name, s.sortOrder]),
        [
          ['gaps', 'default', 0],
          ['gaps', 'userWithId', 1],
          ['gaps', 'default', 2],
          ['gaps', 'userWithId', 3],
          ['tied', 'userWithId', 0],
          ['tied', 'default', 1],
          ['tied', 'remoteAddress', 2],
        ],
      );
    });

    it('keeps strategy order through export and re-import into a fresh server', async () => {
      const exported = await exportFrom(app);
      // An importer may order equal sortOrders any way it likes: reversing the payload shows the
      // order comes from sortOrder alone.
      exported.featureStrategies.reverse();
      const target = await backend.open();
      const fresh = await startApp(target.db);
      try {
        const response = await importInto(fresh, exported);
        assert.equal(response.statusCode, 200, response.body);
        const expected = await servedOrder(app);
        assert.deepEqual(expected.gaps, [
          'default{}',
          'userWithId{"userIds":"b"}',
          'userWithId{"userIds":"c"}',
        ]);
        assert.deepEqual(await servedOrder(fresh), expected);
        assert.deepEqual(
          (await exportFrom(fresh)).featureStrategies.map((s) => [s.featureName, s.sortOrder]),
          (await exportFrom(app)).featureStrategies.map((s) => [s.featureName, s.sortOrder]),
        );
      } finally {
        await fresh.close();
        await target.cleanup();
      }
    });
  });
}
