import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { migrate } from '../../src/db/migrate.js';
import { migrations } from '../../src/db/migrations/index.js';
import { admin, backends, startApp } from '../helpers.js';

/** The built-in context fields as unleash-server 8.2 answers them at `GET /api/admin/context`. */
const BUILT_IN = [
  {
    name: 'environment',
    description: 'Allows you to constrain on application environment',
    stickiness: false,
    sortOrder: 0,
    legalValues: [],
  },
  {
    name: 'userId',
    description: 'Allows you to constrain on userId',
    stickiness: false,
    sortOrder: 1,
    legalValues: [],
  },
  {
    name: 'appName',
    description: 'Allows you to constrain on application name',
    stickiness: false,
    sortOrder: 2,
    legalValues: [],
  },
  {
    name: 'currentTime',
    description: 'Allows you to constrain on date values',
    stickiness: false,
    sortOrder: 3,
    legalValues: [],
  },
  {
    name: 'sessionId',
    description: 'Allows you to constrain on sessionId',
    stickiness: true,
    sortOrder: 4,
    legalValues: [],
  },
];

const VERSION = migrations.find(
  (migration) => migration.name === 'built-in-context-fields',
)!.version;

for (const backend of backends) {
  describe(`built-in context fields on ${backend.name}`, () => {
    it('a new database has unleash-server’s built-in context fields and the simple tag type', async () => {
      const { db, cleanup } = await backend.open();
      try {
        const app = await startApp(db);
        try {
          const context = await app.inject({ url: '/api/admin/context', headers: admin });
          assert.equal(context.statusCode, 200);
          assert.deepEqual(context.json(), BUILT_IN);
          const userId = await app.inject({ url: '/api/admin/context/userId', headers: admin });
          assert.deepEqual(userId.json(), BUILT_IN[1]);
          const tagTypes = await app.inject({ url: '/api/admin/tag-types', headers: admin });
          assert.deepEqual(
            tagTypes.json().tagTypes.map((type: { name: string }) => type.name),
            ['simple'],
          );
        } finally {
          await app.close();
        }
      } finally {
        await cleanup();
      }
    });

    it('an existing database gets them by migration; a field an operator made keeps what it has', async () => {
      const { db, cleanup } = await backend.open();
      try {
        await migrate(
          db,
          migrations.filter((migration) => migration.version < VERSION),
        );
        await db.query(
          `INSERT INTO context_fields (name, description, stickiness, sort_order, legal_values)
           VALUES ('userId', 'Our customers', true, 7, '[{"value":"u-1"}]'::jsonb),
                  ('region', NULL, false, 9, '[]'::jsonb)`,
        );
        assert.deepEqual(
          await migrate(db),
          migrations.filter((migration) => migration.version >= VERSION).map((m) => m.version),
        );
        const app = await startApp(db);
        try {
          const context = await app.inject({ url: '/api/admin/context', headers: admin });
          const byName = new Map(
            (context.json() as { name: string }[]).map((field) => [field.name, field]),
          );
          assert.deepEqual([...byName.keys()].sort(), [
            'appName',
            'currentTime',
            'environment',
            'region',
            'sessionId',
            'userId',
          ]);
          assert.deepEqual(byName.get('userId'), {
            name: 'userId',
            description: 'Our customers',
            stickiness: true,
            sortOrder: 7,
            legalValues: [{ value: 'u-1' }],
          });
          for (const field of BUILT_IN.filter((built) => built.name !== 'userId')) {
            assert.deepEqual(byName.get(field.name), field);
          }
          // Written by a migration, not by anyone: no event.
          const events = await db.query("SELECT 1 FROM events WHERE type LIKE 'context-field-%'");
          assert.equal(events.length, 0);
        } finally {
          await app.close();
        }
      } finally {
        await cleanup();
      }
    });

    it('a built-in field is an ordinary one: edited, given legal values, deleted', async () => {
      const { db, cleanup } = await backend.open();
      try {
        const app = await startApp(db);
        try {
          const put = await app.inject({
            method: 'PUT',
            url: '/api/admin/context/appName',
            headers: admin,
            payload: { description: 'Our apps', legalValues: [{ value: 'web' }] },
          });
          assert.equal(put.statusCode, 200, put.body);
          const read = await app.inject({ url: '/api/admin/context/appName', headers: admin });
          assert.deepEqual(read.json().legalValues, [{ value: 'web' }]);
          const taken = await app.inject({
            method: 'POST',
            url: '/api/admin/context',
            headers: admin,
            payload: { name: 'sessionId' },
          });
          assert.equal(taken.statusCode, 409);
          const deleted = await app.inject({
            method: 'DELETE',
            url: '/api/admin/context/currentTime',
            headers: admin,
          });
          assert.equal(deleted.statusCode, 200);
        } finally {
          await app.close();
        }
      } finally {
        await cleanup();
      }
    });
  });
}
