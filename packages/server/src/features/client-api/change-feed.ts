import type { FastifyBaseLogger } from 'fastify';
import { isDatabaseUnreachable } from '../../db/availability.js';
import type { Database } from '../../db/database.js';
import type { RevisionTracker } from '../../revision.js';
import { CHANGE_LOG_CHANNEL, compactClientChanges } from './change-log.js';
import {
  readEventsSince,
  readFloors,
  readLatestEventId,
  type StoredEvent,
} from './change-log-reads.js';

export interface ChangeFeedOptions {
  /** The fallback check: a lost notification delays events at most this long (ms). */
  readonly checkMs: number;
  /** How often the listen connection is retried while the database is unreachable (ms). */
  readonly retryMs: number;
  /** Events kept per environment by compaction. */
  readonly eventsPerEnvironment: number;
  /** How often compaction runs (ms). */
  readonly compactEveryMs: number;
  /**
   * The least time between two reads woken by notifications (ms): the first change after a quiet
   * spell is read at once; changes that follow within this time are read together, once it has
   * passed, and reach each stream as one frame.
   */
  readonly coalesceMs: number;
}

/** Events read per query while catching up. */
const BATCH = 1000;

/**
 * This process's view of the change log: the newest event id it has read, per environment the
 * newest id and the compaction floor, and the subscribers it fans new events out to (the streams).
 * A NOTIFY from any process's write wakes it (`Database.listen`); a check every `checkMs` covers a
 * lost notification or a listen connection down during a database outage. Reads run one at a
 * time (`serial`), so subscribers get every event once, in id order.
 */
