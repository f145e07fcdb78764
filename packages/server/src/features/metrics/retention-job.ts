import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { Database } from '../../db/database.js';
import { type RetentionResult, type RetentionSettings, runRetention } from './retention-store.js';

export const RETENTION_INTERVAL_MS = 3_600_000;
/**
 * The first run waits a minute after start (not the whole interval, so servers restarted more
 * often than hourly still clean up; not at once, so a start stays quick).
 */
export const RETENTION_FIRST_RUN_DELAY_MS = 60_000;

export interface RetentionJob {
  /** Runs now (or joins the run in progress). */
  run(): Promise<RetentionResult | undefined>;
  /** Resolves when no run is in progress. */
  idle(): Promise<void>;
  /** Stops the timers; a run in progress ends after its current batch, and is waited for. */
  stop(): Promise<void>;
}

/**
 * Deletes old client instances, applications and metrics buckets (`runRetention`) a minute after
 * start and then every `intervalMs`. A failed run is logged and retried at the next tick.
 */
export function startRetentionJob(options: {
  db: Database;
  now: () => Date;
  log: FastifyBaseLogger;
  settings: RetentionSettings;
  intervalMs?: number;
  firstRunDelayMs?: number;
  batchSize?: number;
}): RetentionJob {
  const { db, now, log, settings } = options;
  let stopped = false;
  let running: Promise<RetentionResult | undefined> | undefined;
  const run = (): Promise<RetentionResult | undefined> => {
    running ??= runRetention(db, now(), settings, {
      ...(options.batchSize === undefined ? {} : { batchSize: options.batchSize }),
      shouldStop: () => stopped,
    })
      .then((result) => {
        if (!result) log.debug('client data retention: not run (another server, or stopping)');
        else if (Object.values(result).some((table) => table.deleted > 0)) {
          log.info({ deleted: result }, 'client data retention: old rows deleted');
        }
        return result;
      })
      .finally(() => {
        running = undefined;
      });
    return running;
  };
  const tick = () => {
    run().catch((error: unknown) => log.error({ err: error }, 'client data retention failed'));
  };
  let interval: ReturnType<typeof setInterval> | undefined;
  const first = setTimeout(() => {
    tick();
    interval = setInterval(tick, options.intervalMs ?? RETENTION_INTERVAL_MS);
    // The job must not keep a process alive that has nothing else to do.
    interval.unref();
  }, options.firstRunDelayMs ?? RETENTION_FIRST_RUN_DELAY_MS);
  first.unref();
  const idle = async () => {
    await running?.catch(() => undefined);
  };
  return {
    run,
    idle,
    async stop() {
      stopped = true;
      clearTimeout(first);
      clearInterval(interval);
      await idle();
    },
  };
}

/** Runs the retention job while the app is up: started when it is ready, stopped when it closes. */
export function clientDataRetention(
  app: FastifyInstance,
  db: Database,
  options: { now: () => Date; settings: RetentionSettings },
): void {
  let job: RetentionJob | undefined;
  app.addHook('onReady', async () => {
    job = startRetentionJob({ db, now: options.now, log: app.log, settings: options.settings });
  });
  app.addHook('onClose', async () => {
    await job?.stop();
  });
}
