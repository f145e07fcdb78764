import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { ProxyApp } from '@flags/proxy';
import type { Database } from '@flags/server';
import { InMemoryStorageProvider, UnleashClient } from 'unleash-proxy-client';
import { adminRequest, demoImport } from '../../scripts/demo/seed.js';
import {
  DEMO_ADMIN_TOKEN as ADMIN,
  DEMO_CLIENT_KEY as CLIENT_KEY,
  DEMO_CLIENT_TOKEN as CLIENT_TOKEN,
  type DemoStack,
  startDemoStack,
} from '../helpers/demo-stack.js';
import { waitFor } from '../helpers/wait.js';

const require = createRequire(import.meta.url);
const PROXY_REFRESH_MS = 500;
const SDK_REFRESH_S = 1;
const PROXY_METRICS_MS = 300;

async function postProxy(base: string, context: unknown, toggles?: string[]) {
  const response = await fetch(`${base}/proxy`, {
    method: 'POST',
    headers: { authorization: CLIENT_KEY, 'content-type': 'application/json' },
    body: JSON.stringify(toggles ? { context, toggles } : { context }),
  });
  assert.equal(response.status, 200);
  return (
    (await response.json()) as { toggles: { name: string; enabled: boolean; variant: object }[] }
  ).toggles;
}

