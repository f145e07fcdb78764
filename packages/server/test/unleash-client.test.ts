// A real unleash-client (npm) against a real listening flags-server: register, fetch, evaluate,
// send metrics. Runs on PGlite (PostgreSQL is covered by the feature suites).
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { InMemStorageProvider, Unleash } from 'unleash-client';
import { type Database, openPglite } from '../src/db/database.js';
import { admin, DEV_TOKEN, startApp } from './helpers.js';

describe('unleash-client against flags-server', () => {
  let db: Database;
  let app: FastifyInstance;
  let client: Unleash;

  before(async () => {
    db = await openPglite();
    app = await startApp(db);
    await app.inject({
      method: 'POST',
      url: '/api/admin/segments',
      headers: admin,
      payload: {
        name: 'beta-testers',
        constraints: [
          { contextName: 'userId', operator: 'IN', values: ['alice', 'bob', 'tester-1'] },
        ],
      },
    });
    const imported = await app.inject({
      method: 'POST',
      url: '/api/admin/features-batch/import',
      headers: admin,
      payload: JSON.parse(
        readFileSync(new URL('./fixtures/import-basic.json', import.meta.url), 'utf8'),
      ),
    });
    assert.equal(imported.statusCode, 200);
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as AddressInfo;
    client = new Unleash({
      url: `http://127.0.0.1:${port}/api/`,
      appName: 'e2e-app',
      instanceId: 'e2e-1',
      customHeaders: { Authorization: DEV_TOKEN },
      refreshInterval: 60_000,
      metricsInterval: 300,
      metricsJitter: 0,
      storageProvider: new InMemStorageProvider(),
      skipInstanceCountWarning: true,
    });
    client.on('error', () => {});
  });

  after(async () => {
    client?.destroy();
    await app.close();
    await db.close();
  });

  it('registers, fetches and evaluates the imported flags', async () => {
    const registered = once(client, 'registered');
    await once(client, 'synchronized');
    await registered;
    const instances = await db.query(
      'SELECT app_name, instance_id, environment FROM client_instances',
    );
    assert.deepEqual(instances, [
      { app_name: 'e2e-app', instance_id: 'e2e-1', environment: 'development' },
    ]);

    // checkout-v2: 50 % rollout constrained to region eu/us and the beta-testers segment, or alice/bob.
    assert.equal(client.isEnabled('checkout-v2', { userId: 'alice' }), true);
    assert.equal(
      client.isEnabled('checkout-v2', { userId: 'zed', properties: { region: 'eu' } }),
      false,
    );
    assert.equal(client.isEnabled('beta-search'), false);
    assert.equal(client.isEnabled('no-such-flag'), false);
    // dark-mode: feature variants with an override for carol.
    assert.equal(client.isEnabled('dark-mode', { userId: 'carol' }), true);
    const variant = client.getVariant('dark-mode', { userId: 'carol' });
    assert.equal(variant.enabled, true);
    assert.ok(['dark', 'dim', 'blue'].includes(variant.name), variant.name);
    // dark-mode-banner depends on dark-mode resolving to the variant "dark".
    const banner = client.isEnabled('dark-mode-banner', { userId: 'carol' });
    assert.equal(banner, client.getVariant('dark-mode', { userId: 'carol' }).name === 'dark');
  });

  it("lands the client's metrics in the hourly buckets", async () => {
    for (let i = 0; i < 5; i++) client.isEnabled('beta-search');
    for (let i = 0; i < 3; i++) client.getVariant('dark-mode', { userId: 'carol' });
    const deadline = Date.now() + 5000;
    let rows: { feature_name: string; yes: number; no: number }[] = [];
    while (Date.now() < deadline) {
      rows = await db.query(
        `SELECT feature_name, yes::int AS yes, no::int AS no FROM client_metrics
          WHERE app_name = 'e2e-app' AND environment = 'development' ORDER BY feature_name`,
      );
      const beta = rows.find((row) => row.feature_name === 'beta-search');
      const dark = rows.find((row) => row.feature_name === 'dark-mode');
      if (beta && beta.no >= 5 && dark && dark.yes >= 3) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const byName = Object.fromEntries(rows.map((row) => [row.feature_name, row]));
    assert.ok(byName['beta-search'], JSON.stringify(rows));
    assert.equal(byName['beta-search']!.yes, 0);
    assert.ok(byName['beta-search']!.no >= 5);
    assert.ok(byName['dark-mode']!.yes >= 3);
    const variants = await db.query<{ variant: string; count: number }>(
      `SELECT variant, count::int AS count FROM client_metrics_variants
        WHERE feature_name = 'dark-mode' AND app_name = 'e2e-app'`,
    );
    assert.ok(variants.reduce((sum, row) => sum + row.count, 0) >= 3, JSON.stringify(variants));
    const hours = await db.query<{ hour: Date }>('SELECT DISTINCT hour FROM client_metrics');
    for (const { hour } of hours) assert.equal(new Date(hour).getTime() % 3_600_000, 0);
  });
});
