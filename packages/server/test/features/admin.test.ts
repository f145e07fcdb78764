import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { Database } from '../../src/db/database.js';
import { admin, backends, DEV_TOKEN, dump, startApp } from '../helpers.js';

/**
 * The configuration an import refers to but does not create (projects, environments, segments,
 * custom strategies), the context fields an import creates, and archiving a flag: every answer of
 * these admin routes, whole.
 */

const configRevision = async (db: Database) =>
  (await db.query<{ config: number }>('SELECT config::int AS config FROM revision'))[0]!.config;

const links = async (db: Database, column: 'project_id' | 'environment_name', value: string) =>
  (
    await db.query<{ project_id: string; environment_name: string }>(
      `SELECT project_id, environment_name FROM project_environments WHERE ${column} = $1
        ORDER BY project_id, environment_name`,
      [value],
    )
  ).map((row) => [row.project_id, row.environment_name]);

for (const backend of backends) {
  describe(`admin configuration routes on ${backend.name}`, () => {
    let db: Database;
    let cleanup: () => Promise<void>;
    let app: FastifyInstance;

    const post = (url: string, payload: object, headers: Record<string, string> = admin) =>
      app.inject({ method: 'POST', url, headers, payload });
    const get = (url: string, headers: Record<string, string> = admin) =>
      app.inject({ url, headers });

    before(async () => {
      ({ db, cleanup } = await backend.open());
      app = await startApp(db);
    });
    after(async () => {
      await app.close();
      await cleanup();
    });

    it('creates a project linked to every environment, and refuses it twice', async () => {
      const revision = await configRevision(db);
      const created = await post('/api/admin/projects', { id: 'mobile', description: 'Apps' });
      assert.equal(created.statusCode, 201);
      assert.deepEqual(created.json(), { id: 'mobile', name: 'mobile', description: 'Apps' });
      assert.equal(await configRevision(db), revision + 1);
      assert.deepEqual(await links(db, 'project_id', 'mobile'), [
        ['mobile', 'development'],
        ['mobile', 'production'],
      ]);

      const named = await post('/api/admin/projects', { id: 'web', name: 'Web' });
      assert.deepEqual(named.json(), { id: 'web', name: 'Web', description: null });

      const listed = await get('/api/admin/projects');
      assert.equal(listed.statusCode, 200);
      assert.deepEqual(listed.json(), {
        projects: [
          { id: 'default', name: 'Default', description: 'Default project' },
          { id: 'mobile', name: 'mobile', description: 'Apps' },
          { id: 'web', name: 'Web', description: null },
        ],
      });

      const before = await dump(db);
      const again = await post('/api/admin/projects', { id: 'mobile' });
      assert.equal(again.statusCode, 409);
      assert.deepEqual(again.json(), {
        code: 'NAME_EXISTS',
        name: 'NameExistsError',
        message: 'Project "mobile" already exists.',
        details: [{ message: 'Project "mobile" already exists.' }],
      });
      const badId = await post('/api/admin/projects', { id: 'no spaces' });
      assert.equal(badId.statusCode, 400);
      assert.equal(badId.json().name, 'BadDataError');
      assert.deepEqual(await dump(db), before);
    });

    it('creates an environment linked to every project, and refuses it twice', async () => {
      const revision = await configRevision(db);
      const created = await post('/api/admin/environments', { name: 'staging', type: 'test' });
      assert.equal(created.statusCode, 201);
      assert.deepEqual(created.json(), {
        name: 'staging',
        type: 'test',
        sortOrder: 0,
        enabled: true,
      });
      assert.equal(await configRevision(db), revision + 1);
      const projects = (await get('/api/admin/projects')).json().projects as { id: string }[];
      assert.deepEqual(
        await links(db, 'environment_name', 'staging'),
        projects.map((project) => [project.id, 'staging']).sort(),
      );

      await post('/api/admin/environments', { name: 'qa', type: 'test', sortOrder: 3 });
      const listed = await get('/api/admin/environments');
      assert.equal(listed.statusCode, 200);
      assert.deepEqual(listed.json(), {
        version: 1,
        environments: [
          { name: 'staging', type: 'test', sortOrder: 0, enabled: true },
          { name: 'development', type: 'development', sortOrder: 1, enabled: true },
          { name: 'production', type: 'production', sortOrder: 2, enabled: true },
          { name: 'qa', type: 'test', sortOrder: 3, enabled: true },
        ],
      });

      const before = await dump(db);
      const again = await post('/api/admin/environments', { name: 'qa', type: 'other' });
      assert.equal(again.statusCode, 409);
      assert.equal(again.json().message, 'Environment "qa" already exists.');
      const noType = await post('/api/admin/environments', { name: 'ci' });
      assert.equal(noType.statusCode, 400);
      assert.deepEqual(await dump(db), before);
    });

    it('creates segments, checking their project, and refuses a name twice', async () => {
      const constraints = [
        {
          contextName: 'userId',
          operator: 'IN',
          values: ['a'],
          inverted: false,
          caseInsensitive: false,
        },
      ];
      const revision = await configRevision(db);
      const created = await post('/api/admin/segments', {
        name: 'testers',
        description: 'QA',
        constraints,
      });
      assert.equal(created.statusCode, 201);
      const { id } = created.json();
      assert.equal(typeof id, 'number');
      assert.deepEqual(created.json(), { id, name: 'testers', description: 'QA', constraints });
      assert.equal(await configRevision(db), revision + 1);

      const scoped = await post('/api/admin/segments', {
        name: 'mobile-testers',
        project: 'mobile',
        constraints: [],
      });
      assert.equal(scoped.statusCode, 201);
      assert.deepEqual(scoped.json(), {
        id: scoped.json().id,
        name: 'mobile-testers',
        project: 'mobile',
        constraints: [],
      });

      const listed = await get('/api/admin/segments');
      assert.equal(listed.statusCode, 200);
      assert.deepEqual(listed.json(), {
        segments: [
          { id, name: 'testers', description: 'QA', project: null, constraints },
          {
            id: scoped.json().id,
            name: 'mobile-testers',
            description: null,
            project: 'mobile',
            constraints: [],
          },
        ],
      });

      const before = await dump(db);
      const unknownProject = await post('/api/admin/segments', {
        name: 'nowhere',
        project: 'nope',
        constraints: [],
      });
      assert.equal(unknownProject.statusCode, 400);
      assert.deepEqual(unknownProject.json(), {
        code: 'BAD_DATA',
        name: 'BadDataError',
        message: 'Project "nope" does not exist.',
        details: [{ message: 'Project "nope" does not exist.' }],
      });
      const again = await post('/api/admin/segments', { name: 'testers', constraints: [] });
      assert.equal(again.statusCode, 409);
      assert.equal(again.json().message, 'Segment "testers" already exists.');
      assert.deepEqual(await dump(db), before);
    });

    it('creates a custom strategy listed after the built-in ones, and refuses it twice', async () => {
      const revision = await configRevision(db);
      const parameters = [{ name: 'percent', type: 'percentage' }];
      const created = await post('/api/admin/strategies', { name: 'custom', parameters });
      assert.equal(created.statusCode, 201);
      assert.deepEqual(created.json(), { name: 'custom', parameters });
      // The client API does not serve strategy definitions: no revision bump.
      assert.equal(await configRevision(db), revision);

      const listed = await get('/api/admin/strategies');
      assert.equal(listed.statusCode, 200);
      const { version, strategies } = listed.json();
      assert.equal(version, 1);
      assert.deepEqual(
        strategies.map((s: { name: string; editable: boolean }) => [s.name, s.editable]),
        [
          ['applicationHostname', false],
          ['default', false],
          ['flexibleRollout', false],
          ['gradualRolloutRandom', false],
          ['gradualRolloutSessionId', false],
          ['gradualRolloutUserId', false],
          ['remoteAddress', false],
          ['userWithId', false],
          ['custom', true],
        ],
      );
      assert.deepEqual(strategies.at(-1), {
        name: 'custom',
        displayName: null,
        title: null,
        description: null,
        parameters,
        editable: true,
        deprecated: false,
      });

      const before = await dump(db);
      const again = await post('/api/admin/strategies', { name: 'custom', title: 'Twice' });
      assert.equal(again.statusCode, 409);
      assert.equal(again.json().message, 'Strategy "custom" already exists.');
      assert.deepEqual(await dump(db), before);
    });

    it('lists the context fields an import created', async () => {
      const builtIn = ['appName', 'currentTime', 'environment', 'sessionId', 'userId'];
      const names = (fields: { name: string }[]) => fields.map((field) => field.name).sort();
      assert.deepEqual(names((await get('/api/admin/context')).json()), builtIn);
      const imported = await post('/api/admin/features-batch/import', {
        project: 'default',
        environment: 'development',
        data: {
          features: [{ name: 'context-user' }],
          featureStrategies: [],
          tagTypes: [],
          contextFields: [
            { name: 'tier', sortOrder: 2, legalValues: [{ value: 'gold' }] },
            { name: 'region', description: 'Where', stickiness: true, sortOrder: 1 },
          ],
        },
      });
      assert.equal(imported.statusCode, 200, imported.body);
      const listed = await get('/api/admin/context');
      assert.equal(listed.statusCode, 200);
      assert.deepEqual(
        listed.json().filter((field: { name: string }) => !builtIn.includes(field.name)),
        [
          {
            name: 'region',
            description: 'Where',
            stickiness: true,
            sortOrder: 1,
            legalValues: [],
          },
          {
            name: 'tier',
            description: null,
            stickiness: false,
            sortOrder: 2,
            legalValues: [{ value: 'gold' }],
          },
        ],
      );
    });

    it('archives an active flag of a project once', async () => {
      const imported = await post('/api/admin/features-batch/import', {
        project: 'default',
        environment: 'development',
        data: { features: [{ name: 'to-archive' }], featureStrategies: [], tagTypes: [] },
      });
      assert.equal(imported.statusCode, 200, imported.body);
      const archive = (project: string) =>
        app.inject({
          method: 'DELETE',
          url: `/api/admin/projects/${project}/features/to-archive`,
          headers: admin,
        });

      // A refused archive changes nothing, not even the config revision (the SDKs' ETags).
      const before = await dump(db);
      const elsewhere = await archive('mobile');
      assert.equal(elsewhere.statusCode, 404);
      assert.deepEqual(await dump(db), before);

      const revision = await configRevision(db);
      const archived = await archive('default');
      assert.equal(archived.statusCode, 202);
      assert.equal(archived.body, '');
      assert.equal(await configRevision(db), revision + 1);
      const [row] = await db.query<{ archived: boolean }>(
        `SELECT archived_at IS NOT NULL AS archived FROM features WHERE name = 'to-archive'`,
      );
      assert.equal(row!.archived, true);

      const archivedState = await dump(db);
      const again = await archive('default');
      assert.equal(again.statusCode, 404);
      assert.deepEqual(await dump(db), archivedState);
      assert.deepEqual(again.json(), {
        code: 'NOT_FOUND',
        name: 'NotFoundError',
        message: 'There is no active feature "to-archive" in project "default".',
        details: [{ message: 'There is no active feature "to-archive" in project "default".' }],
      });
    });

    it('answers only admin tokens', async () => {
      const routes: [string, string][] = [
        ['GET', '/api/admin/projects'],
        ['POST', '/api/admin/projects'],
        ['GET', '/api/admin/environments'],
        ['POST', '/api/admin/environments'],
        ['GET', '/api/admin/segments'],
        ['POST', '/api/admin/segments'],
        ['GET', '/api/admin/strategies'],
        ['POST', '/api/admin/strategies'],
        ['GET', '/api/admin/context'],
        ['DELETE', '/api/admin/projects/default/features/to-archive'],
      ];
      for (const [method, url] of routes) {
        const none = await app.inject({ method: method as 'GET', url });
        assert.equal(none.statusCode, 401, `${method} ${url}`);
        assert.equal(none.json().name, 'AuthenticationRequired');
        const client = await app.inject({
          method: method as 'GET',
          url,
          headers: { authorization: DEV_TOKEN },
        });
        assert.equal(client.statusCode, 403, `${method} ${url}`);
      }
    });
  });
}