/** flags-server (PGlite) with the demo flags → flags-proxy → real SDK packages; nothing mocked. */
describe('flags-server → flags-proxy → SDKs', () => {
  let stack: DemoStack;
  let db: Database;
  let serverUrl: string;
  let proxy: ProxyApp;
  let proxyUrl: string;

  before(async () => {
    stack = await startDemoStack({
      refreshInterval: PROXY_REFRESH_MS,
      metricsInterval: PROXY_METRICS_MS,
    });
    ({ db, serverUrl, proxy, proxyUrl } = stack);
  });

  after(async () => {
    await stack?.close();
  });

  it('unleash-proxy-client sees the demo flags, and an imported change within two poll intervals', async () => {
    const client = new UnleashClient({
      url: `${proxyUrl}/proxy`,
      clientKey: CLIENT_KEY,
      appName: 'e2e-web',
      refreshInterval: SDK_REFRESH_S,
      disableMetrics: true,
      storageProvider: new InMemoryStorageProvider(),
      context: { userId: 'alice', properties: { plan: 'premium' } },
    });
    try {
      await client.start();
      assert.equal(client.isEnabled('beta-banner'), true);
      assert.equal(client.isEnabled('premium-reports'), true);
      assert.equal(client.isEnabled('mobile-offline-sync'), false);
      const darkMode = client.getVariant('dark-mode');
      assert.equal(darkMode.enabled, true);
      assert.ok(['midnight', 'charcoal'].includes(darkMode.name));
      assert.equal(darkMode.payload?.type, 'string');

      // Switch maintenance-mode on through the server's import endpoint.
      const change = demoImport();
      change.data.featureEnvironments = (
        change.data.featureEnvironments as { name: string; enabled: boolean }[]
      ).map((entry) => (entry.name === 'maintenance-mode' ? { ...entry, enabled: true } : entry));
      await adminRequest(serverUrl, ADMIN, 'POST', '/api/admin/features-batch/import', change);
      const twoPolls = 2 * (PROXY_REFRESH_MS + SDK_REFRESH_S * 1000);
      await waitFor(
        () => client.isEnabled('maintenance-mode'),
        twoPolls,
        'maintenance-mode to reach the browser SDK',
      );
    } finally {
      client.stop();
    }
  });

  it('usage metrics of browser-SDK and proxy evaluations land in the server buckets', async () => {
    // Browser SDK: its own counts, posted to the proxy, forwarded upstream under its appName.
    const client = new UnleashClient({
      url: `${proxyUrl}/proxy`,
      clientKey: CLIENT_KEY,
      appName: 'e2e-metrics-web',
      refreshInterval: 60,
      metricsInterval: 1,
      storageProvider: new InMemoryStorageProvider(),
      context: { userId: 'alice' },
    });
    try {
      await client.start();
      for (let i = 0; i < 5; i++) assert.equal(client.isEnabled('beta-banner'), true);
      for (let i = 0; i < 2; i++) assert.equal(client.isEnabled('mobile-offline-sync'), false);
      await waitFor(
        async () => {
          const rows = await db.query<{ feature_name: string; yes: number; no: number }>(
            `SELECT feature_name, SUM(yes)::int AS yes, SUM(no)::int AS no FROM client_metrics
              WHERE app_name = 'e2e-metrics-web' GROUP BY feature_name`,
          );
          const byName = Object.fromEntries(rows.map((row) => [row.feature_name, row]));
          return byName['beta-banner']?.yes === 5 && byName['mobile-offline-sync']?.no === 2;
        },
        10_000,
        "the browser SDK's counts in the server's buckets",
      );
    } finally {
      client.stop();
    }

    // The proxy's own evaluations (POST with a toggles list), under the proxy's appName.
    const before = await proxyCounts();
    for (let i = 0; i < 4; i++) {
      await postProxy(proxyUrl, { userId: 'zed' }, ['beta-banner', 'dark-mode']);
    }
    await waitFor(
      async () => {
        const after = await proxyCounts();
        return (
          after.bannerNo - before.bannerNo === 4 && after.darkModeYes - before.darkModeYes === 4
        );
      },
      10_000,
      "the proxy's counts in the server's buckets",
    );

    async function proxyCounts() {
      const rows = await db.query<{ feature_name: string; yes: number; no: number }>(
        `SELECT feature_name, SUM(yes)::int AS yes, SUM(no)::int AS no FROM client_metrics
          WHERE app_name = $1 GROUP BY feature_name`,
        [proxy.config.flagsAppName],
      );
      const byName = Object.fromEntries(rows.map((row) => [row.feature_name, row]));
      return {
        bannerNo: byName['beta-banner']?.no ?? 0,
        darkModeYes: byName['dark-mode']?.yes ?? 0,
      };
    }
  });

  it('@unleash/proxy syncing from flags-server answers the same as flags-proxy', async () => {
    const { createApp } = require('@unleash/proxy') as {
      createApp: (options: Record<string, unknown>) => {
        listen(port: number, host: string, cb: () => void): Server;
      };
    };
    const app = createApp({
      unleashUrl: `${serverUrl}/api`,
      unleashApiToken: CLIENT_TOKEN,
      clientKeys: [CLIENT_KEY],
      unleashAppName: 'e2e-reference',
      refreshInterval: 60_000,
      metricsInterval: 0,
      logLevel: 'fatal',
      clientMode: 'new',
      storageProvider: { get: async () => undefined, set: async () => {} },
    });
    const reference = await new Promise<Server>((resolve) => {
      const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
    });
    const referenceUrl = `http://127.0.0.1:${(reference.address() as AddressInfo).port}`;
    try {
      await waitFor(
        async () => (await fetch(`${referenceUrl}/proxy/health`)).status === 200,
        10_000,
        'the reference proxy to be ready',
      );
      const names = demoImport().data.features.map((feature) => feature.name);
      const contexts = [];
      for (let i = 0; i < 60; i++) {
        contexts.push({
          userId: i % 7 === 0 ? ['alice', 'bob', 'carol'][i % 3] : `user-${i}`,
          sessionId: `session-${i}`,
          properties: {
            plan: ['free', 'pro', 'premium'][i % 3]!,
            appVersion: `2.${i % 6}.0`,
            email: i % 5 === 0 ? `dev${i}@example.com` : `someone${i}@mail.test`,
          },
        });
      }
      for (const context of contexts) {
        const ours = await postProxy(proxyUrl, context, names);
        const theirs = await postProxy(referenceUrl, context, names);
        const shape = (list: typeof ours) =>
          list.map(({ name, enabled, variant }) => ({ name, enabled, variant }));
        assert.deepEqual(shape(ours), shape(theirs), JSON.stringify(context));
      }
    } finally {
      reference.closeAllConnections();
      await new Promise((resolve) => reference.close(resolve));
    }
  });
});