export class ChangeFeed {
  private lastId: number | undefined;
  private readonly latestByEnvironment = new Map<string, number>();
  private floors = new Map<string, number>();
  private syncedConfig = -1;
  private syncedTokens = -1;
  private queue: Promise<unknown> = Promise.resolve();
  private readonly eventSubscribers = new Set<
    (events: readonly StoredEvent[]) => void | Promise<void>
  >();
  private readonly tokenSubscribers = new Set<() => void>();
  private timer: ReturnType<typeof setInterval> | undefined;
  private compactedAt = 0;
  private unlisten: (() => Promise<void>) | undefined;
  private stopped = false;
  /** A read queued and not yet started, and the newest revision it stands for. */
  private queuedPoll: Promise<void> | undefined;
  private queuedRevision = -1;
  /** When the last read woken by a notification started, and the read waiting for its turn. */
  private wokenAt = Number.NEGATIVE_INFINITY;
  private wakeTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly db: Database,
    private readonly revisions: RevisionTracker,
    private readonly log: FastifyBaseLogger,
    private readonly options: ChangeFeedOptions,
    private readonly now: () => number = Date.now,
  ) {}

  /** Starts listening and the fallback check; never throws (an unreachable database is retried). */
  async start(): Promise<void> {
    this.unlisten = await this.db.listen(
      CHANGE_LOG_CHANNEL,
      () => this.wake(),
      this.options.retryMs,
    );
    if (this.stopped) {
      await this.unlisten();
      return;
    }
    this.timer = setInterval(() => void this.check(), this.options.checkMs);
    this.timer.unref();
    this.compactedAt = this.now();
    await this.sync().catch(() => {});
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    clearTimeout(this.wakeTimer);
    await this.unlisten?.();
    await this.queue.catch(() => {});
  }

  /** The newest event id read, or `undefined` before the first read succeeded. */
  get latest(): number | undefined {
    return this.lastId;
  }

  /** The newest event id of `environment` read (its floor when it has none). */
  latestOf(environment: string): number | undefined {
    return this.latestByEnvironment.get(environment) ?? this.floors.get(environment);
  }

  floorOf(environment: string): number | undefined {
    return this.floors.get(environment);
  }

  /**
   * `listener` gets each batch of new events, in id order; the next read waits for the promise it
   * returns (a stream's configuration may have to be read first). Returns `unsubscribe`.
   */
  onEvents(listener: (events: readonly StoredEvent[]) => void | Promise<void>): () => void {
    this.eventSubscribers.add(listener);
    return () => this.eventSubscribers.delete(listener);
  }

  /** `listener` runs when the API tokens changed (a deleted token's streams end). */
  onTokensChanged(listener: () => void): () => void {
    this.tokenSubscribers.add(listener);
    return () => this.tokenSubscribers.delete(listener);
  }

  /** Runs `task` after the reads queued so far and before the next (a stream's catch-up). */
  serial<T>(task: () => Promise<T>): Promise<T> {
    const run = this.queue.then(task, task);
    this.queue = run.catch(() => {});
    return run;
  }

  /**
   * Reads new events when the configuration revision moved since the last read (the revision is
   * cached for `REVISION_CHECK_MS`, and moved at once by this process's own writes).
   */
  async sync(): Promise<void> {
    const revisions = await this.revisions.current();
    if (revisions.tokens !== this.syncedTokens) {
      const first = this.syncedTokens < 0;
      this.syncedTokens = revisions.tokens;
      if (!first) for (const listener of this.tokenSubscribers) listener();
    }
    if (revisions.config === this.syncedConfig && this.lastId !== undefined) return;
    await this.poll(revisions.config);
  }

  /**
   * Reads every event after the last one read and fans them out. Callers arriving while a read is
   * queued and not yet started share it (a revision change seen by many requests at once).
   */
  poll(revision?: number): Promise<void> {
    if (this.queuedPoll) {
      if (revision !== undefined) this.queuedRevision = Math.max(this.queuedRevision, revision);
      return this.queuedPoll;
    }
    this.queuedRevision = revision ?? -1;
    this.queuedPoll = this.serial(async () => {
      this.queuedPoll = undefined;
      const revision = this.queuedRevision;
      if (this.stopped) return;
      if (this.lastId === undefined) {
        this.lastId = await readLatestEventId(this.db);
        for (const row of await this.db.query<{ environment: string; id: string }>(
          `SELECT environment, max(id)::text AS id FROM client_change_events GROUP BY environment`,
        )) {
          this.latestByEnvironment.set(row.environment, Number(row.id));
        }
      }
      for (;;) {
        const events = await readEventsSince(this.db, this.lastId, BATCH);
        if (events.length === 0) break;
        for (const event of events) this.latestByEnvironment.set(event.environment, event.id);
        this.lastId = events.at(-1)!.id;
        for (const listener of this.eventSubscribers) await listener(events);
        if (events.length < BATCH) break;
      }
      this.floors = await readFloors(this.db);
      this.syncedConfig = Math.max(this.syncedConfig, revision);
    });
    return this.queuedPoll;
  }

  /**
   * A notification: another process (or this one) committed events or changed tokens. A burst of
   * writes (a script toggling flag after flag) is read in a few reads, not one per write: each
   * frame costs every connected SDK a pass over its whole configuration (unleash-client rewrites
   * its backup file of every flag), so fewer frames spare the apps, not only this server.
   */
  private wake(): void {
    if (this.stopped) return;
    this.revisions.invalidate();
    if (this.wakeTimer) return;
    const wait = this.wokenAt + this.options.coalesceMs - this.now();
    if (wait <= 0) {
      this.readWoken();
      return;
    }
    this.wakeTimer = setTimeout(() => {
      this.wakeTimer = undefined;
      if (!this.stopped) this.readWoken();
    }, wait);
  }

  private readWoken(): void {
    this.wokenAt = this.now();
    this.revisions.invalidate();
    this.sync().catch((error: unknown) => this.failed(error));
  }

  private async check(): Promise<void> {
    try {
      await this.sync();
      if (this.now() - this.compactedAt >= this.options.compactEveryMs) {
        this.compactedAt = this.now();
        await this.db.transaction((tx) =>
          compactClientChanges(tx, this.options.eventsPerEnvironment),
        );
      }
    } catch (error) {
      this.failed(error);
    }
  }

  private failed(error: unknown): void {
    // Unreachable: logged once by `DatabaseAvailability`; the next check retries.
    if (!isDatabaseUnreachable(error) && !this.stopped) {
      this.log.error({ err: error }, 'reading the client change log failed');
    }
  }
}
