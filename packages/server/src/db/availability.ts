import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyBaseLogger } from 'fastify';
import type { Database, Queryable } from './database.js';

/** Socket errors that mean the database cannot be reached (not that a statement was wrong). */
const NETWORK_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * `pg` reports a dropped connection and a connect timeout with these messages and no code, so
 * they are matched by message; every other failure is classified by its code.
 */
const PG_CONNECTION_MESSAGES =
  /^(Connection terminated|Client has encountered a connection error|timeout exceeded when trying to connect|Client was closed and is not queryable)/;

/**
 * Whether `error` says the database is unreachable: a socket error, a PostgreSQL connection
 * exception (SQLSTATE class 08) or a server shutting down or starting (57P01–57P03).
 */
export function isDatabaseUnreachable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (NETWORK_CODES.has(code) || code.startsWith('08') || /^57P0[123]$/.test(code)) return true;
  }
  return code === undefined && PG_CONNECTION_MESSAGES.test(error.message);
}

export type DatabaseState = 'starting' | 'reachable' | 'unreachable';

/**
 * What the server knows about its database: whether the first load has completed (`ready`) and
 * whether the last statement reached it. The first failure logs one warning and starts a probe
 * (`SELECT 1` every `retryMs`); the first success after it logs one line and runs the
 * `onRecovered` listeners (buffered usage metrics are written then). One per app.
 */
export class DatabaseAvailability {
  private current: DatabaseState = 'starting';
  private loaded = false;
  private probe: ReturnType<typeof setTimeout> | undefined;
  private stopped = false;
  private readonly recovered: (() => void)[] = [];

  constructor(
    private readonly db: Database,
    private readonly log: FastifyBaseLogger,
    private readonly retryMs: number,
  ) {}

  get state(): DatabaseState {
    return this.current;
  }

  /** The first load (migrations, tokens) has completed: the server can answer from memory. */
  get ready(): boolean {
    return this.loaded;
  }

  markLoaded(): void {
    this.loaded = true;
    this.markReachable();
  }

  onRecovered(listener: () => void): void {
    this.recovered.push(listener);
  }

  markReachable(): void {
    if (this.current === 'reachable') return;
    const was = this.current;
    this.current = 'reachable';
    clearTimeout(this.probe);
    this.probe = undefined;
    if (was === 'unreachable') {
      this.log.info('database reachable again: serving from the database, writes accepted');
      for (const listener of this.recovered) listener();
    }
  }

  markUnreachable(error: unknown): void {
    if (this.current === 'unreachable' || this.stopped) return;
    this.current = 'unreachable';
    this.log.warn(
      { err: error, retryMs: this.retryMs },
      this.loaded
        ? 'database unreachable: degraded, serving the client API and token checks from memory; writes answer 503; retrying'
        : 'database unreachable at start: not ready; retrying',
    );
    this.scheduleProbe();
  }

  /** Stops the probe (the app is closing). */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.probe);
  }

  private scheduleProbe(): void {
    this.probe = setTimeout(() => {
      // A probe the database never answers (packets dropped) counts as failed after `retryMs`.
      Promise.race([
        this.db.query('SELECT 1'),
        sleep(this.retryMs, undefined, { ref: false }).then(() => {
          throw new Error('no answer');
        }),
      ]).then(
        () => this.markReachable(),
        () => {
          if (this.current === 'unreachable' && !this.stopped) this.scheduleProbe();
        },
      );
    }, this.retryMs);
    this.probe.unref();
  }
}

/**
 * `db` reporting to `availability`: an unreachable database marks it unreachable, a statement
 * that succeeds marks it reachable. Errors still reach the caller.
 */
export function watchedDatabase(db: Database, availability: DatabaseAvailability): Database {
  const watch = async <T>(run: () => Promise<T>): Promise<T> => {
    try {
      const result = await run();
      availability.markReachable();
      return result;
    } catch (error) {
      if (isDatabaseUnreachable(error)) availability.markUnreachable(error);
      throw error;
    }
  };
  const watchQueryable = (target: Queryable) => ({
    query: <Row>(sql: string, params?: readonly unknown[]) =>
      watch(() => target.query<Row>(sql, params)),
    exec: (sql: string) => watch(() => target.exec(sql)),
  });
  return {
    kind: db.kind,
    ...watchQueryable(db),
    transaction: (fn) => watch(() => db.transaction(fn)),
    listen: (channel, onNotify, retryMs) => db.listen(channel, onNotify, retryMs),
    close: () => db.close(),
  };
}
