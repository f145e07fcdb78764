import pg from 'pg';
import { type SourceInstance, userKey } from './records.js';
import { MigrateError } from './unleash-source.js';

/** The URL as messages show it: without its password. */
export function shownUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.href;
  } catch {
    return '(not a URL)';
  }
}

/**
 * Runs `use` in a read-only transaction on unleash-server's database at `url`, once it is known to
 * be one (a `users` table with `password_hash`) and, when the Admin API told an instance id, that
 * instance's (the database of another instance, a staging copy or flags-server's own, has another
 * id or none; unleash-server keeps it in `settings`).
 */
async function inSourceDatabase<T>(
  url: string,
  instanceId: string | undefined,
  use: (client: pg.Client) => Promise<T>,
): Promise<T> {
  const shown = shownUrl(url);
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  client.on('error', () => {});
  try {
    await client.connect();
  } catch (error) {
    throw new MigrateError(
      `cannot connect to --database ${shown} (${(error as Error).message}): give unleash-server's DATABASE_URL`,
    );
  }
  try {
    await client.query('BEGIN READ ONLY');
    const { rows: columns } = await client.query<{ column_name: string }>(
      `SELECT column_name FROM information_schema.columns
        WHERE table_name = 'users' AND table_schema = ANY (current_schemas(false))`,
    );
    const has = new Set(columns.map((row) => row.column_name));
    if (!['id', 'email', 'username', 'password_hash'].every((column) => has.has(column))) {
      throw new MigrateError(
        `--database ${shown} has no users table with password_hash: it is not unleash-server's database (give the DATABASE_URL unleash-server runs with)`,
      );
    }
    if (instanceId !== undefined) {
      const { rows: tables } = await client.query<{ found: string | null }>(
        "SELECT to_regclass('settings')::text AS found",
      );
      const instance =
        tables[0]?.found === null || tables[0] === undefined
          ? undefined
          : (
              await client.query<{ id: string | null }>(
                "SELECT content->>'id' AS id FROM settings WHERE name = 'instanceInfo'",
              )
            ).rows[0]?.id;
      if (instance !== instanceId) {
        throw new MigrateError(
          `--database ${shown} is not the database of the unleash-server at --url: its instance id is ${instance ?? 'missing'}, the server's is ${instanceId}`,
        );
      }
    }
    const result = await use(client);
    await client.query('ROLLBACK');
    return result;
  } catch (error) {
    if (error instanceof MigrateError) throw error;
    throw new MigrateError(
      `cannot read users from --database ${shown}: ${(error as Error).message}`,
    );
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * Refuses `url` unless it is the database of the unleash-server whose Admin API told
 * `instanceId`: asked before the instance is read, so that a wrong --database stops the command at
 * once instead of after the whole read.
 */
export async function checkSourceDatabase(
  url: string,
  instanceId: string | undefined,
): Promise<void> {
  await inSourceDatabase(url, instanceId, async () => {});
}

/**
 * The bcrypt password hashes of the source's users, read from unleash-server's database: only
 * `users`' `id`, `email`, `username` and `password_hash`. Refuses a database that is not the
 * instance's (see {@link inSourceDatabase}), and one whose users are not those the Admin API
 * answered. Returns hashes by user record key; users without one are left out.
 */
export async function readPasswordHashes(
  url: string,
  source: Pick<SourceInstance, 'userIds' | 'records' | 'instanceId'>,
): Promise<Map<string, string>> {
  const shown = shownUrl(url);
  const rows = await inSourceDatabase(url, source.instanceId, async (client) => {
    const ids = [...source.userIds.values()];
    return (
      await client.query<{
        id: number;
        email: string | null;
        username: string | null;
        password_hash: string | null;
      }>('SELECT id, email, username, password_hash FROM users WHERE id = ANY ($1::int[])', [ids])
    ).rows;
  });
  const byId = new Map(rows.map((row) => [Number(row.id), row]));
  const hashes = new Map<string, string>();
  for (const [key, id] of source.userIds) {
    const row = byId.get(id);
    const record = source.records.users.get(key);
    // The same person on both sides, or this is the database of another instance.
    if (row === undefined || userKey(row.email || null, row.username || null) !== key) {
      throw new MigrateError(
        `--database ${shown} is not the database of the unleash-server at --url: its user ${id} is ${row ? (row.email ?? row.username) : 'missing'}, the Admin API's is ${record?.email ?? record?.username}`,
      );
    }
    if (row.password_hash) hashes.set(key, row.password_hash);
  }
  return hashes;
}
