import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { Database, Queryable, Transaction } from '../../src/db/database.js';
import { migrate } from '../../src/db/migrate.js';
import { bumpConfigRevision } from '../../src/revision.js';
import { admin, backends, startApp } from '../helpers.js';

const FLAGS = 10_000;

/** `db`, counting every row its queries return (in transactions too) and keeping their parameters. */
function countingRows(db: Database) {
  let rows = 0;
  let parameters: unknown[] = [];
  const counted = (q: Queryable): Queryable => ({
    async query<Row>(sql: string, params?: readonly unknown[]) {
      parameters.push(...(params ?? []));
      const result = await q.query<Row>(sql, params);
      rows += result.length;
      return result;
    },
    exec: (sql) => q.exec(sql),
  });
  const wrapped: Database = {
    kind: db.kind,
    ...counted(db),
    transaction: (fn) =>
      db.transaction((tx) =>
        fn({
          ...counted(tx),
          // Sent statements' results are never read: only their parameters count.
          send(sql, params) {
            parameters.push(...(params ?? []));
            tx.send(sql, params);
          },
        } satisfies Transaction),
      ),
    listen: (channel, onNotify, retryMs) => db.listen(channel, onNotify, retryMs),
    close: () => db.close(),
  };
  return {
    db: wrapped,
    rowsRead: () => rows,
    /** Every parameter of the queries since `reset`. */
    parametersSent: () => parameters,
    reset: () => {
      rows = 0;
      parameters = [];
    },
  };
}

/** The cost of a config write is that of what it changed, not of the whole configuration. */
for (const backend of backends) {
  describe(`the scope of a config write on ${backend.name}`, () => {
    let cleanup: () => Promise<void>;
    let app: FastifyInstance;
    let counting: ReturnType<typeof countingRows>;

    before(async () => {
      const opened = await backend.open();
      cleanup = opened.cleanup;
      await migrate(opened.db);
      await opened.db.exec(`
        INSERT INTO environments (name, type, sort_order) VALUES ('staging', 'development', 3);
        INSERT INTO project_environments VALUES ('default', 'staging');
        INSERT INTO features (name, project)
          SELECT 'flag-' || lpad(i::text, 5, '0'), 'default' FROM generate_series(1, ${FLAGS}) i;
        INSERT INTO feature_environments (feature_name, environment, enabled)
          SELECT f.name, e.name, true FROM features f CROSS JOIN environments e;
        INSERT INTO feature_strategies (feature_name, environment, strategy_name)
          SELECT f.name, e.name, 'default' FROM features f CROSS JOIN environments e;`);
      counting = countingRows(opened.db);
      // The first start records the baseline of 10,000 flags in 3 environments.
      app = await startApp(counting.db);
    });
    after(async () => {
      await app.close();
      await cleanup();
    });

    it('a toggle reads and diffs the toggled flag only, and still reaches the change log', async () => {
      counting.reset();
      const response = await app.inject({
        method: 'POST',
        url: '/api/admin/projects/default/features/flag-05000/environments/production/off',
        headers: admin,
      });
      assert.equal(response.statusCode, 200, response.body);
      const rows = counting.rowsRead();
      // One flag in three environments, its strategies and state rows: tens of rows, not 10,000s.
      assert.ok(rows < 100, `the toggle read ${rows} rows`);
      const events = await counting.db.query<{ environment: string; feature_name: string }>(
        `SELECT environment, feature_name FROM client_change_events ORDER BY id`,
      );
      assert.deepEqual(events, [{ environment: 'production', feature_name: 'flag-05000' }]);
    });

    it('a toggle or a variants write diffs its own environment only', async () => {
      const before = await counting.db.query<{ id: string }>(
        'SELECT max(id)::text AS id FROM client_change_events',
      );
      for (const [method, path, payload] of [
        ['POST', 'environments/staging/off', undefined],
        [
          'PUT',
          'environments/staging/variants',
          [{ name: 'blue', weight: 1000, stickiness: 'default', weightType: 'variable' }],
        ],
      ] as const) {
        counting.reset();
        const response = await app.inject({
          method,
          url: `/api/admin/projects/default/features/flag-04000/${path}`,
          headers: admin,
          ...(payload ? { payload } : {}),
        });
        assert.equal(response.statusCode, 200, response.body);
        const otherEnvironments = counting
          .parametersSent()
          .filter((value) => value === 'development' || value === 'production');
        assert.deepEqual(otherEnvironments, [], `${method} ${path} queried other environments`);
      }
      const events = await counting.db.query<{ environment: string; feature_name: string }>(
        'SELECT environment, feature_name FROM client_change_events WHERE id > $1 ORDER BY id',
        [before[0]!.id],
      );
      assert.deepEqual(events, [
        { environment: 'staging', feature_name: 'flag-04000' },
        { environment: 'staging', feature_name: 'flag-04000' },
      ]);
    });

    it('a write that names no flags still diffs everything (the measure sees it)', async () => {
      counting.reset();
      await counting.db.transaction((tx) => bumpConfigRevision(tx));
      assert.ok(counting.rowsRead() >= 3 * FLAGS, `read ${counting.rowsRead()} rows`);
    });
  });
}
