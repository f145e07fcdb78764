import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { waitFor } from '../../../../test/helpers/wait.js';
import type { Database } from '../../src/db/database.js';
import { compactClientChanges } from '../../src/features/client-api/change-log.js';
import { bumpConfigRevision } from '../../src/revision.js';
import { admin, backends, DEV_TOKEN, PROD_TOKEN, startApp } from '../helpers.js';
import { openSse, type SseConnection } from '../sse-client.js';

interface Event {
  eventId: number;
  type: string;
  feature?: {
    name: string;
    enabled: boolean;
    project: string;
    strategies: { segments?: number[] }[];
  };
  featureName?: string;
  project?: string;
  segment?: { id: number; name: string };
  segmentId?: number;
  features?: { name: string; enabled?: boolean }[];
  segments?: { id: number }[];
}

const fixture = () =>
  JSON.parse(readFileSync(new URL('../fixtures/import-basic.json', import.meta.url), 'utf8'));

/** An import of one flag into `project`/development: `enabled`, with a strategy using `segment`. */
const flagImport = (
  name: string,
  options: { project?: string; enabled?: boolean; segment?: { id: number; name: string } } = {},
) => ({
  project: options.project ?? 'default',
  environment: 'development',
  data: {
    features: [{ name, project: options.project ?? 'default' }],
    featureStrategies: [
      {
        name: 'default',
        featureName: name,
        parameters: {},
        ...(options.segment ? { segments: [options.segment.id] } : {}),
      },
    ],
    featureEnvironments: [{ name, featureName: name, enabled: options.enabled ?? true }],
    segments: options.segment ? [options.segment] : [],
    tagTypes: [],
  },
});

const eventIdOf = (etag: unknown) => Number(String(etag).replaceAll('"', ''));

