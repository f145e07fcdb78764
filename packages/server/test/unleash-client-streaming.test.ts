// The real unleash-client (6.12) against flags-server's change log: in streaming mode
// (`/api/client/streaming`) and in delta polling mode (`/api/client/delta`). It hydrates, sees an
// import's change, and in streaming mode resumes after its stream is killed by a server restart,
// seeing a change made while it was disconnected, without falling back to polling.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { InMemStorageProvider, Unleash } from 'unleash-client';
import { stopSdk } from '../../../test/helpers/unleash-sdk.js';
import { waitFor } from '../../../test/helpers/wait.js';
import { type Database, openPglite } from '../src/db/database.js';
import { admin, DEV_TOKEN, startApp } from './helpers.js';

const flagImport = (name: string, enabled: boolean) => ({
  project: 'default',
  environment: 'development',
  data: {
    features: [{ name }],
    featureStrategies: [{ name: 'default', featureName: name, parameters: {} }],
    featureEnvironments: [{ name, featureName: name, enabled }],
    tagTypes: [],
  },
});

async function importInto(app: FastifyInstance, payload: object): Promise<void> {
  const response = await app.inject({
    method: 'POST',
    url: '/api/admin/features-batch/import',
    headers: admin,
    payload,
  });
  assert.equal(response.statusCode, 200, response.body);
}

async function seededApp(db: Database): Promise<FastifyInstance> {
  const app = await startApp(db);
  const segment = await app.inject({
    method: 'POST',
    url: '/api/admin/segments',
    headers: admin,
    payload: {
      name: 'beta-testers',
      constraints: [{ contextName: 'userId', operator: 'IN', values: ['alice', 'bob'] }],
    },
  });
  assert.equal(segment.statusCode, 201, segment.body);
  await importInto(
    app,
    JSON.parse(readFileSync(new URL('./fixtures/import-basic.json', import.meta.url), 'utf8')),
  );
  return app;
}

const WAIT_MS = 30_000;

for (const mode of [{ type: 'streaming' }, { type: 'polling', format: 'delta' }] as const) {
  describe(`unleash-client in ${mode.type}${'format' in mode ? ` ${mode.format}` : ''} mode against flags-server`, () => {
    let db: Database;
    let app: FastifyInstance;
    let client: Unleash;
    let port: number;
    const modeChanges: unknown[] = [];

    before(async () => {
      db = await openPglite();
      app = await seededApp(db);
      await app.listen({ port: 0, host: '127.0.0.1' });
      port = (app.server.address() as AddressInfo).port;
      client = new Unleash({
        url: `http://127.0.0.1:${port}/api/`,
        appName: `delta-${mode.type}`,
        instanceId: 'delta-1',
        customHeaders: { Authorization: DEV_TOKEN },
        // Delta polling polls quickly; streaming's polling fallback would take a minute.
        refreshInterval: mode.type === 'streaming' ? 60_000 : 200,
        disableMetrics: true,
        storageProvider: new InMemStorageProvider(),
        skipInstanceCountWarning: true,
        experimentalMode: mode,
      });
      client.on('error', () => {});
      client.on('warn', () => {});
      client.on('mode', (change: unknown) => modeChanges.push(change));
    });

    after(async () => {
      stopSdk(client);
      await app.close();
      await db.close();
    });

    it('hydrates: the imported flags evaluate', async () => {
      await waitFor(
        () => client.isEnabled('checkout-v2', { userId: 'alice' }),
        WAIT_MS,
        'the hydration',
      );
      assert.equal(client.isEnabled('beta-search'), false);
      assert.equal(client.isEnabled('dark-mode', { userId: 'carol' }), true);
      assert.equal(client.getVariant('dark-mode', { userId: 'carol' }).enabled, true);
    });

    it('sees an import’s change and an archive', async () => {
      await importInto(app, flagImport('pushed-flag', true));
      await waitFor(() => client.isEnabled('pushed-flag'), WAIT_MS, 'the new flag');
      await importInto(app, flagImport('beta-search', true));
      await waitFor(() => client.isEnabled('beta-search'), WAIT_MS, 'beta-search enabled');
      const archived = await app.inject({
        method: 'DELETE',
        url: '/api/admin/projects/default/features/pushed-flag',
        headers: admin,
      });
      assert.ok(archived.statusCode < 300, archived.body);
      await waitFor(() => !client.isEnabled('pushed-flag'), WAIT_MS, 'the archived flag gone');
      assert.deepEqual(modeChanges, []);
    });

    if (mode.type === 'streaming') {
      it('resumes a killed stream without loss: a change made while disconnected is seen', async () => {
        // The server restarts: its streams end, and a change lands before it listens again.
        await app.close();
        app = await startApp(db);
        await importInto(app, flagImport('missed-while-down', true));
        await importInto(app, flagImport('beta-search', false));
        await app.listen({ port, host: '127.0.0.1' });
        await waitFor(
          () => client.isEnabled('missed-while-down') && !client.isEnabled('beta-search'),
          WAIT_MS,
          'the change made while disconnected',
        );
        // Still streaming: it reconnected rather than falling back to polling.
        assert.deepEqual(modeChanges, []);
        assert.equal(client.isEnabled('checkout-v2', { userId: 'alice' }), true);
      });
    }
  });
}
