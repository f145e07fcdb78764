import { createProxy, type ProxyApp } from '@flags/proxy';
import { buildApp, type Database, loadConfig, openDatabase } from '@flags/server';
import type { FastifyInstance } from 'fastify';
import { adminRequest } from '../../scripts/demo/seed.js';
import type { FlagSet } from './differential.js';

/** flags-server on PGlite holding a generated flag set, and flags-proxy synced from it. */
export interface FlagSetStack {
  readonly serverUrl: string;
  readonly proxyUrl: string;
  readonly proxy: ProxyApp;
  close(): Promise<void>;
}

export interface FlagSetStackOptions {
  readonly flagSet: FlagSet;
  readonly environments: readonly (keyof FlagSet['documents'])[];
  readonly adminToken: string;
  /** flags-server's client tokens, which flags-proxy syncs with (one per environment). */
  readonly clientTokens: readonly string[];
  readonly frontendTokens: readonly string[];
}

/**
 * Starts flags-server with the flag set imported into every environment (segments first), then
 * flags-proxy fed by it with the client tokens; resolves once every environment is synced.
 */
export async function startFlagSetStack(options: FlagSetStackOptions): Promise<FlagSetStack> {
  const { flagSet, adminToken } = options;
  const db: Database = await openDatabase({ databaseUrl: undefined, dataDir: undefined });
  const config = loadConfig(
    {},
    {
      adminTokens: [adminToken],
      clientTokens: [...options.clientTokens],
      frontendTokens: [...options.frontendTokens],
      logLevel: 'silent',
      dataDir: undefined,
    },
  );
  const server: FastifyInstance = await buildApp(config, { db, logger: false });
  const serverUrl = await server.listen({ port: 0, host: '127.0.0.1' });
  for (const segment of flagSet.segments) {
    await adminRequest(serverUrl, adminToken, 'POST', '/api/admin/segments', segment);
  }
  for (const environment of options.environments) {
    await adminRequest(serverUrl, adminToken, 'POST', '/api/admin/features-batch/import', {
      project: 'default',
      environment,
      data: flagSet.documents[environment],
    });
  }
  const proxy = await createProxy({
    flagsUrl: `${serverUrl}/api`,
    flagsApiToken: [...options.clientTokens],
    metricsInterval: 0,
    logLevel: 'fatal',
  });
  const proxyUrl = await proxy.app.listen({ port: 0, host: '127.0.0.1' });
  await Promise.all(
    options.environments.map((environment) => proxy.environments.get(environment)?.ready),
  );
  return {
    serverUrl,
    proxyUrl,
    proxy,
    async close() {
      await proxy.app.close();
      await server.close();
      await db.close();
    },
  };
}
