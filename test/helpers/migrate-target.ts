import { randomBytes } from 'node:crypto';
import { buildApp, type Database, loadConfig, openPostgres, runMigrate } from '@flags/server';
import type { FastifyInstance } from 'fastify';
import type pg from 'pg';
import { databaseUrl as databaseUrlOn, withClient } from './unleash-server.js';

/**
 * flags-server databases on the test PostgreSQL (TEST_DATABASE_URL) for the migrate suites: made,
 * migrated into, counted and served.
 */

const POSTGRES_URL = process.env.TEST_DATABASE_URL;

/** The URL of database `name` on the test PostgreSQL. */
export function databaseUrl(name: string): string {
  return databaseUrlOn(POSTGRES_URL as string, name);
}

const withPostgres = <T>(use: (client: pg.Client) => Promise<T>) =>
  withClient(POSTGRES_URL as string, use);

/** A new, empty PostgreSQL database for a flags-server, and how to drop it. */
export async function createFlagsDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `flags_migrate_${randomBytes(4).toString('hex')}`;
  await withPostgres((client) => client.query(`CREATE DATABASE ${name}`));
  return {
    url: databaseUrl(name),
    drop: () =>
      withPostgres(async (client) => {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      }),
  };
}

/** `flags-server migrate …args` on the flags-server database at `url`: exit status and output. */
export async function migrateCommand(args: readonly string[], url: string, publicUrl?: string) {
  let out = '';
  let err = '';
  const status = await runMigrate(args, {
    env: { DATABASE_URL: url, ...(publicUrl ? { PUBLIC_URL: publicUrl } : {}) },
    out: (text) => {
      out += text;
    },
    err: (text) => {
      err += text;
    },
  });
  return { status, out, err, output: `${out}${err}` };
}

/** Every table's row count: what "writes nothing" is checked with. */
export async function rowCounts(url: string): Promise<Record<string, number>> {
  return withClient(url, async (client) => {
    const { rows } = await client.query<{ table_name: string }>(
      `SELECT table_name FROM information_schema.tables
        WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name`,
    );
    const counts: Record<string, number> = {};
    for (const { table_name } of rows) {
      const [row] = (
        await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${table_name}"`)
      ).rows;
      counts[table_name] = row?.n ?? 0;
    }
    const [revision] = (
      await client.query<{ config: string; tokens: string }>(
        'SELECT config::text, tokens::text FROM revision',
      )
    ).rows;
    counts[`revision ${revision?.config}/${revision?.tokens}`] = 1;
    return counts;
  });
}

export async function tableCount(url: string): Promise<number> {
  return withClient(url, async (client) => {
    const { rows } = await client.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = 'public'",
    );
    return rows[0]?.n ?? -1;
  });
}

/** flags-server on the database at `url`, listening on a free port. */
export async function startFlagsServer(
  url: string,
): Promise<{ app: FastifyInstance; db: Database; url: string }> {
  const db = openPostgres(url, { maxConnections: 4 });
  const config = loadConfig(
    { DATABASE_URL: url },
    { port: 0, host: '127.0.0.1', logLevel: 'warn', loginsPerMinute: 10_000 },
  );
  const app = await buildApp(config, { db, logger: false });
  const base = await app.listen({ port: 0, host: '127.0.0.1' });
  return { app, db, url: base };
}
