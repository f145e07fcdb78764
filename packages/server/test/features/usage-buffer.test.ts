import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pino from 'pino';
import { DatabaseAvailability } from '../../src/db/availability.js';
import { type Database, openPglite } from '../../src/db/database.js';
import { migrate } from '../../src/db/migrate.js';
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

/** A report of `yes` evaluations of `steady` by instance `instance` of `checkout`. */
function countReport(
  environment: string,
  clientIp: string,
  instance: string,
  yes: number,
): UsageReport {
  return {
    environment,
    clientIp,
    instances: [
      {
        appName: 'checkout',
        instanceId: instance,
        sdkVersion: `sdk-${yes}`,
        connectionId: null,
        strategies: undefined,
        started: null,
        intervalMs: null,
      },
    ],
    counts: [
      {
        featureName: 'steady',
        appName: 'checkout',
        atMs: Date.parse('2026-03-01T10:00:05Z'),
        yes,
        no: 0,
        variants: undefined,
      },
    ],
  };
}

describe('usage reports held during a database outage, written when it returns', () => {
  it('are written in a few transactions, summed as written one by one; a bad one is dropped alone', async () => {
    const db = await openPglite();
    await migrate(db);
    await db.query("INSERT INTO features (name, project) VALUES ('steady', 'default')");
    const log = pino({ level: 'silent' });
    let transactions = 0;
    const counted: Database = {
      ...db,
      query: db.query,
      exec: db.exec,
      transaction: (fn) => {
        transactions++;
        return db.transaction(fn);
      },
    };
    const availability = new DatabaseAvailability(counted, log, 60_000);
    const variants = { of: async () => () => undefined } as unknown as DefinedVariantsLookup;
    try {
      availability.markUnreachable(Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }));
      const buffer = new UsageBuffer(counted, availability, 10_000, log, variants);
      const reports: UsageReport[] = [];
      for (let i = 0; i < 500; i++) {
        // Two environments in runs of 150; the instance moves to another address half-way.
        const environment = Math.floor(i / 150) % 2 === 0 ? 'development' : 'production';
        reports.push(countReport(environment, i < 250 ? '10.0.0.1' : '10.0.0.2', 'pod-1', i + 1));
      }
      // A count too large for the column: this report alone cannot be written.
      reports.splice(42, 0, {
        ...countReport('development', '10.0.0.1', 'pod-1', 1),
        counts: [
          {
            featureName: 'steady',
            appName: 'checkout',
            atMs: Date.parse('2026-03-01T10:00:05Z'),
            yes: 2 ** 70,
            no: 0,
            variants: undefined,
          },
        ],
      });
      for (const report of reports) await buffer.record(report);
      assert.equal(buffer.size, 501);
      transactions = 0;
      availability.markReachable();
      await buffer.flush();
      assert.equal(buffer.size, 0);
      const totals = await db.query<{ environment: string; yes: number }>(
        'SELECT environment, yes::int AS yes FROM client_metrics ORDER BY environment',
      );
      const expected = (environment: string) =>
        reports
          .slice(0, 42)
          .concat(reports.slice(43))
          .filter((report) => report.environment === environment)
          .reduce((sum, report) => sum + report.counts[0]!.yes, 0);
      assert.deepEqual(totals, [
        { environment: 'development', yes: expected('development') },
        { environment: 'production', yes: expected('production') },
      ]);
      // The latest report of the instance wins, as when written one by one.
      const [instance] = await db.query<{ client_ip: string; sdk_version: string }>(
        `SELECT client_ip, sdk_version FROM client_instances WHERE environment = 'development'`,
      );
      const lastDevelopment = reports
        .filter((report) => report.environment === 'development')
        .at(-1)!;
      assert.equal(instance?.client_ip, lastDevelopment.clientIp);
      assert.equal(instance?.sdk_version, lastDevelopment.instances[0]!.sdkVersion);
      // 501 reports: batches of at most 100 of one environment (6), the refused one one by one
      // (100); one transaction a report would be 501.
      assert.ok(transactions <= 110, `${transactions} transactions`);
    } finally {
      availability.stop();
      await db.close();
    }
  });
});
