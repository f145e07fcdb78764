import type { FastifyBaseLogger } from 'fastify';
import { ADVISORY_LOCK_KEYS } from '../../db/advisory-locks.js';
import type { Database } from '../../db/database.js';
import { captureSnapshot } from './insights-store.js';

const HOUR_MS = 3_600_000;

/**
 * Captures today's insights rows unless another server is doing it right now: the
 * transaction-scoped advisory lock (keyed by the schema too, so instances sharing one PostgreSQL
 * server in different schemas do not exclude each other) admits one runner; the others skip.
 * Returns whether this call wrote the snapshot.
 */
export async function runSnapshot(db: Database, now: Date): Promise<boolean> {
  return db.transaction(async (tx) => {
    const [lock] = await tx.query<{ locked: boolean }>(
      'SELECT pg_try_advisory_xact_lock($1, hashtext(current_schema())) AS locked',
      [ADVISORY_LOCK_KEYS.insightsSnapshot],
    );
    if (!lock?.locked) return false;
    await captureSnapshot(tx, now);
    return true;
  });
}

export interface SnapshotJob {
  /** Runs one snapshot now (the job also runs on its own every `intervalMs`). */
  run(): Promise<boolean>;
  /** Stops the timer and waits for a run in progress. */
  stop(): Promise<void>;
}

/**
 * Writes today's snapshot at once and then every `intervalMs` (default hourly), so history
 * accumulates one row set per day. A failed run is logged and retried at the next tick.
 */
export async function startSnapshotJob(options: {
  db: Database;
  now: () => Date;
  log: FastifyBaseLogger;
  intervalMs?: number;
}): Promise<SnapshotJob> {
  const { db, now, log } = options;
  let running: Promise<boolean> | undefined;
  const run = (): Promise<boolean> => {
    running ??= runSnapshot(db, now())
      .then((wrote) => {
        if (!wrote) log.debug('insights snapshot skipped: another server holds the lock');
        return wrote;
      })
      .finally(() => {
        running = undefined;
      });
    return running;
  };
  const tick = () => {
    run().catch((error: unknown) => log.error({ err: error }, 'insights snapshot failed'));
  };
  await run().catch((error: unknown) => {
    log.error({ err: error }, 'insights snapshot failed');
    return false;
  });
  const timer = setInterval(tick, options.intervalMs ?? HOUR_MS);
  // The job must not keep a process alive that has nothing else to do.
  timer.unref();
  return {
    run,
    async stop() {
      clearInterval(timer);
      await running?.catch(() => false);
    },
  };
}
