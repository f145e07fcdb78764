import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';

/** Anything that runs SQL: the database itself or an open transaction. */
export interface Queryable {
  /** One statement with `$1…` parameters. Pass jsonb values as JSON strings. */
  query<Row = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<Row[]>;
  /** Several statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
}

/**
 * The one storage interface of flags-server: the same SQL runs on PostgreSQL (`pg` pool)
 * and on embedded PGlite, so every query is written once.
 */
export interface Database extends Queryable {
  readonly kind: 'postgres' | 'pglite';
  /** Runs `fn` in one transaction: commit when it resolves, roll back when it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /**
   * Calls `onNotify` on every `NOTIFY` on `channel` (a `pg_notify` in a transaction arrives at its
   * commit), and once more after each reconnection, since notifications sent while disconnected
   * are lost. PostgreSQL listens on a connection of its own, reconnected every `retryMs` while the
   * database is unreachable; PGlite (one process) delivers its own notifications. Returns `stop`.
   */
  listen(channel: string, onNotify: () => void, retryMs: number): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

export interface PostgresOptions {
  /** Schema used as `search_path` (tests isolate themselves this way). */
  schema?: string;
  maxConnections?: number;
  /** How long a new connection may take before the query fails (default 5 s). */
  connectTimeoutMs?: number;
}

// pg returns int8 and numeric as strings; every count the server reads is cast to int in SQL.
export function openPostgres(url: string, options: PostgresOptions = {}): Database {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.maxConnections ?? 10,
    // pg waits for ever by default: a database behind a dead network path would stall requests.
    connectionTimeoutMillis: options.connectTimeoutMs ?? 5000,
    // TCP keep-alive lets the OS notice a connection whose peer vanished without a reset.
    keepAlive: true,
    ...(options.schema ? { options: `-c search_path=${options.schema}` } : {}),
  });
  // An idle client losing its connection must not crash the process; the next query reconnects.
  pool.on('error', () => {});
  const wrap = (client: pg.Pool | pg.PoolClient): Queryable => ({
    async query<Row>(sql: string, params?: readonly unknown[]) {
      const result = await client.query(sql, params as unknown[] | undefined);
      return result.rows as Row[];
    },
    async exec(sql: string) {
      await client.query(sql);
    },
  });
  // One connection runs one query at a time: queue the transaction's queries (callers may use
  // Promise.all on a transaction like on the pool).
  const serial = (client: pg.PoolClient): Queryable => {
    const inner = wrap(client);
    let tail: Promise<unknown> = Promise.resolve();
    const enqueue = <T>(run: () => Promise<T>): Promise<T> => {
      const next = tail.then(run, run);
      tail = next.catch(() => {});
      return next;
    };
    return {
      query: (sql, params) => enqueue(() => inner.query(sql, params)),
      exec: (sql) => enqueue(() => inner.exec(sql)),
    };
  };
  const base = wrap(pool);
  return {
    kind: 'postgres',
    query: base.query,
    exec: base.exec,
    listen: (channel, onNotify, retryMs) =>
      listenPostgres(
        {
          connectionString: url,
          connectionTimeoutMillis: options.connectTimeoutMs ?? 5000,
          keepAlive: true,
          ...(options.schema ? { options: `-c search_path=${options.schema}` } : {}),
        },
        channel,
        onNotify,
        retryMs,
      ),
    async transaction(fn) {
      const client = await pool.connect();
      // A checked-out client has no pool listener: a connection lost mid-transaction (the
      // query in flight rejects with it) must not become an uncaught 'error' event.
      const ignore = () => {};
      client.on('error', ignore);
      try {
        await client.query('BEGIN');
        const result = await fn(serial(client));
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {});
        throw error;
      } finally {
        client.off('error', ignore);
        client.release();
      }
    },
    close: () => pool.end(),
  };
}

/** Embedded PostgreSQL (WASM). `dataDir` undefined → in memory. */
export async function openPglite(dataDir?: string): Promise<Database> {
  const db = dataDir ? new PGlite(dataDir) : new PGlite();
  await db.waitReady;
  const wrap = (client: Pick<PGlite, 'query' | 'exec'>): Queryable => ({
    async query<Row>(sql: string, params?: readonly unknown[]) {
      const result = await client.query<Row>(sql, params as unknown[] | undefined);
      return result.rows;
    },
    async exec(sql: string) {
      await client.exec(sql);
    },
  });
  const base = wrap(db);
  return {
    kind: 'pglite',
    query: base.query,
    exec: base.exec,
    transaction: (fn) => db.transaction((tx) => fn(wrap(tx))),
    async listen(channel, onNotify) {
      const unlisten = await db.listen(channel, () => onNotify());
      return async () => {
        // Closing the database ends its listeners too; unlistening then would throw.
        if (!db.closed) await unlisten();
      };
    },
    close: () => db.close(),
  };
}

/**
 * `LISTEN channel` on a dedicated `pg` client (a pooled connection would be handed to queries).
 * A lost connection is replaced every `retryMs` until it comes back; `onNotify` then runs once.
 * Never throws: a database unreachable at start is retried the same way.
 */
async function listenPostgres(
  config: pg.ClientConfig,
  channel: string,
  onNotify: () => void,
  retryMs: number,
): Promise<() => Promise<void>> {
  let stopped = false;
  let client: pg.Client | undefined;
  let retry: ReturnType<typeof setTimeout> | undefined;
  const connect = async (reconnect: boolean): Promise<void> => {
    const next = new pg.Client(config);
    client = next;
    let failed = false;
    const fail = () => {
      if (failed) return;
      failed = true;
      next.removeAllListeners('notification');
      next.end().catch(() => {});
      if (stopped || client !== next) return;
      client = undefined;
      retry = setTimeout(() => void connect(true), retryMs);
      retry.unref();
    };
    next.on('error', fail);
    next.on('end', fail);
    next.on('notification', (message) => {
      if (message.channel === channel) onNotify();
    });
    try {
      await next.connect();
      // The channel is an identifier; callers pass constants, quoted anyway.
      await next.query(`LISTEN "${channel.replaceAll('"', '""')}"`);
      if (stopped) await next.end();
      else if (reconnect) onNotify();
    } catch {
      fail();
    }
  };
  await connect(false);
  return async () => {
    stopped = true;
    clearTimeout(retry);
    const last = client;
    client = undefined;
    await last?.end().catch(() => {});
  };
}
