import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { ImportRequest } from '@flags/schemas';
import type { FastifyInstance } from 'fastify';
import type { Database } from '../../src/db/database.js';
import { ADMIN_TOKEN, admin, backends, DEV_TOKEN, dump, startApp } from '../helpers.js';

const fixture = (): ImportRequest =>
  JSON.parse(readFileSync(new URL('../fixtures/import-basic.json', import.meta.url), 'utf8'));

async function clientFeatures(app: FastifyInstance, token = DEV_TOKEN) {
  const response = await app.inject({
    url: '/api/client/features?project=default',
    headers: { authorization: token, 'unleash-client-spec': '5.1.0' },
  });
  assert.equal(response.statusCode, 200);
  const body = response.json();
  delete body.meta;
  return body;
}

/** Sets up what the fixture refers to but does not create: the `beta-testers` segment. */
async function seed(app: FastifyInstance) {
  const response = await app.inject({
    method: 'POST',
    url: '/api/admin/segments',
    headers: admin,
    payload: {
      name: 'beta-testers',
      constraints: [{ contextName: 'userId', operator: 'IN', values: ['tester-1'] }],
    },
  });
  assert.equal(response.statusCode, 201);
}

const importPayload = (app: FastifyInstance, payload: object) =>
  app.inject({ method: 'POST', url: '/api/admin/features-batch/import', headers: admin, payload });

