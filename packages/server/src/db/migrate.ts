import { ConfigError } from '@flags/config';
import { ADVISORY_LOCK_KEYS } from './advisory-locks.js';
import type { Database, Queryable } from './database.js';
import { migrations } from './migrations/index.js';

/**
 * Applies the missing migrations in one transaction. The transaction-scoped advisory lock makes
 * several servers starting on one PostgreSQL wait for each other instead of racing.
 * Returns the versions applied. `list` is every migration except in tests that build an older schema.
 */
export async function migrate(
  db: Database,
  list: readonly (typeof migrations)[number][] = migrations,
): Promise<number[]> {
  return db.transaction((tx) => applyMigrations(tx, list));
}

/**
 * `migrate` in the caller's transaction (`migrate from-unleash --dry-run` plans on a schema it
 * then rolls back).
 */
export async function applyMigrations(
  tx: Queryable,
  list: readonly (typeof migrations)[number][] = migrations,
): Promise<number[]> {
  await tx.query('SELECT pg_advisory_xact_lock($1)', [ADVISORY_LOCK_KEYS.migration]);
  await refuseUnleashDatabase(tx);
  await tx.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version integer PRIMARY KEY,
    name text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
  )`);
  const rows = await tx.query<{ version: number }>('SELECT version FROM schema_migrations');
  const applied = new Set(rows.map((row) => row.version));
  const done: number[] = [];
  for (const migration of list) {
    if (applied.has(migration.version)) continue;
    await tx.exec(migration.sql);
    await tx.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [
      migration.version,
      migration.name,
    ]);
    done.push(migration.version);
  }
  return done;
}

/**
 * Refuses unleash-server's own database: both servers are configured with `DATABASE_URL`, and on
 * it the first migration would fail on a table the two schemas share (`relation "projects"
 * already exists`), naming nothing to fix. `migrations` (its migrator's) and `unleash_session`
 * are tables flags-server never has.
 */
async function refuseUnleashDatabase(tx: Queryable): Promise<void> {
  const [row] = await tx.query<{ unleash: boolean }>(
    "SELECT to_regclass('migrations') IS NOT NULL AND to_regclass('unleash_session') IS NOT NULL AS unleash",
  );
  if (row?.unleash) {
    throw new ConfigError([
      "DATABASE_URL is unleash-server's own database: flags-server needs a database of its own (DATABASE_URL, or DATA_DIR for PGlite); to copy from unleash-server, give its database to `flags-server migrate from-unleash --database`, read only",
    ]);
  }
}
