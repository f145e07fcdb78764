import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { openPglite } from '../../src/db/database.js';
import { migrate } from '../../src/db/migrate.js';
import { migrations } from '../../src/db/migrations/index.js';
import { admin, backends, DEV_TOKEN, startApp } from '../helpers.js';

const importOne = (name: string, enabled: boolean) => ({
  project: 'default',
  environment: 'development',
  data: {
    features: [{ name }],
    featureStrategies: [{ name: 'default', featureName: name }],
    featureEnvironments: [{ name, enabled }],
    tagTypes: [],
  },
});

for (const backend of backends) {
  describe(`storage on ${backend.name}`, () => {
    it('migrates once, records versions, seeds the defaults; concurrent starts agree', async () => {
      const { db, cleanup } = await backend.open();
      try {
        const [first, second] = await Promise.all([migrate(db), migrate(db)]);
        assert.deepEqual(
          [...first!, ...second!],
          migrations.map((m) => m.version),
        );
        assert.deepEqual(await migrate(db), []);
        const versions = await db.query<{ version: number }>(
          'SELECT version FROM schema_migrations',
        );
        assert.deepEqual(
          versions.map((row) => row.version),
          migrations.map((m) => m.version),
        );
        const environments = await db.query(
          'SELECT name, type FROM environments ORDER BY sort_order',
        );
        assert.deepEqual(environments, [
          { name: 'development', type: 'development' },
          { name: 'production', type: 'production' },
        ]);
        const projects = await db.query('SELECT id FROM projects');
        assert.deepEqual(projects, [{ id: 'default' }]);
        const roles = await db.query<{ name: string }>(
          "SELECT name FROM roles WHERE type = 'root' ORDER BY id",
        );
        assert.deepEqual(
          roles.map((row) => row.name),
          ['Admin', 'Editor', 'Viewer'],
        );
      } finally {
        await cleanup();
      }
    });

    it('rolls a failing transaction back completely', async () => {
      const { db, cleanup } = await backend.open();
      try {
        await migrate(db);
        await assert.rejects(
          db.transaction(async (tx) => {
            await tx.query("INSERT INTO projects (id, name) VALUES ('p1', 'P1')");
            await tx.query("INSERT INTO projects (id, name) VALUES ('p1', 'again')");
          }),
        );
        assert.deepEqual(await db.query("SELECT id FROM projects WHERE id = 'p1'"), []);
      } finally {
        await cleanup();
      }
    });

    it('runs statements sent without waiting in order, and fails the transaction with the first failure', async () => {
      const { db, cleanup } = await backend.open();
      try {
        await migrate(db);
        // Sent statements run in order with the queries around them, and commit with them.
        const seen = await db.transaction(async (tx) => {
          tx.send("INSERT INTO projects (id, name) VALUES ('sent-1', 'One')");
          tx.send('UPDATE projects SET name = $1 WHERE id = $2', ['Renamed', 'sent-1']);
          return tx.query<{ name: string }>("SELECT name FROM projects WHERE id = 'sent-1'");
        });
        assert.deepEqual(seen, [{ name: 'Renamed' }]);
        assert.equal((await db.query("SELECT 1 FROM projects WHERE id = 'sent-1'")).length, 1);
        // A sent statement that fails: the next query throws its error, and nothing commits.
        await assert.rejects(
          db.transaction(async (tx) => {
            tx.send("INSERT INTO projects (id, name) VALUES ('sent-2', 'Two')");
            tx.send("INSERT INTO projects (id, name) VALUES ('sent-2', 'Clash')");
            await tx.query('SELECT 1');
          }),
          (error: { code?: string }) => error.code === '23505',
        );
        // Failing only at the commit (nothing awaited after it) still fails the transaction.
        await assert.rejects(
          db.transaction(async (tx) => {
            tx.send("INSERT INTO projects (id, name) VALUES ('sent-3', 'Three')");
            tx.send("INSERT INTO projects (id, name) VALUES ('sent-3', 'Clash')");
          }),
          (error: { code?: string }) => error.code === '23505',
        );
        // Reads issued together: whichever the caller sees, it is the first failure (a NUL byte),
        // not the aborted transaction's error of the reads answered after it.
        await assert.rejects(
          db.transaction(async (tx) => {
            const indirect = async () =>
              (await tx.query('SELECT 1 FROM projects WHERE id = $1', ['\u0000'])).length;
            await Promise.all([indirect(), tx.query('SELECT 1'), tx.query('SELECT 2')]);
          }),
          (error: { code?: string }) => error.code === '22021',
        );
        const left = await db.query<{ id: string }>(
          "SELECT id FROM projects WHERE id LIKE 'sent-%' ORDER BY id",
        );
        assert.deepEqual(left, [{ id: 'sent-1' }]);
      } finally {
        await cleanup();
      }
    });

    it('shares one database between two server instances (revision check interval)', async () => {
      const { db, cleanup } = await backend.open();
      const one = await startApp(db, { revisionCheckMs: 50 });
      const two = await startApp(db, { revisionCheckMs: 50 });
      try {
        const read = async () => {
          const response = await two.inject({
            url: '/api/client/features',
            headers: { authorization: DEV_TOKEN },
          });
          return response
            .json()
            .features.map((f: { name: string; enabled: boolean }) => [f.name, f.enabled]);
        };
        assert.deepEqual(await read(), []);
        const imported = await one.inject({
          method: 'POST',
          url: '/api/admin/features-batch/import',
          headers: admin,
          payload: importOne('shared-flag', true),
        });
        assert.equal(imported.statusCode, 200);
        await new Promise((resolve) => setTimeout(resolve, 80));
        assert.deepEqual(await read(), [['shared-flag', true]]);
        // Tokens created on one instance work on the other after the interval.
        const created = await one.inject({
          method: 'POST',
          url: '/api/admin/api-tokens',
          headers: admin,
          payload: { tokenName: 'shared', type: 'client', environment: 'development' },
        });
        await new Promise((resolve) => setTimeout(resolve, 80));
        const response = await two.inject({
          url: '/api/client/features',
          headers: { authorization: created.json().secret },
        });
        assert.equal(response.statusCode, 200);
      } finally {
        await one.close();
        await two.close();
        await cleanup();
      }
    });
  });
}

describe('PGlite data directory', () => {
  it('keeps the data across restarts', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'flags-server-'));
    try {
      const first = await openPglite(join(dir, 'data'));
      const app = await startApp(first);
      const imported = await app.inject({
        method: 'POST',
        url: '/api/admin/features-batch/import',
        headers: admin,
        payload: importOne('persisted-flag', true),
      });
      assert.equal(imported.statusCode, 200);
      await app.close();
      await first.close();

      const second = await openPglite(join(dir, 'data'));
      const again = await startApp(second);
      try {
        const response = await again.inject({
          url: '/api/client/features',
          headers: { authorization: DEV_TOKEN },
        });
        assert.deepEqual(
          response
            .json()
            .features.map((f: { name: string; enabled: boolean }) => [f.name, f.enabled]),
          [['persisted-flag', true]],
        );
        const versions = await second.query('SELECT version FROM schema_migrations');
        assert.equal(versions.length, migrations.length);
      } finally {
        await again.close();
        await second.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