for (const backend of backends) {
  describe(`features-batch import on ${backend.name}`, () => {
    let db: Database;
    let cleanup: () => Promise<void>;
    let app: FastifyInstance;

    before(async () => {
      ({ db, cleanup } = await backend.open());
      app = await startApp(db);
      await seed(app);
      // A second project with a flag, for the cross-project rule; an archived flag.
      await app.inject({
        method: 'POST',
        url: '/api/admin/projects',
        headers: admin,
        payload: { id: 'other' },
      });
      const base = fixture();
      const setup = {
        project: 'other',
        environment: 'development',
        data: { features: [{ name: 'owned-elsewhere' }], featureStrategies: [], tagTypes: [] },
      };
      assert.equal((await importPayload(app, setup)).statusCode, 200);
      const archived = {
        project: 'default',
        environment: 'development',
        data: { features: [{ name: 'old-flag' }], featureStrategies: [], tagTypes: [] },
      };
      assert.equal((await importPayload(app, archived)).statusCode, 200);
      const archive = await app.inject({
        method: 'DELETE',
        url: '/api/admin/projects/default/features/old-flag',
        headers: admin,
      });
      assert.equal(archive.statusCode, 202);
      assert.ok(base);
    });
    after(async () => {
      await app.close();
      await cleanup();
    });

    it('imports the document shape and serves it on the client API', async () => {
      const response = await importPayload(app, fixture());
      assert.equal(response.statusCode, 200);
      assert.equal(response.body, '');
      const body = await clientFeatures(app);
      const byName = Object.fromEntries(body.features.map((f: { name: string }) => [f.name, f]));
      assert.deepEqual(Object.keys(byName), [
        'beta-search',
        'checkout-v2',
        'dark-mode',
        'dark-mode-banner',
      ]);
      const segmentId = body.segments[0].id;
      assert.deepEqual(byName['checkout-v2'], {
        name: 'checkout-v2',
        type: 'release',
        enabled: true,
        project: 'default',
        stale: false,
        strategies: [
          {
            name: 'flexibleRollout',
            constraints: [
              {
                contextName: 'region',
                operator: 'IN',
                values: ['eu', 'us'],
                inverted: false,
                caseInsensitive: false,
              },
            ],
            parameters: { rollout: '50', stickiness: 'userId', groupId: 'checkout-v2' },
            variants: [],
            segments: [segmentId],
          },
          {
            name: 'userWithId',
            constraints: [],
            parameters: { userIds: 'alice,bob' },
            variants: [],
          },
        ],
        variants: [],
        description: 'New checkout',
        impressionData: true,
      });
      assert.deepEqual(body.segments, [
        {
          id: segmentId,
          name: 'beta-testers',
          constraints: [{ contextName: 'userId', operator: 'IN', values: ['tester-1'] }],
        },
      ]);
      // Disabled strategies are not served; variants of the environment are.
      assert.deepEqual(byName['beta-search'].strategies, []);
      assert.equal(byName['dark-mode'].variants[0].name, 'blue');
      assert.equal(byName['dark-mode'].strategies[0].variants.length, 2);
      assert.deepEqual(byName['dark-mode-banner'].dependencies, [
        { feature: 'dark-mode', enabled: true, variants: ['dark'] },
      ]);
      // Context field created with its legal values; tag type and tags created.
      const context = await app.inject({ url: '/api/admin/context', headers: admin });
      const field = (name: string) =>
        context.json().find((field: { name: string }) => field.name === name);
      assert.deepEqual(field('region').legalValues, [
        { value: 'eu' },
        { value: 'us' },
        { value: 'apac' },
      ]);
      const tagged = await app.inject({
        url: '/api/client/features?tag=team:payments',
        headers: { authorization: DEV_TOKEN },
      });
      assert.deepEqual(
        tagged.json().features.map((f: { name: string }) => f.name),
        ['checkout-v2'],
      );
    });

    it('re-importing the same payload gives the same state', async () => {
      const before = await clientFeatures(app);
      const tablesBefore = await dump(db);
      assert.equal((await importPayload(app, fixture())).statusCode, 200);
      assert.deepEqual(await clientFeatures(app), before);
      const tablesAfter = await dump(db);
      // Strategy ids are new (so the flags' versions move) and events/revision grow; everything
      // else is identical.
      for (const table of Object.keys(tablesBefore)) {
        if (['feature_strategies', 'events', 'revision', 'features'].includes(table)) continue;
        assert.deepEqual(tablesAfter[table], tablesBefore[table], table);
      }
      const withoutVersion = (rows: string[] = []) =>
        rows.map((row) => JSON.stringify({ ...JSON.parse(row), version: undefined })).sort();
      assert.deepEqual(withoutVersion(tablesAfter.features), withoutVersion(tablesBefore.features));
      const strip = (rows: string[] = []) =>
        rows
          .map((row) => {
            const { id: _id, created_at: _created, ...rest } = JSON.parse(row);
            return JSON.stringify(rest);
          })
          .sort();
      assert.deepEqual(
        strip(tablesAfter.feature_strategies),
        strip(tablesBefore.feature_strategies),
      );
    });

    it('updates existing flags, replaces strategies and tags, merges legal values', async () => {
      const payload = fixture();
      payload.data.features[0]!.type = 'operational';
      payload.data.featureStrategies = payload.data.featureStrategies.filter(
        (s) => s.featureName !== 'checkout-v2' || s.name === 'userWithId',
      );
      payload.data.featureTags = [];
      payload.data.contextFields = [{ name: 'region', legalValues: [{ value: 'latam' }] }];
      payload.data.segments = [];
      assert.equal((await importPayload(app, payload)).statusCode, 200);
      const body = await clientFeatures(app);
      const checkout = body.features.find((f: { name: string }) => f.name === 'checkout-v2');
      assert.equal(checkout.type, 'operational');
      assert.deepEqual(
        checkout.strategies.map((s: { name: string }) => s.name),
        ['userWithId'],
      );
      const context = await app.inject({ url: '/api/admin/context', headers: admin });
      assert.deepEqual(
        context
          .json()
          .find((field: { name: string }) => field.name === 'region')
          .legalValues.map((v: { value: string }) => v.value),
        ['eu', 'us', 'apac', 'latam'],
      );
      const tags = await db.query('SELECT * FROM feature_tags');
      assert.deepEqual(tags, []);
      // Back to the fixture state for the following tests.
      assert.equal((await importPayload(app, fixture())).statusCode, 200);
    });

    it("stores a flag's variants of the environment in name order, as unleash-server does", async () => {
      // A variant is picked by where the context's hash falls among the weights in list order:
      // the same document must list them as unleash-server serves it (its names' `localeCompare`).
      const variant = (name: string) => ({
        name,
        weight: 333,
        weightType: 'variable' as const,
        stickiness: 'default',
      });
      const payload = fixture();
      const darkMode = payload.data.featureEnvironments!.find((e) => e.name === 'dark-mode')!;
      darkMode.variants = [variant('zeta'), variant('beta'), variant('Gamma')];
      assert.equal((await importPayload(app, payload)).statusCode, 200);
      const body = await clientFeatures(app);
      const served = body.features.find((f: { name: string }) => f.name === 'dark-mode');
      assert.deepEqual(
        served.variants.map((v: { name: string }) => v.name),
        ['beta', 'Gamma', 'zeta'],
      );
      assert.equal((await importPayload(app, fixture())).statusCode, 200);
    });

    const rejected: [string, (payload: ImportRequest) => unknown, RegExp][] = [
      [
        'a schema violation',
        (p) => ({ ...p, data: { ...p.data, features: [{ type: 'release' }] } }),
        /name/,
      ],
      [
        'a missing data object',
        (p) => ({ project: p.project, environment: p.environment }),
        /data/,
      ],
      [
        'an unknown target project',
        (p) => ({ ...p, project: 'nowhere' }),
        /project does not exist: nowhere/,
      ],
      [
        'an unknown target environment',
        (p) => ({ ...p, environment: 'staging' }),
        /environment does not exist: staging/,
      ],
      [
        'a strategy that does not exist',
        (p) => {
          p.data.featureStrategies.push({
            name: 'myCustomThing',
            featureName: 'dark-mode',
            parameters: {},
          });
          return p;
        },
        /strategies do not exist.*myCustomThing/,
      ],
      [
        'a constraint value outside the legal values',
        (p) => {
          p.data.featureStrategies[0]!.constraints![0]!.values = ['eu', 'mars'];
          return p;
        },
        /not legal values.*region = mars/,
      ],
      [
        'a missing segment',
        (p) => {
          p.data.segments = [{ id: 7, name: 'no-such-segment' }];
          return p;
        },
        /segments do not exist.*no-such-segment/,
      ],
      [
        'a segment id not listed in data.segments',
        (p) => {
          p.data.featureStrategies[1]!.segments = [99];
          return p;
        },
        /segments do not exist.*segment id 99/,
      ],
      [
        'a feature that exists archived',
        (p) => {
          p.data.features.push({ name: 'old-flag' });
          return p;
        },
        /archived.*old-flag/,
      ],
      [
        'a feature that exists in another project',
        (p) => {
          p.data.features.push({ name: 'owned-elsewhere' });
          return p;
        },
        /other than default.*owned-elsewhere \(in project other\)/,
      ],
      [
        'duplicate names in the payload',
        (p) => {
          p.data.features.push({ name: 'brand-new' }, { name: 'brand-new' });
          return p;
        },
        /more than once.*brand-new/,
      ],
      [
        'a dependency on an unknown parent',
        (p) => {
          p.data.dependencies!.push({
            feature: 'dark-mode',
            dependencies: [{ feature: 'ghost-parent' }],
          });
          return p;
        },
        /unknown parent features.*ghost-parent/,
      ],
      [
        'a dependency on an archived parent',
        (p) => {
          p.data.dependencies!.push({
            feature: 'dark-mode',
            dependencies: [{ feature: 'old-flag' }],
          });
          return p;
        },
        /unknown parent features.*old-flag/,
      ],
      [
        'a strategy of a feature missing from data.features',
        (p) => {
          p.data.featureStrategies.push({ name: 'default', featureName: 'not-in-payload' });
          return p;
        },
        /not in data.features.*not-in-payload/,
      ],
      [
        'a tag with an unknown tag type',
        (p) => {
          p.data.featureTags!.push({ featureName: 'dark-mode', tagType: 'nope', tagValue: 'x1' });
          return p;
        },
        /unknown tag type nope/,
      ],
    ];

    for (const [name, mutate, message] of rejected) {
      it(`rejects ${name} with 400 and leaves the database unchanged`, async () => {
        const payload = mutate(fixture()) as ImportRequest;
        // Something that would be written if the rejection came late: a new flag.
        if (payload.data?.features)
          payload.data.features.push({ name: `would-be-created-${Date.now()}` });
        const before = await dump(db);
        const response = await importPayload(app, payload);
        assert.equal(response.statusCode, 400, response.body);
        const body = response.json();
        assert.equal(body.name, 'BadDataError');
        assert.match(body.message, message);
        assert.ok(body.details.length >= 1);
        assert.deepEqual(await dump(db), before);
      });
    }

    it('rolls back every write when the database refuses one late in the transaction', async () => {
      const payload = fixture();
      payload.data.features.push({ name: 'late-failure-flag' });
      payload.data.features[0]!.description = 'changed before the failure';
      // Passes validation; PostgreSQL refuses the NUL character when the strategies are written,
      // after the features were already upserted in the same transaction.
      payload.data.featureStrategies.push({
        name: 'default',
        featureName: 'late-failure-flag',
        parameters: { note: 'a\u0000b' },
      });
      const before = await dump(db);
      const response = await importPayload(app, payload);
      assert.equal(response.statusCode, 400, response.body);
      assert.equal(response.json().name, 'BadDataError');
      assert.deepEqual(await dump(db), before);
    });

    it('reports every problem at once on /validate without writing', async () => {
      const payload = fixture();
      payload.data.features.push({ name: 'owned-elsewhere' }, { name: 'old-flag' });
      payload.data.featureStrategies.push({ name: 'myCustomThing', featureName: 'dark-mode' });
      const before = await dump(db);
      const response = await app.inject({
        method: 'POST',
        url: '/api/admin/features-batch/validate',
        headers: admin,
        payload,
      });
      assert.equal(response.statusCode, 200);
      const body = response.json();
      assert.deepEqual(
        body.errors.map((e: { affectedItems: string[] }) => e.affectedItems),
        [['myCustomThing'], ['old-flag'], ['owned-elsewhere (in project other)']],
      );
      assert.deepEqual(body.warnings.at(-1).affectedItems, [
        'checkout-v2',
        'dark-mode',
        'dark-mode-banner',
        'beta-search',
      ]);
      assert.deepEqual(body.permissions, []);
      assert.deepEqual(await dump(db), before);
    });

    it('rejects a body over the import limit with 413 JSON', async () => {
      const small = await startApp(db, { importBodyLimitBytes: 1024 });
      try {
        const before = await dump(db);
        const response = await importPayload(small, fixture());
        assert.equal(response.statusCode, 413);
        assert.equal(response.json().name, 'ContentTooLargeError');
        assert.deepEqual(await dump(db), before);
      } finally {
        await small.close();
      }
    });

    it('requires an admin token', async () => {
      const none = await app.inject({
        method: 'POST',
        url: '/api/admin/features-batch/import',
        payload: fixture(),
      });
      assert.equal(none.statusCode, 401);
      const client = await app.inject({
        method: 'POST',
        url: '/api/admin/features-batch/import',
        headers: { authorization: DEV_TOKEN },
        payload: fixture(),
      });
      assert.equal(client.statusCode, 403);
      assert.equal(ADMIN_TOKEN, admin.authorization);
    });

    it('exports by project, names and tag', async () => {
      const exportBy = async (selection: object) => {
        const response = await app.inject({
          method: 'POST',
          url: '/api/admin/features-batch/export',
          headers: admin,
          payload: { environment: 'development', ...selection },
        });
        assert.equal(response.statusCode, 200);
        return response.json();
      };
      const byProject = await exportBy({ project: 'default' });
      assert.deepEqual(
        byProject.features.map((f: { name: string }) => f.name),
        ['beta-search', 'checkout-v2', 'dark-mode', 'dark-mode-banner'],
      );
      assert.equal(byProject.featureStrategies.length, 5);
      // The fields the flags' constraints name: `userId` is one of the built-in ones.
      assert.deepEqual(
        byProject.contextFields.map((f: { name: string }) => f.name),
        ['region', 'userId'],
      );
      assert.deepEqual(
        byProject.segments.map((s: { name: string }) => s.name),
        ['beta-testers'],
      );
      assert.deepEqual(
        byProject.tagTypes.map((t: { name: string }) => t.name),
        ['team'],
      );
      const byNames = await exportBy({ features: ['dark-mode', 'old-flag'] });
      assert.deepEqual(
        byNames.features.map((f: { name: string; archived: boolean }) => [f.name, f.archived]),
        [
          ['dark-mode', false],
          ['old-flag', true],
        ],
      );
      const byTag = await exportBy({ tag: 'design' });
      assert.deepEqual(
        byTag.features.map((f: { name: string }) => f.name),
        ['dark-mode'],
      );
      const unknownEnv = await app.inject({
        method: 'POST',
        url: '/api/admin/features-batch/export',
        headers: admin,
        payload: { environment: 'nope' },
      });
      assert.equal(unknownEnv.statusCode, 404);
    });

    it('accepts a custom strategy once it exists, with a warning on /validate', async () => {
      const created = await app.inject({
        method: 'POST',
        url: '/api/admin/strategies',
        headers: admin,
        payload: { name: 'country', parameters: [{ name: 'countries', type: 'list' }] },
      });
      assert.equal(created.statusCode, 201);
      const payload = fixture();
      payload.data.featureStrategies.push({
        name: 'country',
        featureName: 'dark-mode',
        parameters: { countries: 'NO,SE' },
      });
      const validation = await app.inject({
        method: 'POST',
        url: '/api/admin/features-batch/validate',
        headers: admin,
        payload,
      });
      assert.deepEqual(validation.json().errors, []);
      assert.deepEqual(validation.json().warnings[0].affectedItems, ['country']);
      assert.equal((await importPayload(app, payload)).statusCode, 200);
      const darkMode = (await clientFeatures(app)).features.find(
        (f: { name: string }) => f.name === 'dark-mode',
      );
      assert.deepEqual(
        darkMode.strategies.map((s: { name: string }) => s.name),
        ['default', 'country'],
      );
      assert.equal((await importPayload(app, fixture())).statusCode, 200);
    });

    it('round-trips: export from this server, import into another, equal client payloads', async () => {
      const exported = await app.inject({
        method: 'POST',
        url: '/api/admin/features-batch/export',
        headers: admin,
        payload: { environment: 'development', project: 'default' },
      });
      const target = await backend.open();
      const other = await startApp(target.db);
      try {
        // A segment created first shifts ids: the import must map segments by name.
        await other.inject({
          method: 'POST',
          url: '/api/admin/segments',
          headers: admin,
          payload: { name: 'unrelated', constraints: [] },
        });
        await seed(other);
        const response = await importPayload(other, {
          project: 'default',
          environment: 'development',
          data: exported.json(),
        });
        assert.equal(response.statusCode, 200, response.body);
        const source = await clientFeatures(app);
        const copy = await clientFeatures(other);
        const sourceId = source.segments[0].id;
        const copyId = copy.segments[0].id;
        assert.notEqual(sourceId, copyId);
        // Same configuration; only the segment's local id differs.
        const normalize = (body: unknown, id: number) =>
          JSON.parse(
            JSON.stringify(body)
              .replaceAll(`"segments":[${id}]`, '"segments":["S"]')
              .replace(`"id":${id},`, '"id":"S",'),
          );
        assert.deepEqual(normalize(copy, copyId), normalize(source, sourceId));
        // Inline mode (old SDKs) has no ids at all: byte-for-byte equal.
        const inline = async (server: FastifyInstance) =>
          (
            await server.inject({
              url: '/api/client/features?project=default',
              headers: { authorization: DEV_TOKEN },
            })
          ).json().features;
        assert.deepEqual(await inline(other), await inline(app));
      } finally {
        await other.close();
        await target.cleanup();
      }
    });
  });
}
