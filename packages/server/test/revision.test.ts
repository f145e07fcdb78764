import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Database } from '../src/db/database.js';
import { RevisionTracker } from '../src/revision.js';

/** A database whose revision row is `row`, counting the reads of it. */
function revisionRow(row: { config: number; tokens: number }) {
  let reads = 0;
  const db = {
    async query() {
      reads++;
      return [row];
    },
  } as unknown as Database;
  return { db, reads: () => reads, row };
}

describe('RevisionTracker', () => {
  it('takes the revisions a write of its own committed, without reading them again', async () => {
    const stored = revisionRow({ config: 3, tokens: 1 });
    const clock = { now: 1_000 };
    const tracker = new RevisionTracker(stored.db, 1_000, () => clock.now);
    assert.deepEqual(await tracker.current(), { config: 3, tokens: 1 });
    assert.equal(stored.reads(), 1);
    tracker.committed({ config: 4, tokens: 1 });
    assert.deepEqual(await tracker.current(), { config: 4, tokens: 1 });
    assert.equal(stored.reads(), 1);
    // Once `ttlMs` has passed, the row is read again.
    stored.row.config = 5;
    clock.now += 1_000;
    assert.deepEqual(await tracker.current(), { config: 5, tokens: 1 });
    assert.equal(stored.reads(), 2);
  });

  it('reads again rather than take revisions older than those it knows', async () => {
    const stored = revisionRow({ config: 7, tokens: 2 });
    const tracker = new RevisionTracker(stored.db, 60_000);
    assert.deepEqual(await tracker.current(), { config: 7, tokens: 2 });
    // A write that committed 6 reports after 7 was read: 6 must not become current.
    tracker.committed({ config: 6, tokens: 2 });
    assert.deepEqual(await tracker.current(), { config: 7, tokens: 2 });
    assert.equal(stored.reads(), 2);
  });
});
