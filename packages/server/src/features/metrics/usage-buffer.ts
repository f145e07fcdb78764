import type { FastifyBaseLogger } from 'fastify';
import { type DatabaseAvailability, isDatabaseUnreachable } from '../../db/availability.js';
import type { Database } from '../../db/database.js';
import { ApiError } from '../../errors.js';
import type { DefinedVariantsLookup } from './defined-variants.js';
import { type MetricCounts, recordCounts, recordInstances } from './metrics-store.js';
import type { SdkInstance } from './sdk-instance.js';

/** One accepted usage report (`/api/client/metrics` or `/bulk`), ready to write. */
export interface UsageReport {
  readonly environment: string;
  readonly counts: readonly MetricCounts[];
  readonly instances: readonly SdkInstance[];
  readonly clientIp: string;
}

/** What one held entry (a count, a variant, an instance, a strategy name) costs beyond its text. */
const ENTRY_BYTES = 64;

/**
 * An estimate of the memory a held report takes: its strings at two bytes a character plus a
 * fixed cost per entry. Reports come from public frontend tokens too, so the buffer is bounded by
 * this and not only by the number of reports (one report may carry 10,000 counts).
 */
export function heldBytes(report: UsageReport): number {
  let bytes = ENTRY_BYTES + 2 * (report.environment.length + report.clientIp.length);
  for (const count of report.counts) {
    bytes += ENTRY_BYTES + 2 * (count.featureName.length + count.appName.length);
    for (const name in count.variants ?? {}) bytes += ENTRY_BYTES + 2 * name.length;
  }
  for (const instance of report.instances) {
    bytes += ENTRY_BYTES + 2 * (instance.appName.length + instance.instanceId.length);
    bytes += 2 * ((instance.connectionId ?? '').length + (instance.sdkVersion ?? '').length);
    bytes += 2 * (instance.started ?? '').length;
    for (const name of instance.strategies ?? []) bytes += ENTRY_BYTES + 2 * name.length;
  }
  return bytes;
}

/** Held reports written together, at most: one transaction instead of one each. */
const FLUSH_BATCH = 100;

/**
 * Writes `reports` of one environment in one transaction: their counts summed (`recordCounts`
 * adds up repeated keys), their instances in arrival order, a statement per run of reports from
 * one address (the latest report of an instance wins, as written one by one).
 */
async function writeReports(
  db: Database,
  variants: DefinedVariantsLookup,
  reports: readonly UsageReport[],
): Promise<void> {
  const environment = reports[0]!.environment;
  // Read when written (a held report too), from the configuration cached for the environment.
  const defined = await variants.of(environment);
  await db.transaction(async (tx) => {
    await recordCounts(
      tx,
      environment,
      reports.flatMap((report) => report.counts),
      defined,
    );
    for (let start = 0; start < reports.length; ) {
      const { clientIp } = reports[start]!;
      let end = start + 1;
      while (end < reports.length && reports[end]!.clientIp === clientIp) end++;
      const run = reports.slice(start, end).flatMap((report) => report.instances);
      await recordInstances(tx, environment, run, clientIp);
      start = end;
    }
  });
}

/**
 * Writes usage reports, or holds them while the database is unreachable (at most `maxReports`
 * taking at most `maxBytes`, in arrival order) and writes them when it returns, so no SDK's counts
 * are lost (issue 18). Beyond either bound the answer is 503: SDKs keep their counts and send them
 * again.
 */
export class UsageBuffer {
  private pending: { readonly report: UsageReport; readonly bytes: number }[] = [];
  private pendingBytes = 0;
  private flushing: Promise<void> | undefined;

  constructor(
    private readonly db: Database,
    private readonly availability: DatabaseAvailability,
    private readonly maxReports: number,
    private readonly log: FastifyBaseLogger,
    /** The variant names each flag defines: the only ones whose counts are stored. */
    private readonly variants: DefinedVariantsLookup,
    /** Estimated memory the held reports may take (`heldBytes`). */
    private readonly maxBytes = Number.POSITIVE_INFINITY,
  ) {
    availability.onRecovered(() => void this.flush());
  }

  /** Reports held, not yet written. */
  get size(): number {
    return this.pending.length;
  }

  /** Estimated memory of the reports held. */
  get bytes(): number {
    return this.pendingBytes;
  }

  async record(report: UsageReport): Promise<void> {
    if (this.availability.state !== 'unreachable') {
      try {
        await writeReports(this.db, this.variants, [report]);
        return;
      } catch (error) {
        if (!isDatabaseUnreachable(error)) throw error;
      }
    }
    const bytes = heldBytes(report);
    if (this.pending.length >= this.maxReports || this.pendingBytes + bytes > this.maxBytes) {
      throw new ApiError(
        'DATABASE_UNAVAILABLE',
        'The database is unreachable and the usage reports held for it fill their buffer: keep the counts and send them again later.',
      );
    }
    this.pending.push({ report, bytes });
    this.pendingBytes += bytes;
    // It may have come back while this report failed: its recovery listener has already run.
    if (this.availability.state === 'reachable') void this.flush();
  }

  /**
   * Writes the held reports in order, up to `FLUSH_BATCH` of one environment at a time (a
   * thousand reports one transaction each took seconds); stops (keeping the rest) if the database
   * goes away again. A batch refused for another reason is written again report by report, so
   * only a report that cannot be written is dropped.
   */
  flush(): Promise<void> {
    this.flushing ??= (async () => {
      let written = 0;
      // Reports of a refused batch, written again one at a time.
      let alone = 0;
      try {
        while (this.pending.length > 0) {
          const size = alone > 0 ? 1 : this.nextBatchSize();
          const batch = this.pending.slice(0, size);
          try {
            await writeReports(
              this.db,
              this.variants,
              batch.map((held) => held.report),
            );
            written += size;
          } catch (error) {
            if (isDatabaseUnreachable(error)) return;
            if (size > 1) {
              alone = size;
              continue;
            }
            // Not an outage: this report cannot be written (logged, not retried for ever).
            this.log.error({ err: error }, 'a held usage report could not be written; dropped');
          }
          if (alone > 0) alone--;
          this.pending.splice(0, size);
          for (const held of batch) this.pendingBytes -= held.bytes;
        }
      } finally {
        if (written > 0) {
          this.log.info({ written, held: this.pending.length }, 'held usage reports written');
        }
        this.flushing = undefined;
      }
    })();
    return this.flushing;
  }

  /** How many of the first held reports share its environment, at most `FLUSH_BATCH`. */
  private nextBatchSize(): number {
    const { environment } = this.pending[0]!.report;
    const limit = Math.min(FLUSH_BATCH, this.pending.length);
    let size = 1;
    while (size < limit && this.pending[size]!.report.environment === environment) size++;
    return size;
  }
}