for (const backend of backends) {
  describe(`client delta and streaming on ${backend.name}`, () => {
    let db: Database;
    let cleanup: () => Promise<void>;
    let app: FastifyInstance;
    let base: string;
    const open: SseConnection[] = [];

    const post = async (url: string, payload: object, status = 200) => {
      const response = await app.inject({ method: 'POST', url, headers: admin, payload });
      assert.equal(response.statusCode, status, response.body);
      return response;
    };
    const importFlags = (payload: object) => post('/api/admin/features-batch/import', payload);
    const delta = (etag?: string, token = DEV_TOKEN, query = '') =>
      app.inject({
        url: `/api/client/delta${query}`,
        headers: { authorization: token, ...(etag === undefined ? {} : { 'if-none-match': etag }) },
      });
    const latestId = async (token = DEV_TOKEN) =>
      eventIdOf((await delta(undefined, token)).headers.etag);
    const stream = async (headers: Record<string, string> = {}, token = DEV_TOKEN) => {
      const connection = await openSse(`${base}/api/client/streaming`, {
        authorization: token,
        'unleash-client-spec': '5.2.0',
        ...headers,
      });
      open.push(connection);
      return connection;
    };
    /** A stream with a token just created (it may take a moment to be known). */
    const streamOf = async (secret: string) => {
      let connection: SseConnection | undefined;
      await waitFor(
        async () => {
          connection?.close();
          connection = await stream({}, secret);
          return connection.status === 200;
        },
        10_000,
        'a stream for the new token',
      );
      return connection as SseConnection;
    };
    const dataOf = (connection: SseConnection, index: number) =>
      JSON.parse(connection.events[index]!.data) as { events: Event[] };

    before(async () => {
      ({ db, cleanup } = await backend.open());
      app = await startApp(db, { streamingMaxConnections: 4, streamingKeepAliveMs: 100 });
      await post(
        '/api/admin/segments',
        {
          name: 'beta-testers',
          constraints: [{ contextName: 'userId', operator: 'IN', values: ['t1'] }],
        },
        201,
      );
      await importFlags(fixture());
      await post('/api/admin/projects', { id: 'mobile' }, 201);
      await importFlags(flagImport('app-rating', { project: 'mobile' }));
      await app.listen({ port: 0, host: '127.0.0.1' });
      base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    });
    after(async () => {
      for (const connection of open) connection.close();
      await app.close();
      await cleanup();
    });

    it('hydrates a first delta call with what /api/client/features serves, its ETag the event id', async () => {
      const response = await delta();
      assert.equal(response.statusCode, 200, response.body);
      const { events } = response.json() as { events: Event[] };
      assert.equal(events.length, 1);
      assert.equal(events[0]!.type, 'hydration');
      assert.equal(response.headers.etag, `"${events[0]!.eventId}"`);
      const full = await app.inject({
        url: '/api/client/features',
        headers: { authorization: DEV_TOKEN, 'unleash-client-spec': '5.2.0' },
      });
      assert.deepEqual(events[0]!.features, full.json().features);
      assert.deepEqual(events[0]!.segments, full.json().segments);
    });

    it('answers 304 for the newest id, quoted, bare or weak', async () => {
      const id = await latestId();
      for (const etag of [`"${id}"`, String(id), `W/"${id}"`]) {
        const response = await delta(etag);
        assert.equal(response.statusCode, 304, etag);
        assert.equal(response.headers.etag, `"${id}"`);
      }
    });

    it('sends an import’s change as feature-updated, and an archive as feature-removed', async () => {
      const before = await latestId();
      await importFlags({ ...flagImport('dark-mode-banner', { enabled: false }) });
      const changed = await delta(`"${before}"`);
      assert.equal(changed.statusCode, 200, changed.body);
      const { events } = changed.json() as { events: Event[] };
      assert.deepEqual(
        events.map((event) => [event.type, event.feature?.name, event.feature?.enabled]),
        [['feature-updated', 'dark-mode-banner', false]],
      );
      assert.ok(events[0]!.eventId > before);
      // At or past its last event (other environments' events may follow it).
      assert.ok(eventIdOf(changed.headers.etag) >= events[0]!.eventId);
      assert.equal((await delta(changed.headers.etag as string)).statusCode, 304);

      const archived = await app.inject({
        method: 'DELETE',
        url: '/api/admin/projects/default/features/dark-mode-banner',
        headers: admin,
      });
      assert.ok(archived.statusCode < 300, archived.body);
      const removed = (await delta(changed.headers.etag as string)).json() as { events: Event[] };
      assert.deepEqual(
        removed.events.map((event) => [event.type, event.featureName, event.project]),
        [['feature-removed', 'dark-mode-banner', 'default']],
      );
    });

    it('sends a segment a flag starts using before the flag, and removes it after the flag', async () => {
      await post('/api/admin/segments', { name: 'ops', constraints: [] }, 201);
      const before = await latestId();
      await importFlags(flagImport('ops-switch', { segment: { id: 901, name: 'ops' } }));
      const added = await delta(`"${before}"`);
      const addedEvents = (added.json() as { events: Event[] }).events;
      assert.deepEqual(
        addedEvents.map((event) => [event.type, event.segment?.name ?? event.feature?.name]),
        [
          ['segment-updated', 'ops'],
          ['feature-updated', 'ops-switch'],
        ],
      );
      const segmentId = addedEvents[0]!.segment!.id;
      assert.deepEqual(addedEvents[1]!.feature!.strategies[0]!.segments, [segmentId]);

      await importFlags(flagImport('ops-switch'));
      const dropped = (await delta(added.headers.etag as string)).json() as { events: Event[] };
      assert.deepEqual(
        dropped.events.map((event) => [event.type, event.segmentId ?? event.feature?.name]),
        [
          ['feature-updated', 'ops-switch'],
          ['segment-removed', segmentId],
        ],
      );
    });

    it('filters events to the token’s environment and the requested projects', async () => {
      const prodBefore = await latestId(PROD_TOKEN);
      const mobileBefore = eventIdOf(
        (await delta(undefined, DEV_TOKEN, '?project=mobile')).headers.etag,
      );
      // The fixture again with one flag disabled: only development's configuration changes.
      const disabled = fixture();
      // (dark-mode-banner is archived by now.)
      const live = (row: { featureName?: string; name?: string; feature?: string }) =>
        ![row.featureName, row.name, row.feature].includes('dark-mode-banner');
      for (const key of [
        'features',
        'featureStrategies',
        'featureEnvironments',
        'featureTags',
        'dependencies',
      ]) {
        disabled.data[key] = (disabled.data[key] ?? []).filter(live);
      }
      for (const row of disabled.data.featureEnvironments) {
        if (row.featureName === 'checkout-v2') row.enabled = false;
      }
      await importFlags(disabled);
      // Development only: production sees nothing new.
      assert.equal((await delta(`"${prodBefore}"`, PROD_TOKEN)).statusCode, 304);
      // Another project's flag: the mobile client moves on without events.
      const mobile = await delta(`"${mobileBefore}"`, DEV_TOKEN, '?project=mobile');
      assert.equal(mobile.statusCode, 200, mobile.body);
      assert.deepEqual(mobile.json(), { events: [] });
      assert.ok(eventIdOf(mobile.headers.etag) > mobileBefore);
      await importFlags(flagImport('app-rating', { project: 'mobile', enabled: false }));
      const next = (
        await delta(mobile.headers.etag as string, DEV_TOKEN, '?project=mobile')
      ).json();
      assert.deepEqual(
        (next as { events: Event[] }).events.map((event) => [event.type, event.feature?.name]),
        [['feature-updated', 'app-rating']],
      );
    });

    it('hydrates an id it cannot resume from: compacted away, unknown, or not a number', async () => {
      const old = await latestId();
      await importFlags(flagImport('dark-mode', { enabled: false }));
      await importFlags(flagImport('dark-mode', { enabled: true }));
      await db.transaction((tx) => compactClientChanges(tx, 1));
      await waitFor(
        async () => {
          const response = await delta(`"${old}"`);
          return (response.json() as { events: Event[] }).events[0]?.type === 'hydration';
        },
        10_000,
        'the compacted id to hydrate',
      );
      for (const etag of ['"99999999"', '"abc"', '*', '"-1"', '""']) {
        const response = await delta(etag);
        assert.equal(response.statusCode, 200, etag);
        const { events } = response.json() as { events: Event[] };
        assert.deepEqual(
          events.map((event) => event.type),
          ['hydration'],
          etag,
        );
      }
    });

    it('records no event for a write that rolls back', async () => {
      const before = await latestId();
      await assert.rejects(
        db.transaction(async (tx) => {
          await tx.query(
            `UPDATE feature_environments SET enabled = NOT enabled
              WHERE feature_name = 'checkout-v2' AND environment = 'development'`,
          );
          await bumpConfigRevision(tx);
          throw new Error('rolled back');
        }),
        /rolled back/,
      );
      assert.equal((await delta(`"${before}"`)).statusCode, 304);
      const rows = await db.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM client_change_events WHERE id > $1',
        [before],
      );
      assert.equal(rows[0]!.n, 0);
    });

    it('does not advertise streaming on /api/client/features by default', async () => {
      const features = await app.inject({
        url: '/api/client/features',
        headers: { authorization: DEV_TOKEN },
      });
      assert.equal(features.statusCode, 200);
      assert.equal(features.headers['fetch-mode'], undefined);
    });

    it('refuses a tag filter with 400, an admin token with 403 and no token with 401', async () => {
      const tagged = await delta(undefined, DEV_TOKEN, '?tag=team:design');
      assert.equal(tagged.statusCode, 400);
      assert.equal(tagged.json().name, 'BadDataError');
      for (const url of ['/api/client/delta', '/api/client/streaming']) {
        assert.equal((await app.inject({ url })).statusCode, 401, url);
        assert.equal((await app.inject({ url, headers: admin })).statusCode, 403, url);
      }
    });

    it('streams a hydration, then each import’s events with their ids', async () => {
      const connection = await stream();
      assert.equal(connection.status, 200);
      assert.match(String(connection.headers['content-type']), /^text\/event-stream/);
      await waitFor(() => connection.events.length >= 1, 10_000, 'the connected event');
      const first = connection.events[0]!;
      assert.equal(first.event, 'unleash-connected');
      const hydration = dataOf(connection, 0).events;
      assert.deepEqual(
        hydration.map((event) => event.type),
        ['hydration'],
      );
      assert.equal(first.id, String(hydration[0]!.eventId));
      assert.ok(hydration[0]!.features!.some((feature) => feature.name === 'checkout-v2'));

      await importFlags(flagImport('stream-flag'));
      await waitFor(() => connection.events.length >= 2, 10_000, 'the updated event');
      const updated = connection.events[1]!;
      assert.equal(updated.event, 'unleash-updated');
      const events = dataOf(connection, 1).events;
      assert.deepEqual(
        events.map((event) => [event.type, event.feature?.name]),
        [['feature-updated', 'stream-flag']],
      );
      assert.equal(updated.id, String(events[0]!.eventId));
      assert.ok(events[0]!.eventId > hydration[0]!.eventId);
      // Production's stream would not get it: environments are separate topics.
      connection.close();
    });

    it('resumes from Last-Event-ID with the events missed, without a hydration', async () => {
      const first = await stream();
      await waitFor(() => first.events.length >= 1, 10_000, 'the connected event');
      const lastEventId = first.events.at(-1)!.id!;
      first.close();
      await first.ended;
      await importFlags(flagImport('missed-while-away'));
      const resumed = await stream({ 'last-event-id': lastEventId });
      await waitFor(() => resumed.events.length >= 1, 10_000, 'the resumed event');
      const got = resumed.events.flatMap((event) => JSON.parse(event.data).events as Event[]);
      assert.deepEqual(
        got.map((event) => [event.type, event.feature?.name]),
        [['feature-updated', 'missed-while-away']],
      );
      assert.ok(Number(resumed.events.at(-1)!.id) >= got.at(-1)!.eventId);
      resumed.close();
    });

    it('sends keep-alive comments', async () => {
      const connection = await stream();
      await waitFor(() => connection.comments.length >= 2, 10_000, 'keep-alive comments');
      assert.equal(connection.comments[0]!.trim(), 'keep-alive');
      connection.close();
      await connection.ended;
    });

    it('answers 429 beyond the stream bound', async () => {
      for (const connection of open) connection.close();
      await Promise.all(open.map((connection) => connection.ended));
      // Wait until the server has let go of every closed stream.
      const held: SseConnection[] = [];
      await waitFor(
        async () => {
          const connection = await stream();
          if (connection.status === 200) held.push(connection);
          else connection.close();
          return held.length === 4;
        },
        10_000,
        'four streams',
      );
      const refused = await stream();
      assert.equal(refused.status, 429);
      assert.match(String(refused.headers['content-type']), /application\/json/);
      assert.equal(JSON.parse(await refused.body).name, 'RateLimitError');
      for (const connection of held) connection.close();
      await Promise.all(held.map((connection) => connection.ended));
    });

    it('ends the streams of a deleted token', async () => {
      const created = await post(
        '/api/admin/api-tokens',
        { tokenName: 'short-lived', type: 'client', environment: 'development' },
        201,
      );
      const secret = created.json().secret as string;
      const connection = await streamOf(secret);
      const deleted = await app.inject({
        method: 'DELETE',
        url: `/api/admin/api-tokens/${encodeURIComponent(secret)}`,
        headers: admin,
      });
      assert.equal(deleted.statusCode, 200, deleted.body);
      await waitFor(() => connection.isEnded(), 10_000, 'the stream to end');
    });

    it('ends the stream of a token when it expires, with no token change to tell', async () => {
      const expiresAt = new Date(Date.now() + 5_000);
      const created = await post(
        '/api/admin/api-tokens',
        { tokenName: 'expiring', type: 'client', environment: 'development', expiresAt },
        201,
      );
      const secret = created.json().secret as string;
      const connection = await streamOf(secret);
      await waitFor(() => connection.isEnded(), 10_000, 'the stream to end');
      assert.ok(Date.now() >= expiresAt.getTime(), 'not before the token expired');
      assert.equal((await stream({}, secret)).status, 401);
    });
  });

  describe(`a database from before the change log on ${backend.name}`, () => {
    it('records its state as the baseline at start: the first write yields only its own events', async () => {
      const { db, cleanup } = await backend.open();
      try {
        const first = await startApp(db);
        try {
          const segment = await first.inject({
            method: 'POST',
            url: '/api/admin/segments',
            headers: admin,
            payload: { name: 'beta-testers', constraints: [] },
          });
          assert.equal(segment.statusCode, 201, segment.body);
          const seeded = await first.inject({
            method: 'POST',
            url: '/api/admin/features-batch/import',
            headers: admin,
            payload: fixture(),
          });
          assert.equal(seeded.statusCode, 200, seeded.body);
        } finally {
          await first.close();
        }
        // As a database migrated to 0015 by this version finds it: flags, and an empty log.
        await db.exec(`DELETE FROM client_change_events;
          DELETE FROM client_change_state;
          DELETE FROM client_change_environments;`);
        const stagingToken = '*:staging.test-staging-secret';
        const app = await startApp(db, { clientTokens: [DEV_TOKEN, PROD_TOKEN, stagingToken] });
        try {
          // A token naming an environment not created yet: hydrated with its view then, and the
          // environment created later reaches it (not as a silent baseline): as events, or, since
          // the log is empty here and its position is 0, as a hydration (0 is never resumed from:
          // issue 40).
          const empty = await app.inject({
            url: '/api/client/delta',
            headers: { authorization: stagingToken },
          });
          // (Every flag, disabled: what /api/client/features serves for an unknown environment.)
          const [emptyHydration] = (empty.json() as { events: Event[] }).events;
          assert.equal(emptyHydration!.type, 'hydration');
          assert.ok(emptyHydration!.features!.every((f) => f.enabled === false));
          const created = await app.inject({
            method: 'POST',
            url: '/api/admin/environments',
            headers: admin,
            payload: { name: 'staging', type: 'test' },
          });
          assert.equal(created.statusCode, 201, created.body);
          const staged = await app.inject({
            url: '/api/client/delta',
            headers: { authorization: stagingToken, 'if-none-match': String(empty.headers.etag) },
          });
          const stagedEvents = (staged.json() as { events: Event[] }).events;
          assert.equal(empty.headers.etag, '"0"');
          assert.deepEqual(
            stagedEvents.map((e) => e.type),
            ['hydration'],
            staged.body,
          );
          const stagedFeatures = await app.inject({
            url: '/api/client/features',
            headers: { authorization: stagingToken, 'unleash-client-spec': '5.2.0' },
          });
          assert.deepEqual(stagedEvents[0]!.features, stagedFeatures.json().features);

          const hydration = await app.inject({
            url: '/api/client/delta',
            headers: { authorization: DEV_TOKEN },
          });
          const [event] = (hydration.json() as { events: Event[] }).events;
          assert.equal(event!.type, 'hydration');
          assert.ok(event!.features!.some((feature) => feature.name === 'checkout-v2'));
          const imported = await app.inject({
            method: 'POST',
            url: '/api/admin/features-batch/import',
            headers: admin,
            payload: flagImport('first-after-upgrade'),
          });
          assert.equal(imported.statusCode, 200, imported.body);
          const delta = await app.inject({
            url: '/api/client/delta',
            headers: { authorization: DEV_TOKEN, 'if-none-match': String(hydration.headers.etag) },
          });
          assert.deepEqual(
            (delta.json() as { events: Event[] }).events.map((e) => [e.type, e.feature?.name]),
            [['feature-updated', 'first-after-upgrade']],
          );
        } finally {
          await app.close();
        }
      } finally {
        await cleanup();
      }
    });
  });

  describe(`closing with open streams on ${backend.name}`, () => {
    it('ends every stream when the app closes, telling SDKs to poll when configured', async () => {
      const { db, cleanup } = await backend.open();
      const app = await startApp(db, { streamingPollingOnClose: true, streamingAdvertise: true });
      // STREAMING_ADVERTISE: polling SDKs are told they may stream.
      const features = await app.inject({
        url: '/api/client/features',
        headers: { authorization: DEV_TOKEN },
      });
      assert.equal(features.headers['fetch-mode'], 'streaming');
      await app.listen({ port: 0, host: '127.0.0.1' });
      const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/api/client/streaming`;
      const connection = await openSse(url, { authorization: DEV_TOKEN });
      await waitFor(() => connection.events.length >= 1, 10_000, 'the connected event');
      await app.close();
      await connection.ended;
      assert.deepEqual(
        connection.events.map((event) => [
          event.event,
          event.event === 'fetch-mode' ? event.data : '',
        ]),
        [
          ['unleash-connected', ''],
          ['fetch-mode', 'polling'],
        ],
      );
      await cleanup();
    });
  });
}
