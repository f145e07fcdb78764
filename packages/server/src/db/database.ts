import type { Writable } from 'node:stream';
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
 * An open transaction. Besides its queries, it can `send` a statement whose result is not read
 * without waiting for it: on PostgreSQL the statements sent go out with what follows them
 * (pipelined), so a write of ten statements takes the round trips of its reads only.
 */
export interface Transaction extends Queryable {
  /**
   * Runs a statement whose result is not read, in order with the others, without waiting for
   * it. Should it fail, the transaction does: the next `query` throws its error, or the commit.
   */
  send(sql: string, params?: readonly unknown[]): void;
}

/**
 * The one storage interface of flags-server: the same SQL runs on PostgreSQL (`pg` pool)
 * and on embedded PGlite, so every query is written once.
 */
export interface Database extends Queryable {
  readonly kind: 'postgres' | 'pglite';
  /** Runs `fn` in one transaction: commit when it resolves, roll back when it throws. */
  transaction<T>(fn: (tx: Transaction) => Promise<T>): Promise<T>;
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
    // A connection sends a transaction's statements without waiting for each answer (`send`,
    // and queries issued together): a write costs the round trips of what it reads.
    pipeline: true,
    // pg waits for ever by default: a database behind a dead network path would stall requests.
    connectionTimeoutMillis: options.connectTimeoutMs ?? 5000,
    // TCP keep-alive lets the OS notice a connection whose peer vanished without a reset.
    keepAlive: true,
    ...(options.schema ? { options: `-c search_path=${options.schema}` } : {}),
  });
  // An idle client losing its connection must not crash the process; the next query reconnects.
  pool.on('error', () => {});
  const statements = new PreparedStatements();
  const base: Queryable = {
    async query<Row>(sql: string, params?: readonly unknown[]) {
      // Unnamed (`name` undefined) is parsed and planned for this call alone.
      const result = await pool.query({
        name: statements.nameOf(sql),
        text: sql,
        values: params as unknown[] | undefined,
      });
      return result.rows as Row[];
    },
    async exec(sql: string) {
      await pool.query(sql);
    },
  };
  /**
   * A checked-out connection's statements are submitted as `pg.Query` objects built from their
   * text: given a config object, node-postgres copies it descriptor by descriptor before each
   * statement (`cloneQueryConfig`, a tenth of a toggle's CPU in profiles), which it does not for
   * a text or a `Query`.
   */
  const onClient = (client: pg.PoolClient): Queryable => ({
    query<Row>(sql: string, params?: readonly unknown[]) {
      return new Promise<Row[]>((resolve, reject) => {
        const query = new pg.Query(sql, params as unknown[] | undefined, (error, result) =>
          error ? reject(error) : resolve(result.rows as Row[]),
        );
        (query as { name?: string }).name = statements.nameOf(sql);
        client.query(query);
      });
    },
    async exec(sql: string) {
      await client.query(sql);
    },
  });
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
      const tx = new Pipelined(coalescing(onClient(client), client));
      try {
        tx.send('BEGIN');
        const result = await fn(tx);
        await tx.query('COMMIT');
        // A statement sent that failed turned the commit into a rollback, without an error.
        await tx.settled();
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

/**
 * `queryable` with the statements issued in one turn of the event loop written to the connection
 * together. node-postgres writes each statement on its own (one `writev` each), and each write
 * costs a system call and wakes the database's process: a toggle's ~20 statements were ~20
 * writes, ~5 so (about 5 % less CPU a toggle). Corking the socket until the current turn's
 * callbacks and promise jobs have run sends what they issued in one write. The socket is
 * node-postgres's `connection.stream` (not in its typings, present since its first versions);
 * without it, statements are written as before.
 */
function coalescing(queryable: Queryable, client: pg.PoolClient): Queryable {
  const stream = (client as unknown as { connection?: { stream?: Partial<Writable> } }).connection
    ?.stream;
  if (typeof stream?.cork !== 'function' || typeof stream.uncork !== 'function') return queryable;
  let corked = false;
  const cork = () => {
    if (corked) return;
    corked = true;
    stream.cork!();
    process.nextTick(() => {
      corked = false;
      stream.uncork!();
    });
  };
  return {
    query(sql, params) {
      cork();
      return queryable.query(sql, params);
    },
    exec(sql) {
      cork();
      return queryable.exec(sql);
    },
  };
}

/**
 * A transaction on one pipelined connection (`pipeline: true`): statements go out in the order
 * called, each answered in that order, so a statement sent is never waited for, and reads issued
 * together share a round trip. The first statement that fails is what every later one throws.
 */
class Pipelined implements Transaction {
  private failure: { readonly error: unknown } | undefined;
  private readonly sent: Promise<void>[] = [];

  constructor(private readonly inner: Queryable) {}

  query<Row>(sql: string, params?: readonly unknown[]): Promise<Row[]> {
    return this.answered(this.inner.query<Row>(sql, params));
  }

  exec(sql: string): Promise<void> {
    return this.answered(this.inner.exec(sql));
  }

  /** What a statement waited for answered; its failure recorded and thrown once all are answered. */
  private async answered<T>(statement: Promise<T>): Promise<T> {
    try {
      return await statement;
    } catch (error) {
      this.failed(error);
      await this.settled();
      throw error;
    }
  }

  send(sql: string, params?: readonly unknown[]): void {
    this.sent.push(
      this.inner.query(sql, params).then(
        () => {},
        (error: unknown) => this.failed(error),
      ),
    );
  }

  /**
   * Keeps the transaction's first failure: the statements answered after it fail only because
   * the transaction is aborted, and it is what every one of them throws. Statements answer in
   * order, and their failures reach here in that order.
   */
  private failed(error: unknown): void {
    this.failure ??= { error };
  }

  /** Once every statement sent has been answered: throws the first failure, if any. */
  async settled(): Promise<void> {
    await Promise.all(this.sent);
    if (this.failure !== undefined) throw this.failure.error;
  }
}

/** Most distinct statements prepared per pool; past it, statements are parsed each time. */
const MAX_PREPARED = 1000;

/**
 * A filter a parameter switches on or off (`$3::text IS NULL OR …`): PostgreSQL plans a prepared
 * statement for any parameters after five runs when that plan looks no costlier than theirs, and
 * one plan for a filter on and off scans as if it were off (a read of one flag, every flag).
 */
const OPTIONAL_FILTER = /\$\d+(?:::[a-z]+(?:\[\])?)?\s+IS\s+NULL\s+OR\b/i;

/**
 * Names for the statements the server sends, so that each connection parses a statement once
 * and runs it from then on (node-postgres prepares a named statement on its first use on a
 * connection): a toggle's ~18 statements took ~40 % less time so. Statements with an optional
 * filter stay unnamed, planned for their parameters every time. Bounded, in case some SQL text
 * is built per call.
 */
class PreparedStatements {
  private readonly names = new Map<string, string | undefined>();

  nameOf(sql: string): string | undefined {
    if (this.names.has(sql)) return this.names.get(sql);
    if (this.names.size >= MAX_PREPARED) return undefined;
    const name = OPTIONAL_FILTER.test(sql) ? undefined : `flags_${this.names.size}`;
    this.names.set(sql, name);
    return name;
  }
}

/**
 * A PGlite transaction: in one process, a statement sent simply runs before whatever is called
 * next (there is no round trip to save).
 */
class InOrder implements Transaction {
  private pending: Promise<unknown> = Promise.resolve();
  private failure: { readonly error: unknown } | undefined;

  constructor(private readonly inner: Queryable) {}

  async query<Row>(sql: string, params?: readonly unknown[]): Promise<Row[]> {
    await this.settled();
    return this.inner.query<Row>(sql, params);
  }

  async exec(sql: string): Promise<void> {
    await this.settled();
    await this.inner.exec(sql);
  }

  send(sql: string, params?: readonly unknown[]): void {
    this.pending = this.pending.then(() =>
      this.failure === undefined
        ? this.inner.query(sql, params).then(
            () => {},
            (error: unknown) => {
              this.failure = { error };
            },
          )
        : undefined,
    );
  }

  /** Once every statement sent has run: throws the first failure among them. */
  async settled(): Promise<void> {
    await this.pending;
    if (this.failure !== undefined) throw this.failure.error;
  }
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
    transaction: (fn) =>
      db.transaction(async (tx) => {
        const inOrder = new InOrder(wrap(tx));
        const result = await fn(inOrder);
        await inOrder.settled();
        return result;
      }),
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
