import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { Database } from '../../src/db/database.js';
import { adminContract } from '../admin-contract.js';
import { backends, createProject, DEV_TOKEN, startApp } from '../helpers.js';

/**
 * The admin API of tags, tag types, segments and context fields (unleash-server 8.2's paths,
 * bodies and status codes): answers, bad input refused with nothing changed, 409 for what is
 * still used, and the event of every write.
 */
for (const backend of backends) {
  describe(`tags, segments and context fields on ${backend.name}`, () => {
    let db: Database;
    let app: FastifyInstance;
    let cleanup: () => Promise<void>;
    const { call, events, refused, configRevision } = adminContract(
      () => app,
      () => db,
    );
    const F = '/api/admin/projects/shop/features';

    before(async () => {
      ({ db, cleanup } = await backend.open());
      app = await startApp(db);
      await createProject(app, 'shop');
      for (const name of ['cart', 'search']) {
        assert.equal((await call('POST', F, { name })).statusCode, 201);
      }
    });
    after(async () => {
      await app.close();
      await cleanup();
    });

    it('manages tag types: create, validate, read, update, delete; refuses duplicates and bad names', async () => {
      const created = await call('POST', '/api/admin/tag-types', {
        name: 'team',
        description: 'Owning team',
      });
      assert.equal(created.statusCode, 201, created.body);
      assert.deepEqual(created.json(), {
        name: 'team',
        description: 'Owning team',
        icon: null,
        color: null,
      });
      const again = await refused(409, () =>
        call('POST', '/api/admin/tag-types', { name: 'team' }),
      );
      assert.equal(again.name, 'NameExistsError');
      await refused(409, () => call('POST', '/api/admin/tag-types/validate', { name: 'team' }));
      const valid = await call('POST', '/api/admin/tag-types/validate', { name: 'area' });
      assert.deepEqual(valid.json(), { valid: true, tagType: { name: 'area' } });
      await refused(400, () => call('POST', '/api/admin/tag-types', { name: 'Bad Name!' }));

      const read = await call('GET', '/api/admin/tag-types/team');
      assert.deepEqual(read.json(), {
        version: 1,
        tagType: { name: 'team', description: 'Owning team', icon: null, color: null },
      });
      await refused(404, () => call('GET', '/api/admin/tag-types/nope'));

      const updated = await call('PUT', '/api/admin/tag-types/team', {
        name: 'team',
        description: 'Team',
        color: '#FF0000',
      });
      assert.equal(updated.statusCode, 200, updated.body);
      assert.equal(
        (await call('GET', '/api/admin/tag-types/team')).json().tagType.color,
        '#FF0000',
      );
      await refused(404, () => call('PUT', '/api/admin/tag-types/nope', { description: 'x' }));
      await refused(400, () => call('PUT', '/api/admin/tag-types/team', { color: 'red' }));

      assert.equal((await call('POST', '/api/admin/tag-types', { name: 'gone' })).statusCode, 201);
      assert.equal((await call('DELETE', '/api/admin/tag-types/gone')).statusCode, 200);
      await refused(404, () => call('DELETE', '/api/admin/tag-types/gone'));
      assert.deepEqual(
        (await call('GET', '/api/admin/tag-types'))
          .json()
          .tagTypes.map((t: { name: string }) => t.name),
        ['simple', 'team'],
      );

      assert.deepEqual((await events('tag-type-created')).map((e) => e.data?.name).sort(), [
        'gone',
        'team',
      ]);
      const [update] = await events('tag-type-updated');
      assert.equal(update!.preData?.description, 'Owning team');
      assert.equal(update!.data?.description, 'Team');
      assert.equal((await events('tag-type-deleted'))[0]!.preData?.name, 'gone');
    });

    it("tags a flag, changes and removes its tags; the client API's tag filter and flag search see them", async () => {
      const revision = await configRevision();
      const tagged = await call('POST', '/api/admin/features/cart/tags', {
        type: 'team',
        value: 'payments',
      });
      assert.equal(tagged.statusCode, 201, tagged.body);
      assert.deepEqual(tagged.json(), { type: 'team', value: 'payments' });
      assert.ok((await configRevision()) > revision, 'the tag filter sees it: the revision moved');
      // Tagging twice is no error and records no second event.
      assert.equal(
        (await call('POST', '/api/admin/features/cart/tags', { type: 'team', value: 'payments' }))
          .statusCode,
        201,
      );
      assert.deepEqual((await call('GET', '/api/admin/features/cart/tags')).json(), {
        version: 1,
        tags: [{ type: 'team', value: 'payments', color: '#FF0000' }],
      });

      const client = await app.inject({
        url: '/api/client/features?tag=team:payments',
        headers: { authorization: DEV_TOKEN },
      });
      assert.deepEqual(
        client.json().features.map((f: { name: string }) => f.name),
        ['cart'],
      );
      const search = await call('GET', '/api/admin/search/features?tag=team:payments');
      assert.deepEqual(
        search.json().features.map((f: { name: string }) => f.name),
        ['cart'],
      );

      await refused(400, () =>
        call('POST', '/api/admin/features/cart/tags', { type: 'nope', value: 'xx' }),
      );
      await refused(400, () =>
        call('POST', '/api/admin/features/cart/tags', { type: 'team', value: 'x' }),
      );
      await refused(404, () =>
        call('POST', '/api/admin/features/nope/tags', { type: 'team', value: 'xx' }),
      );
      await refused(404, () => call('GET', '/api/admin/features/nope/tags'));
      // A PUT naming an unknown type changes nothing, not even the tags it would remove.
      await refused(400, () =>
        call('PUT', '/api/admin/features/cart/tags', {
          addedTags: [{ type: 'nope', value: 'xx' }],
          removedTags: [{ type: 'team', value: 'payments' }],
        }),
      );

      const put = await call('PUT', '/api/admin/features/cart/tags', {
        addedTags: [{ type: 'team', value: 'checkout' }],
        removedTags: [{ type: 'team', value: 'payments' }],
      });
      assert.equal(put.statusCode, 200, put.body);
      assert.deepEqual(put.json(), {
        version: 1,
        tags: [{ type: 'team', value: 'checkout', color: '#FF0000' }],
      });
      const untag = await call('DELETE', '/api/admin/features/cart/tags/team/checkout');
      assert.equal(untag.statusCode, 200);
      assert.deepEqual((await call('GET', '/api/admin/features/cart/tags')).json().tags, []);

      const taggedEvents = await events('feature-tagged');
      assert.deepEqual(taggedEvents.map((e) => [e.featureName, e.project, e.data]).reverse(), [
        ['cart', 'shop', { type: 'team', value: 'payments' }],
        ['cart', 'shop', { type: 'team', value: 'checkout' }],
      ]);
      assert.deepEqual((await events('feature-untagged')).map((e) => e.preData).reverse(), [
        { type: 'team', value: 'payments' },
        { type: 'team', value: 'checkout' },
      ]);
    });

    it('keeps tags of their own: create, read, list, delete (also from the flags carrying it)', async () => {
      const created = await call('POST', '/api/admin/tags', { type: 'team', value: 'growth' });
      assert.equal(created.statusCode, 201, created.body);
      assert.deepEqual(created.json(), { version: 1, tag: { type: 'team', value: 'growth' } });
      await refused(409, () => call('POST', '/api/admin/tags', { type: 'team', value: 'growth' }));
      await refused(400, () => call('POST', '/api/admin/tags', { type: 'nope', value: 'growth' }));
      assert.deepEqual((await call('GET', '/api/admin/tags/team/growth')).json(), {
        version: 1,
        tag: { type: 'team', value: 'growth' },
      });
      await refused(404, () => call('GET', '/api/admin/tags/team/nope'));

      await call('POST', '/api/admin/features/search/tags', { type: 'team', value: 'growth' });
      const listed = (await call('GET', '/api/admin/tags')).json();
      assert.ok(listed.tags.some((t: { value: string }) => t.value === 'growth'));
      assert.deepEqual(
        (await call('GET', '/api/admin/tags/team'))
          .json()
          .tags.map((t: { value: string }) => t.value),
        ['checkout', 'growth', 'payments'],
      );

      // A tag type whose tags a flag carries is not deleted: 409 naming the flag.
      const inUse = await refused(409, () => call('DELETE', '/api/admin/tag-types/team'));
      assert.equal(inUse.name, 'ConflictError');
      assert.match(inUse.message, /flag "search"/);

      const deleted = await call('DELETE', '/api/admin/tags/team/growth');
      assert.equal(deleted.statusCode, 200);
      assert.deepEqual((await call('GET', '/api/admin/features/search/tags')).json().tags, []);
      await refused(404, () => call('GET', '/api/admin/tags/team/growth'));
      assert.deepEqual((await events('tag-created'))[0]!.data, { type: 'team', value: 'growth' });
      assert.deepEqual((await events('tag-deleted'))[0]!.preData, {
        type: 'team',
        value: 'growth',
      });
      assert.equal((await events('feature-untagged'))[0]!.featureName, 'search');
    });

    it('reads, updates and deletes segments by id; refuses deleting one a strategy uses, naming it', async () => {
      const created = await call('POST', '/api/admin/segments', {
        name: 'beta',
        constraints: [],
      });
      assert.equal(created.statusCode, 201, created.body);
      const { id } = created.json();
      assert.deepEqual((await call('GET', `/api/admin/segments/${id}`)).json(), {
        id,
        name: 'beta',
        description: null,
        project: null,
        constraints: [],
      });
      await refused(404, () => call('GET', '/api/admin/segments/999'));
      await refused(400, () => call('GET', '/api/admin/segments/abc'));

      const constraints = [
        {
          contextName: 'userId',
          operator: 'IN',
          values: ['a'],
          inverted: false,
          caseInsensitive: false,
        },
      ];
      const revision = await configRevision();
      const updated = await call('PUT', `/api/admin/segments/${id}`, {
        name: 'beta-users',
        description: 'Beta',
        constraints,
      });
      assert.equal(updated.statusCode, 204, updated.body);
      assert.ok((await configRevision()) > revision);
      assert.equal((await call('GET', `/api/admin/segments/${id}`)).json().name, 'beta-users');
      await refused(404, () =>
        call('PUT', '/api/admin/segments/999', { name: 'x', constraints: [] }),
      );
      await refused(400, () => call('PUT', `/api/admin/segments/${id}`, { name: 'x' }));
      await call('POST', '/api/admin/segments', { name: 'other', constraints: [] });
      await refused(409, () =>
        call('PUT', `/api/admin/segments/${id}`, { name: 'other', constraints: [] }),
      );

      const strategy = await call('POST', `${F}/cart/environments/development/strategies`, {
        name: 'default',
        segments: [id],
      });
      assert.equal(strategy.statusCode, 200, strategy.body);
      const strategyId = strategy.json().id;
      assert.deepEqual((await call('GET', `/api/admin/segments/${id}/strategies`)).json(), {
        strategies: [
          {
            id: strategyId,
            projectId: 'shop',
            featureName: 'cart',
            strategyName: 'default',
            environment: 'development',
          },
        ],
        changeRequestStrategies: [],
      });
      // Moving it to a project other than the one using it is refused.
      await createProject(app, 'other');
      await refused(400, () =>
        call('PUT', `/api/admin/segments/${id}`, {
          name: 'beta-users',
          project: 'other',
          constraints,
        }),
      );

      const inUse = await refused(409, () => call('DELETE', `/api/admin/segments/${id}`));
      assert.equal(inUse.name, 'ConflictError');
      assert.match(inUse.message, /flag "cart" in development/);
      assert.match(inUse.details[0]!.message, new RegExp(strategyId));

      await call('DELETE', `${F}/cart/environments/development/strategies/${strategyId}`);
      const deleted = await call('DELETE', `/api/admin/segments/${id}`);
      assert.equal(deleted.statusCode, 204, deleted.body);
      await refused(404, () => call('DELETE', `/api/admin/segments/${id}`));

      assert.ok((await events('segment-created')).some((e) => e.data?.name === 'beta'));
      const [update] = await events('segment-updated');
      assert.equal(update!.preData?.name, 'beta');
      assert.equal(update!.data?.name, 'beta-users');
      assert.equal((await events('segment-deleted'))[0]!.preData?.id, id);
    });

    it('manages context fields and legal values; refuses deleting one a constraint names', async () => {
      const created = await call('POST', '/api/admin/context', {
        name: 'region',
        description: 'Region',
        legalValues: [{ value: 'eu' }],
        stickiness: true,
      });
      assert.equal(created.statusCode, 201, created.body);
      assert.deepEqual(created.json(), {
        name: 'region',
        description: 'Region',
        stickiness: true,
        sortOrder: 0,
        legalValues: [{ value: 'eu' }],
      });
      await refused(409, () => call('POST', '/api/admin/context', { name: 'region' }));
      await refused(409, () => call('POST', '/api/admin/context/validate', { name: 'region' }));
      assert.equal(
        (await call('POST', '/api/admin/context/validate', { name: 'tenant' })).statusCode,
        200,
      );
      await refused(400, () => call('POST', '/api/admin/context', { name: 'bad name' }));
      await refused(400, () =>
        call('POST', '/api/admin/context', { name: 'x', legalValues: [{ nope: 1 }] }),
      );
      await refused(404, () => call('GET', '/api/admin/context/nope'));

      const put = await call('PUT', '/api/admin/context/region', {
        legalValues: [{ value: 'us', description: 'US' }],
      });
      assert.equal(put.statusCode, 200, put.body);
      assert.deepEqual((await call('GET', '/api/admin/context/region')).json(), {
        name: 'region',
        description: 'Region',
        stickiness: false,
        sortOrder: 0,
        legalValues: [{ value: 'us', description: 'US' }],
      });
      await refused(404, () => call('PUT', '/api/admin/context/nope', {}));

      assert.equal(
        (await call('POST', '/api/admin/context/region/legal-values', { value: 'asia' }))
          .statusCode,
        200,
      );
      assert.equal(
        (await call('DELETE', '/api/admin/context/region/legal-values/us')).statusCode,
        200,
      );
      assert.deepEqual((await call('GET', '/api/admin/context/region')).json().legalValues, [
        { value: 'asia' },
      ]);

      const strategy = await call('POST', `${F}/search/environments/production/strategies`, {
        name: 'default',
        constraints: [{ contextName: 'region', operator: 'IN', values: ['asia'] }],
      });
      assert.equal(strategy.statusCode, 200, strategy.body);
      assert.deepEqual(
        (await call('GET', '/api/admin/context/region/strategies'))
          .json()
          .strategies.map((s: { featureName: string; environment: string }) => [
            s.featureName,
            s.environment,
          ]),
        [['search', 'production']],
      );
      const inUse = await refused(409, () => call('DELETE', '/api/admin/context/region'));
      assert.match(inUse.message, /flag "search" in production/);

      assert.equal((await call('POST', '/api/admin/context', { name: 'tenant' })).statusCode, 201);
      assert.equal((await call('DELETE', '/api/admin/context/tenant')).statusCode, 200);
      await refused(404, () => call('DELETE', '/api/admin/context/tenant'));

      assert.deepEqual((await events('context-field-created')).map((e) => e.data?.name).sort(), [
        'region',
        'tenant',
      ]);
      assert.equal((await events('context-field-updated')).length, 3);
      assert.equal((await events('context-field-deleted'))[0]!.preData?.name, 'tenant');
    });
  });
}
