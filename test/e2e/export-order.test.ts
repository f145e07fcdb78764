import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ExportResult } from '@flags/schemas';
import { buildApp, type Database, loadConfig, openDatabase } from '@flags/server';
import type { FastifyInstance } from 'fastify';
import {
  startUnleashServer,
  UNLEASH_VERSION,
  type UnleashServer,
  unleashServerSkip,
} from '../helpers/unleash-server.js';

const ADMIN = 'export-order-admin-token';
const CLIENT = '*:development.export-order-client-secret';

const rollout = (percent: string) => ({ rollout: percent, stickiness: 'default', groupId: 'g' });

/** Strategies whose order only the import payload gives: no `sortOrder`, or ties. */
const IMPORT = {
  project: 'default',
  environment: 'development',
  data: {
    features: ['ordered-a', 'ordered-b'].map((name) => ({
      name,
      type: 'release',
      project: 'default',
    })),
    featureStrategies: [
      { name: 'flexibleRollout', featureName: 'ordered-a', parameters: rollout('10') },
      { name: 'flexibleRollout', featureName: 'ordered-a', parameters: rollout('50') },
      { name: 'default', featureName: 'ordered-a', parameters: {} },
      { name: 'default', featureName: 'ordered-b', sortOrder: 2, parameters: {} },
      {
        name: 'flexibleRollout',
        featureName: 'ordered-b',
        sortOrder: 2,
        parameters: rollout('20'),
      },
      {
        name: 'flexibleRollout',
        featureName: 'ordered-b',
        sortOrder: 1,
        parameters: rollout('10'),
      },
    ],
    featureEnvironments: ['ordered-a', 'ordered-b'].map((name) => ({
      name,
      featureName: name,
      environment: 'development',
      enabled: true,
    })),
    tagTypes: [],
  },
};

type Features = {
  name: string;
  strategies: { name: string; parameters: { rollout?: string } }[];
}[];

/** Each flag's strategies in the order an SDK evaluates them. */
const order = (features: Features) =>
  Object.fromEntries(
    features
      .filter((feature) => feature.name.startsWith('ordered-'))
      .map((feature) => [
        feature.name,
        feature.strategies.map((s) => `${s.name} ${s.parameters.rollout ?? ''}`.trim()),
      ]),
  );

/**
 * Issue 18, item 6: flags-server's export re-imported into the real unleash-server keeps strategy
 * order (each strategy's `sortOrder` is its position, so Unleash has no ties to order its way).
 */
describe(
  `flags-server export → unleash-server ${UNLEASH_VERSION} import`,
  { skip: unleashServerSkip },
  () => {
    let unleash: UnleashServer;
    let db: Database;
    let server: FastifyInstance;

    before(async () => {
      unleash = await startUnleashServer();
      db = await openDatabase({ databaseUrl: undefined, dataDir: undefined });
      const config = loadConfig(
        {},
        { adminTokens: [ADMIN], clientTokens: [CLIENT], logLevel: 'silent', dataDir: undefined },
      );
      server = await buildApp(config, { db, logger: false });
    });
    after(async () => {
      await server?.close();
      await db?.close();
      await unleash?.stop();
    });

    it('keeps every flag’s strategy order', async () => {
      const imported = await server.inject({
        method: 'POST',
        url: '/api/admin/features-batch/import',
        headers: { authorization: ADMIN },
        payload: IMPORT,
      });
      assert.equal(imported.statusCode, 200, imported.body);
      const exported = await server.inject({
        method: 'POST',
        url: '/api/admin/features-batch/export',
        headers: { authorization: ADMIN },
        payload: { environment: 'development', project: 'default' },
      });
      assert.equal(exported.statusCode, 200, exported.body);
      const document = exported.json() as ExportResult;
      // Unleash keeps the payload order among equal sortOrders: reversed, only sortOrder can
      // give the order back.
      document.featureStrategies.reverse();
      await unleash.importFlags(document, 'development');

      const ours = (
        await server.inject({ url: '/api/client/features', headers: { authorization: CLIENT } })
      ).json() as { features: Features };
      const token = await unleash.createToken({ type: 'client', environment: 'development' });
      const response = await fetch(`${unleash.url}/api/client/features`, {
        headers: { authorization: token },
      });
      assert.equal(response.status, 200);
      const theirs = (await response.json()) as { features: Features };
      assert.deepEqual(order(ours.features)['ordered-b'], [
        'flexibleRollout 10',
        'default',
        'flexibleRollout 20',
      ]);
      assert.deepEqual(order(theirs.features), order(ours.features));
    });
  },
);
