import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pino from 'pino';
import { DatabaseAvailability } from '../../src/db/availability.js';
import { openPglite } from '../../src/db/database.js';
import { ApiError } from '../../src/errors.js';
import type { DefinedVariantsLookup } from '../../src/features/metrics/defined-variants.js';
import {
  heldBytes,
  UsageBuffer,
  type UsageReport,
} from '../../src/features/metrics/usage-buffer.js';

/** A frontend report as large as the schema lets one be: 10,000 flag names of 255 characters. */
function hostileReport(i: number): UsageReport {
  return {
    environment: 'development',
    clientIp: '127.0.0.1',
    instances: [],
    counts: Array.from({ length: 10_000 }, (_, flag) => ({
      featureName: `${i}-${flag}-`.padEnd(255, 'x'),
      appName: `app-${i}`.padEnd(255, 'y'),
      atMs: Date.now(),
      yes: 1,
      no: 0,
      variants: { [`v-${flag}`.padEnd(255, 'z')]: 1 },
    })),
  };
}

// Reports held while the database is unreachable come from public frontend tokens too: the
// buffer is bounded by their estimated memory, not only by their number (issue 40).
describe('usage reports held during a database outage', () => {
  it('are refused with 503 once they would take more than metricsBufferMaxBytes', async () => {
    const db = await openPglite();
    const log = pino({ level: 'silent' });
    const availability = new DatabaseAvailability(db, log, 60_000);
    try {
      availability.markUnreachable(Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }));
      const maxBytes = 32 * 1024 * 1024;
      // Never asked while the database is unreachable: a held report is only written later.
      const variants = {} as DefinedVariantsLookup;
      const buffer = new UsageBuffer(db, availability, 10_000, log, variants, maxBytes);
      const perReport = heldBytes(hostileReport(0));
      assert.ok(perReport > 10_000 * 255 * 2, `${perReport} bytes estimated for one report`);
      const statuses: number[] = [];
      for (let i = 0; i < 10; i++) {
        try {
          await buffer.record(hostileReport(i));
          statuses.push(202);
        } catch (error) {
          assert.ok(
            error instanceof ApiError && error.code === 'DATABASE_UNAVAILABLE',
            String(error),
          );
          statuses.push(error.status);
        }
      }
      const held = Math.floor(maxBytes / perReport);
      assert.deepEqual(statuses, [
        ...Array.from({ length: held }, () => 202),
        ...Array.from({ length: 10 - held }, () => 503),
      ]);
      assert.equal(buffer.size, held);
      assert.ok(buffer.bytes <= maxBytes, `${buffer.bytes} bytes held`);
    } finally {
      availability.stop();
      await db.close();
    }
  });
});
