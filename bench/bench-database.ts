// The PostgreSQL the server benchmarks run on, and a database of its own for each run.
import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** The local PostgreSQL (`TEST_DATABASE_URL`, as the tests use it). */
export const POSTGRES_URL =
  process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';

/** A PostgreSQL database of its own for `use`, dropped after. */
export async function withDatabase<T>(use: (url: string) => Promise<T>): Promise<T> {
  const name = `flags_bench_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
    const url = new URL(POSTGRES_URL);
    url.pathname = `/${name}`;
    try {
      return await use(url.href);
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    }
  } finally {
    await admin.end();
  }
}
