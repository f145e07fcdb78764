import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createProxy, type ProxyApp } from '@flags/proxy';
import { buildApp, type Database, loadConfig, openDatabase } from '@flags/server';
import type { FastifyInstance } from 'fastify';
import { InMemStorageProvider, Unleash } from 'unleash-client';
import { adminRequest, demoImport, seedDemo } from '../../scripts/demo/seed.js';
import { stopSdk } from '../helpers/unleash-sdk.js';
import { waitFor } from '../helpers/wait.js';

const ADMIN = '*:*.e2e-admin';
const CLIENT_TOKEN = 'default:development.e2e-streaming-client';
/** Longer than any wait below: a change can only arrive by streaming. */
const NO_POLLING_MS = 120_000;

/** The demo import with `maintenance-mode` switched on or off in development. */
function maintenance(enabled: boolean) {
  const change = demoImport();
  change.data.featureEnvironments = (
    change.data.featureEnvironments as { name: string; enabled: boolean }[]
  ).map((entry) => (entry.name === 'maintenance-mode' ? { ...entry, enabled } : entry));
  return change;
}

function sdk(url: string, experimentalMode: object, refreshInterval = NO_POLLING_MS): Unleash {
  const client = new Unleash({
    url,
    appName: 'e2e-streaming-sdk',
    customHeaders: { authorization: CLIENT_TOKEN },
    refreshInterval,
    disableMetrics: true,
    storageProvider: new InMemStorageProvider(),
    experimentalMode: experimentalMode as never,
  });
  client.on('error', () => {});
  client.on('warn', () => {});
  return client;
}

/**
 * flags-server (PGlite) → flags-proxy syncing by streaming → unleash-client 6.12 streaming and
 * delta-polling on the proxy; every poll interval is two minutes, so only streams carry changes.
 */
describe('changes stream from flags-server through flags-proxy to SDKs', () => {
  let db: Database;
  let server: FastifyInstance;
  let serverUrl: string;
  let proxy: ProxyApp;
  let proxyUrl: string;
  const clients: Unleash[] = [];
  const serverRequests: string[] = [];

  before(async () => {
    const config = loadConfig(
      {},
      { port: 0, host: '127.0.0.1', adminTokens: [ADMIN], clientTokens: [CLIENT_TOKEN] },
    );
    db = await openDatabase({ databaseUrl: undefined, dataDir: undefined });
    server = await buildApp(config, { db, logger: false });
    serverUrl = await server.listen({ port: 0, host: '127.0.0.1' });
    await seedDemo(serverUrl, ADMIN);
    server.server.on('request', (request) => {
      serverRequests.push((request.url ?? '').split('?')[0] as string);
    });
    proxy = await createProxy({
      flagsUrl: `${serverUrl}/api`,
      flagsApiToken: CLIENT_TOKEN,
      refreshInterval: NO_POLLING_MS,
      metricsInterval: 0,
      logLevel: 'fatal',
    });
    proxyUrl = await proxy.app.listen({ port: 0, host: '127.0.0.1' });
    await proxy.poller.ready;
  });

  after(async () => {
    for (const client of clients) stopSdk(client);
    await proxy.app.close();
    await server.close();
    await db.close();
  });

  const importChange = (enabled: boolean) =>
    adminRequest(
      serverUrl,
      ADMIN,
      'POST',
      '/api/admin/features-batch/import',
      maintenance(enabled),
    );

  it('the proxy follows flags-server by streaming, and SDKs in both modes follow the proxy', async () => {
    const streaming = sdk(`${proxyUrl}/api/`, { type: 'streaming' });
    // Delta polling has no push: it asks the proxy's /api/client/delta every 200 ms.
    const delta = sdk(`${proxyUrl}/api/`, { type: 'polling', format: 'delta' }, 200);
    const direct = sdk(`${serverUrl}/api/`, { type: 'streaming' });
    clients.push(streaming, delta, direct);
    await waitFor(
      () => clients.every((client) => client.isSynchronized()),
      10_000,
      'three SDKs to hydrate',
    );
    for (const client of clients) assert.equal(client.isEnabled('maintenance-mode'), false);
    // What came through the proxy's stream and delta API is what the server's stream says.
    const names = demoImport().data.features.map((feature) => feature.name);
    const context = { userId: 'alice', properties: { plan: 'premium' } };
    const answers = (client: Unleash) =>
      names.map((name) => [
        name,
        client.isEnabled(name, context),
        client.getVariant(name, context),
      ]);
    assert.deepEqual(answers(streaming), answers(direct));
    assert.deepEqual(answers(delta), answers(direct));
    assert.ok(answers(direct).some(([, enabled]) => enabled));

    await importChange(true);
    await waitFor(
      () => clients.every((client) => client.isEnabled('maintenance-mode')),
      10_000,
      'the import to reach the SDKs (streaming and delta on the proxy, streaming on the server)',
    );
    assert.ok(serverRequests.includes('/api/client/streaming'));
    assert.ok(!serverRequests.includes('/api/client/features'), 'the proxy never polled');
  });

  it('a killed stream between server and proxy resumes without losing a change', async () => {
    const streaming = clients[0] as Unleash;
    const before = serverRequests.filter((path) => path === '/api/client/streaming').length;
    // Every connection into flags-server drops (the proxy's stream and the direct SDK's), and a
    // change is committed while they reconnect.
    server.server.closeAllConnections();
    // This test's own pooled connection to the server may be among the closed ones: try again.
    for (let attempt = 1; ; attempt++) {
      try {
        await importChange(false);
        break;
      } catch (error) {
        if (attempt === 3) throw error;
      }
    }
    await waitFor(
      () => !streaming.isEnabled('maintenance-mode'),
      15_000,
      'the change made during the outage to reach the SDK',
    );
    assert.ok(
      serverRequests.filter((path) => path === '/api/client/streaming').length > before,
      'the proxy reconnected its stream',
    );
    assert.ok(!serverRequests.includes('/api/client/features'), 'and did not fall back to polling');
  });
});
