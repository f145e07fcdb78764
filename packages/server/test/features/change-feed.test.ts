// The change feed reads a burst of writes together: every frame it fans out costs each connected
// SDK a pass over its whole configuration, so writes notified soon after a read wait for the
// rest of the burst, while the first write after a quiet spell is read at once.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pino from 'pino';
import type { Database } from '../../src/db/database.js';
import { migrate } from '../../src/db/migrate.js';
import { ChangeFeed } from '../../src/features/client-api/change-feed.js';
import { CHANGE_LOG_CHANNEL } from '../../src/features/client-api/change-log.js';
import type { StoredEvent } from '../../src/features/client-api/change-log-reads.js';
import { RevisionTracker } from '../../src/revision.js';
import { backends } from '../helpers.js';

/** Reads woken within this long of the last are held back (far above a write's duration). */
const COALESCE_MS = 2000;

for (const backend of backends) {
  describe(`the change feed on ${backend.name}`, () => {
    let db: Database;
    let cleanup: () => Promise<void>;
    let feed: ChangeFeed;
    const batches: string[][] = [];
    let delivered: () => void = () => {};

    /** A committed change of `flag`, notified as every write notifies. */
    async function write(flag: string): Promise<void> {
      await db.transaction(async (tx) => {
        await tx.query(
          `INSERT INTO client_change_events (environment, project, feature_name, event)
           VALUES ('development', 'default', $1, $2::jsonb)`,
          [flag, JSON.stringify({ type: 'feature-removed', featureName: flag })],
        );
        await tx.query('UPDATE revision SET config = config + 1 WHERE id = 1');
        await tx.query('SELECT pg_notify($1, $2)', [CHANGE_LOG_CHANNEL, 'config']);
      });
    }

    const nextBatch = () =>
      new Promise<void>((resolve) => {
        delivered = resolve;
      });

    before(async () => {
      ({ db, cleanup } = await backend.open());
      await migrate(db);
      feed = new ChangeFeed(db, new RevisionTracker(db, 60_000), pino({ level: 'silent' }), {
        checkMs: 60_000,
        retryMs: 1000,
        eventsPerEnvironment: 1000,
        compactEveryMs: 3_600_000,
        coalesceMs: COALESCE_MS,
      });
      await feed.start();
      feed.onEvents((events: readonly StoredEvent[]) => {
        batches.push(events.map((event) => event.featureName ?? ''));
        delivered();
      });
    });
    after(async () => {
      await feed.stop();
      await cleanup();
    });

    it('reads the first write after a quiet spell at once, and the writes right after it together', async () => {
      const first = nextBatch();
      const start = performance.now();
      await write('flag-1');
      await first;
      assert.ok(performance.now() - start < COALESCE_MS, 'the first write was not held back');
      assert.deepEqual(batches, [['flag-1']]);

      const second = nextBatch();
      await write('flag-2');
      // Long enough for a feed that reads each notification at once to have read flag-2 alone.
      await sleep(300);
      await write('flag-3');
      await second;
      assert.deepEqual(
        batches,
        [['flag-1'], ['flag-2', 'flag-3']],
        'the burst reached the subscribers as one batch',
      );
    });
  });
}
