// `npm start`: flags-server on embedded PGlite with demo flags, and flags-proxy in front of it.
// Everything a first look needs in one command; both services stay usable on their own
// (`npx flags-server`, `npx flags-proxy`).
import { resolve } from 'node:path';
import { createProxy } from '@flags/proxy';
import { buildApp, loadConfig, openDatabase } from '@flags/server';
import { buildUi } from './build-ui.js';
import { demoUser, seedDemo, seedDemoUser } from './demo/seed.js';

const env = process.env;
const settings = {
  proxyPort: Number(env.PORT ?? env.PROXY_PORT ?? 3000),
  serverPort: Number(env.SERVER_PORT ?? 4242),
  // Not flags-server's own `./data`: a later `npx flags-server` there must not inherit the
  // demo's well-known tokens.
  dataDir: resolve(env.DATA_DIR ?? 'data/demo'),
  adminToken: env.DEMO_ADMIN_TOKEN ?? '*:*.demo-admin-token',
  clientToken: env.DEMO_CLIENT_TOKEN ?? 'default:development.demo-client-token',
  frontendToken: env.DEMO_FRONTEND_TOKEN ?? 'default:development.demo-frontend-token',
  clientKey: env.DEMO_CLIENT_KEY ?? 'demo-client-key',
  logLevel: env.LOG_LEVEL ?? 'warn',
};
/**
 * Printed in the banner and the docs: public, so no warning that they are short (the banner says
 * they are public instead, issue 47). Outside the demo, the same short secrets are warned about.
 */
const publicSecrets = [
  settings.adminToken,
  settings.clientToken,
  settings.frontendToken,
  settings.clientKey,
];

async function main(): Promise<void> {
  const serverConfig = loadConfig(env, {
    port: settings.serverPort,
    host: '127.0.0.1',
    databaseUrl: undefined,
    dataDir: settings.dataDir,
    adminTokens: [settings.adminToken],
    clientTokens: [settings.clientToken],
    frontendTokens: [settings.frontendToken],
    logLevel: settings.logLevel as never,
  });
  // The web UI from the sources as they are now (npm start runs from source).
  await buildUi();
  const db = await openDatabase(serverConfig);
  const server = await buildApp(serverConfig, { db, publicSecrets: new Set(publicSecrets) });
  const serverUrl = await server.listen({ port: serverConfig.port, host: serverConfig.host });
  const seeded = await seedDemo(serverUrl, settings.adminToken);
  await seedDemoUser(serverUrl, settings.adminToken);

  const proxy = await createProxy({
    flagsUrl: `${serverUrl}/api`,
    flagsApiToken: settings.clientToken,
    clientKeys: [settings.clientKey],
    flagsAppName: 'flags-demo-proxy',
    refreshInterval: Number(env.FLAGS_FETCH_INTERVAL ?? 2000),
    metricsInterval: Number(env.FLAGS_METRICS_INTERVAL ?? 10_000),
    logLevel: settings.logLevel as never,
    enableAllEndpoint: true,
    publicSecrets,
  });
  const proxyUrl = await proxy.app.listen({ port: settings.proxyPort, host: proxy.config.host });
  const localProxy = proxyUrl.replace(/\/\/[^:/]+/, '//localhost');

  console.log(
    [
      // The first line of the first screen (nothing is logged before it).
      `flags is running (${seeded ? 'demo flags imported' : `data reused from ${settings.dataDir}`})`,
      '',
      `  flags-proxy   ${localProxy}/proxy          client key: ${settings.clientKey}`,
      `                ${localProxy}/api/frontend   frontend token: ${settings.frontendToken}`,
      `  flags-server  ${serverUrl}/api            admin token: ${settings.adminToken}`,
      `                                                 client token: ${settings.clientToken}`,
      `  web UI        ${serverUrl}/              user: ${demoUser.username}  password: ${demoUser.password}`,
      `  insights      ${serverUrl}/insights`,
      '',
      'These tokens, the key and the password are public (here and in the docs): demo only, never use them elsewhere.',
      `Data in ${settings.dataDir}; \`npx flags-server\` keeps its data in ./data and knows none of them.`,
      '',
      'Try it:',
      `  curl -g -H 'Authorization: ${settings.clientKey}' '${localProxy}/proxy?userId=alice&properties[plan]=premium'`,
      `  curl -g -H 'Authorization: ${settings.frontendToken}' '${localProxy}/api/frontend?userId=alice'`,
      '',
      'Ctrl-C stops both.',
      '',
    ].join('\n'),
  );

  let closing = false;
  const shutdown = async () => {
    if (closing) return;
    closing = true;
    await proxy.app.close();
    await server.close();
    await db.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown());
  process.on('SIGTERM', () => void shutdown());
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
