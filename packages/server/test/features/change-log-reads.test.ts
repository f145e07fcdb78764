// Reading the client change log: events come back in id order, also where ids gain a digit
// (the ids are sent as text, and must not be ordered as text).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Database } from '../../src/db/database.js';
import { migrate } from '../../src/db/migrate.js';
import { readEventsSince } from '../../src/features/client-api/change-log-reads.js';
import { backends } from '../helpers.js';

for (const backend of backends) {
  describe(`the change log's reads on ${backend.name}`, () => {
    let db: Database;
    let cleanup: () => Promise<void>;

    before(async () => {
      ({ db, cleanup } = await backend.open());
      await migrate(db);
      for (const id of [98, 99, 100, 101, 1000]) {
        await db.query(
          `INSERT INTO client_change_events (id, environment, project, feature_name, event)
           VALUES ($1, 'development', 'default', $2, $3::jsonb)`,
          [
            id,
            `flag-${id}`,
            JSON.stringify({ type: 'feature-removed', featureName: `flag-${id}` }),
          ],
        );
      }
    });
    after(() => cleanup());

    it('answers events in id order across 99 → 100 → 1000', async () => {
      const events = await readEventsSince(db, 97, 10);
      assert.deepEqual(
        events.map((event) => event.id),
        [98, 99, 100, 101, 1000],
      );
      const limited = await readEventsSince(db, 98, 2, 'development');
      assert.deepEqual(
        limited.map((event) => event.id),
        [99, 100],
      );
    });
  });
}
