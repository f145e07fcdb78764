import { setTimeout as sleep } from 'node:timers/promises';
import { isDatabaseUnreachable } from './db/availability.js';
import type { Database, Queryable, Transaction } from './db/database.js';
import { CHANGE_LOG_CHANNEL, recordClientChanges } from './features/client-api/change-log.js';

export interface Revisions {
  /** Bumped in the transaction of every write the client API can see. */
  readonly config: number;
  /** Bumped by every API token change. */
  readonly tokens: number;
}

/**
 * Call inside the write's transaction, so the bump commits (or rolls back) with the write. It
 * records the write's delta events too (`recordClientChanges`), in the same transaction, for the
 * `changedFlags` (in the `changedEnvironments`) only when the write names them; an environment
 * with more changes than `changesKept` gets a resync point instead of its events. Returns the
 * revisions as the write commits them (the row stays locked until then).
 */
export async function bumpConfigRevision(
  tx: Transaction,
  changedFlags?: ReadonlySet<string>,
  changesKept?: number,
  changedEnvironments?: ReadonlySet<string>,
): Promise<Revisions> {
  // Answered before the change log's reads, in the same round trip.
  const bumped = tx.query<Revisions>(
    'UPDATE revision SET config = config + 1 WHERE id = 1 RETURNING config::int AS config, tokens::int AS tokens',
  );
  // Its failure is the transaction's, thrown by what follows; never left unhandled.
  bumped.catch(() => {});
  await recordClientChanges(tx, false, changedFlags, changesKept, changedEnvironments);
  const [row] = await bumped;
  return { config: Number(row?.config ?? 0), tokens: Number(row?.tokens ?? 0) };
}

/** Also wakes every process's change feed at commit: streams of a deleted token end. */
export async function bumpTokenRevision(tx: Queryable): Promise<void> {
  await tx.query('UPDATE revision SET tokens = tokens + 1 WHERE id = 1');
  await tx.query('SELECT pg_notify($1, $2)', [CHANGE_LOG_CHANNEL, 'tokens']);
}

/**
 * The revision counters as this process knows them. Several server processes may share one
 * PostgreSQL, so the single-row `revision` table is re-read when the cached value is older than
 * `ttlMs` (one cheap primary-key SELECT per `ttlMs`, shared by all requests in flight). Writes made
 * by this process call `invalidate()` after commit, so they are visible to its next request at once.
 * While the database is unreachable the last revisions read stay current, so the caches built
 * for them keep answering.
 */
export class RevisionTracker {
  private cached: Revisions | undefined;
  /** The last revisions read, kept through `invalidate()`: the answer while the database is unreachable. */
  private lastKnown: Revisions | undefined;
  private readAt = 0;
  private pending: Promise<Revisions> | undefined;
  private generation = 0;

  constructor(
    private readonly db: Database,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
    /**
     * Events the change log keeps per environment (`CHANGE_LOG_EVENTS_PER_ENVIRONMENT`): a write
     * bumping the revision with more changes in an environment records a resync point instead.
     */
    readonly changesKept = Number.POSITIVE_INFINITY,
  ) {}

  current(): Revisions | Promise<Revisions> {
    if (this.cached && this.now() - this.readAt < this.ttlMs) return this.cached;
    this.pending ??= this.read();
    const known = this.lastKnown;
    if (!known) return this.pending;
    // A database that does not answer at all (a network path dropping packets, not resetting)
    // must not hold requests: after `ttlMs` the last revisions read answer, for `ttlMs` more.
    const pending = this.pending;
    const generation = this.generation;
    return Promise.race([
      pending,
      sleep(this.ttlMs, undefined, { ref: false }).then(() => {
        if (this.pending === pending && this.generation === generation) {
          this.cached = known;
          this.readAt = this.now();
        }
        return known;
      }),
    ]);
  }

  invalidate(): void {
    // A read already in flight may predate the write: its result must not be cached.
    this.generation++;
    this.cached = undefined;
    this.pending = undefined;
  }

  /**
   * After a write of this process committed `revisions` (`bumpConfigRevision`): they are current
   * for `ttlMs`, so its next request does not read them again (unless newer ones are known).
   */
  committed(revisions: Revisions): void {
    const known = this.lastKnown;
    this.invalidate();
    // Another write committed after this one and was seen already: read them again instead.
    if (known && (known.config > revisions.config || known.tokens > revisions.tokens)) return;
    this.cached = revisions;
    this.lastKnown = revisions;
    this.readAt = this.now();
  }

  private async read(): Promise<Revisions> {
    const startedAt = this.now();
    const generation = this.generation;
    try {
      const rows = await this.db.query<{ config: number; tokens: number }>(
        'SELECT config::int AS config, tokens::int AS tokens FROM revision WHERE id = 1',
      );
      const row = rows[0] ?? { config: 0, tokens: 0 };
      const revisions = { config: Number(row.config), tokens: Number(row.tokens) };
      if (generation === this.generation) {
        this.cached = revisions;
        this.readAt = startedAt;
      }
      this.lastKnown = revisions;
      return revisions;
    } catch (error) {
      // Database unreachable: what was loaded stays current (issue 18), checked again after `ttlMs`.
      if (!this.lastKnown || !isDatabaseUnreachable(error)) throw error;
      if (generation === this.generation) {
        this.cached = this.lastKnown;
        this.readAt = startedAt;
      }
      return this.lastKnown;
    } finally {
      if (generation === this.generation) this.pending = undefined;
    }
  }
}
