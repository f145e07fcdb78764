import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config/load.js';
import type { ServerConfig, ServerOptions } from '../src/config/options.js';
import { type Database, openPglite, openPostgres } from '../src/db/database.js';

/** A storage backend the suites run on: PGlite always, PostgreSQL when a URL is given. */
export interface Backend {
  readonly name: 'pglite' | 'postgres';
  /** A fresh, empty database (PostgreSQL: its own schema, dropped by `cleanup`). */
  open(): Promise<{ db: Database; cleanup(): Promise<void> }>;
}

export const postgresUrl = process.env.TEST_DATABASE_URL || process.env.DATABASE_URL || undefined;

const pglite: Backend = {
  name: 'pglite',
  async open() {
    const db = await openPglite();
    return { db, cleanup: () => db.close() };
  },
};

const postgres = (url: string): Backend => ({
  name: 'postgres',
  async open() {
    const schema = `test_${randomBytes(6).toString('hex')}`;
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${schema}`);
    await admin.end();
    const db = openPostgres(url, { schema, maxConnections: 4 });
    return {
      db,
      async cleanup() {
        await db.close();
        const client = new pg.Client({ connectionString: url });
        await client.connect();
        await client.query(`DROP SCHEMA ${schema} CASCADE`);
        await client.end();
      },
    };
  },
});

/**
 * The backends the storage suites run on: PGlite, and PostgreSQL when a URL is given; narrowed by
 * `TEST_BACKENDS` (`pglite`, `postgres` or both, comma-separated), which CI uses to spread them
 * over the Node.js lines it runs. A backend named there and not at hand is an error, never a
 * silently empty run.
 */
function chosenBackends(): readonly Backend[] {
  const available = postgresUrl ? [pglite, postgres(postgresUrl)] : [pglite];
  const wanted = process.env.TEST_BACKENDS?.split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  if (!wanted || wanted.length === 0) return available;
  for (const name of wanted) {
    if (!available.some((backend) => backend.name === name)) {
      throw new Error(
        `TEST_BACKENDS names ${JSON.stringify(name)}; available here: ${available.map((b) => b.name).join(', ')} (postgres needs TEST_DATABASE_URL)`,
      );
    }
  }
  return available.filter((backend) => wanted.includes(backend.name));
}

export const backends: readonly Backend[] = chosenBackends();

export const ADMIN_TOKEN = 'test-admin-token';
export const DEV_TOKEN = '*:development.test-dev-secret';
export const PROD_TOKEN = '*:production.test-prod-secret';

export function testConfig(overrides: ServerOptions = {}): ServerConfig {
  return loadConfig(
    {},
    {
      adminTokens: [ADMIN_TOKEN],
      clientTokens: [DEV_TOKEN, PROD_TOKEN],
      logLevel: 'silent',
      dataDir: undefined,
      ...overrides,
    },
  );
}

export async function startApp(
  db: Database,
  overrides: ServerOptions = {},
): Promise<FastifyInstance> {
  return buildApp(testConfig(overrides), { db, logger: false });
}

export const admin = { authorization: ADMIN_TOKEN } as const;

/** Creates a project through the admin API (linked to every environment). */
export async function createProject(app: FastifyInstance, id: string): Promise<void> {
  const response = await app.inject({
    method: 'POST',
    url: '/api/admin/projects',
    headers: admin,
    payload: { id },
  });
  assert.equal(response.statusCode, 201, response.body);
}

/** Every table of the schema with every row, sorted: compares whole database states. */
export async function dump(db: Database): Promise<Record<string, string[]>> {
  const tables = await db.query<{ table_name: string }>(
    `SELECT table_name FROM information_schema.tables
      WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name`,
  );
  const out: Record<string, string[]> = {};
  for (const { table_name } of tables) {
    const rows = await db.query<{ row: unknown }>(
      `SELECT to_jsonb(t) AS row FROM "${table_name}" t`,
    );
    out[table_name] = rows.map((row) => JSON.stringify(row.row)).sort();
  }
  return out;
}
