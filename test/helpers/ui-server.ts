import { type AppDeps, buildApp, type Database, loadConfig, openDatabase } from '@flags/server';
import { buildUi } from '../../scripts/build-ui.js';

export interface UiServer {
  readonly url: string;
  /** Its database, for tests that check what a change left there. */
  readonly db: Database;
  close(): Promise<void>;
}

/** flags-server with its web UI built, on PGlite and a free loopback port, with `adminToken`. */
export async function startUiServer(
  adminToken: string,
  deps: Omit<AppDeps, 'db' | 'logger'> = {},
): Promise<UiServer> {
  await buildUi();
  const config = loadConfig({}, { port: 0, host: '127.0.0.1', adminTokens: [adminToken] });
  const db = await openDatabase({ databaseUrl: undefined, dataDir: undefined });
  const server = await buildApp(config, { ...deps, db, logger: false });
  const url = await server.listen({ port: 0, host: '127.0.0.1' });
  return {
    url,
    db,
    async close() {
      await server.close();
      await db.close();
    },
  };
}
