import { createProxy, type ProxyApp } from '@flags/proxy';
import { buildApp, type Database, loadConfig, openDatabase } from '@flags/server';
import { seedDemo } from '../../scripts/demo/seed.js';

export const DEMO_ADMIN_TOKEN = '*:*.e2e-admin';
export const DEMO_CLIENT_TOKEN = 'default:development.e2e-client';
export const DEMO_CLIENT_KEY = 'e2e-client-key';

/** flags-server on PGlite with `npm start`'s demo flags, and flags-proxy in front of it. */
export interface DemoStack {
  readonly db: Database;
  readonly serverUrl: string;
  readonly proxy: ProxyApp;
  readonly proxyUrl: string;
  close(): Promise<void>;
}

/**
 * Starts the demo stack: the server seeded with the demo flags, then flags-proxy syncing from it
 * with the client token and answering the client key; resolves once the proxy has synced.
 */
export async function startDemoStack(proxyTimes: {
  readonly refreshInterval: number;
  readonly metricsInterval: number;
}): Promise<DemoStack> {
  const config = loadConfig(
    {},
    {
      port: 0,
      host: '127.0.0.1',
      adminTokens: [DEMO_ADMIN_TOKEN],
      clientTokens: [DEMO_CLIENT_TOKEN],
    },
  );
  const db = await openDatabase({ databaseUrl: undefined, dataDir: undefined });
  const server = await buildApp(config, { db, logger: false });
  const serverUrl = await server.listen({ port: 0, host: '127.0.0.1' });
  await seedDemo(serverUrl, DEMO_ADMIN_TOKEN);
  const proxy = await createProxy({
    flagsUrl: `${serverUrl}/api`,
    flagsApiToken: DEMO_CLIENT_TOKEN,
    clientKeys: [DEMO_CLIENT_KEY],
    ...proxyTimes,
    logLevel: 'fatal',
  });
  const proxyUrl = await proxy.app.listen({ port: 0, host: '127.0.0.1' });
  await proxy.poller.ready;
  return {
    db,
    serverUrl,
    proxy,
    proxyUrl,
    async close() {
      await proxy.app.close();
      await server.close();
      await db.close();
    },
  };
}
