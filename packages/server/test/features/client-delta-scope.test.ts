import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { waitFor } from '../../../../test/helpers/wait.js';
import type { Database } from '../../src/db/database.js';
import { compactClientChanges } from '../../src/features/client-api/change-log.js';
import { bumpConfigRevision } from '../../src/revision.js';
import { admin, backends, DEV_TOKEN, startApp } from '../helpers.js';
import { openSse, type SseConnection } from '../sse-client.js';

// Issue 40: delta and streaming give a project-scoped token exactly what /api/client/features
// gives it (segments included), an id the server did not issue gets a hydration, and hydrations
// come from the client-features cache.

interface Segment {
  id: number;
  name: string;
  constraints: unknown[];
}
interface Feature {
  name: string;
  project: string;
  strategies: { segments?: number[] }[];
}
interface Event {
  eventId: number;
  type: string;
  feature?: Feature;
  featureName?: string;
  segment?: Segment;
  segmentId?: number;
  features?: Feature[];
  segments?: Segment[];
}

const SPEC = { 'unleash-client-spec': '5.2.0' } as const;

/** An import of one flag of `project` into `environment`, its strategy using `segment`. */
const flagImport = (
  name: string,
  project: string,
  segment?: string,
  environment = 'development',
) => ({
  project,
  environment,
  data: {
    features: [{ name, project }],
    featureStrategies: [
      {
        name: 'default',
        featureName: name,
        parameters: {},
        ...(segment ? { segments: [1] } : {}),
      },
    ],
    featureEnvironments: [{ name, featureName: name, enabled: true }],
    segments: segment ? [{ id: 1, name: segment }] : [],
    tagTypes: [],
  },
});

/** What an SDK holds after applying `events` to `state` (client specification 19). */
function apply(
  state: { features: Map<string, Feature>; segments: Map<number, Segment> },
  events: readonly Event[],
) {
  for (const event of events) {
    if (event.type === 'hydration') {
      state.features = new Map(event.features!.map((feature) => [feature.name, feature]));
      state.segments = new Map(event.segments!.map((segment) => [segment.id, segment]));
    } else if (event.type === 'feature-updated') {
      state.features.set(event.feature!.name, event.feature!);
    } else if (event.type === 'feature-removed') {
      state.features.delete(event.featureName!);
    } else if (event.type === 'segment-updated') {
      state.segments.set(event.segment!.id, event.segment!);
    } else if (event.type === 'segment-removed') {
      state.segments.delete(event.segmentId!);
    }
  }
}

const emptyState = () => ({
  features: new Map<string, Feature>(),
  segments: new Map<number, Segment>(),
});

const etagId = (etag: unknown) => Number(String(etag).replaceAll('"', ''));

for (const backend of backends) {
  describe(`delta and streaming scoping on ${backend.name}`, () => {
    let db: Database;
    let cleanup: () => Promise<void>;
    let app: FastifyInstance;
    let base: string;
    let alphaToken: string;
    const open: SseConnection[] = [];

    const post = async (url: string, payload: object, status = 200) => {
      const response = await app.inject({ method: 'POST', url, headers: admin, payload });
      assert.equal(response.statusCode, status, response.body);
      return response;
    };
    const delta = (token: string, etag?: string) =>
      app.inject({
        url: '/api/client/delta',
        headers: { authorization: token, ...(etag === undefined ? {} : { 'if-none-match': etag }) },
      });
    const features = async (token: string) => {
      const response = await app.inject({
        url: '/api/client/features',
        headers: { authorization: token, ...SPEC },
      });
      assert.equal(response.statusCode, 200, response.body);
      return response.json() as { features: Feature[]; segments: Segment[] };
    };
    const stream = async (token: string, headers: Record<string, string> = {}) => {
      const connection = await openSse(`${base}/api/client/streaming`, {
        authorization: token,
        ...SPEC,
        ...headers,
      });
      open.push(connection);
      return connection;
    };
    const streamEvents = (connection: SseConnection) =>
      connection.events.flatMap((event) => (JSON.parse(event.data) as { events: Event[] }).events);
    /** The state an SDK holding `state` must have: what /api/client/features gives `token`. */
    const assertMatchesFeatures = async (
      state: ReturnType<typeof emptyState>,
      token: string,
      what: string,
    ) => {
      const expected = await features(token);
      const byName = (a: Feature, b: Feature) => a.name.localeCompare(b.name);
      assert.deepEqual([...state.features.values()].sort(byName), expected.features, what);
      assert.deepEqual(
        [...state.segments.values()].sort((a, b) => a.id - b.id),
        expected.segments,
        what,
      );
    };
    const segmentId = async (name: string) =>
      (await db.query<{ id: number }>('SELECT id FROM segments WHERE name = $1', [name]))[0]!.id;
    /** Changes a segment's constraints (no admin route edits segments yet). */
    const editSegment = async (name: string, value: string) => {
      await db.transaction(async (tx) => {
        await tx.query('UPDATE segments SET constraints = $2::jsonb WHERE name = $1', [
          name,
          JSON.stringify([{ contextName: 'userId', operator: 'IN', values: [value] }]),
        ]);
        await bumpConfigRevision(tx);
      });
    };

    before(async () => {
      ({ db, cleanup } = await backend.open());
      app = await startApp(db, { revisionCheckMs: 50 });
      for (const project of ['alpha', 'beta'])
        await post('/api/admin/projects', { id: project }, 201);
      for (const name of ['alpha-only', 'beta-only']) {
        await post(
          '/api/admin/segments',
          { name, constraints: [{ contextName: 'userId', operator: 'IN', values: [name] }] },
          201,
        );
      }
      await post(
        '/api/admin/features-batch/import',
        flagImport('alpha-flag', 'alpha', 'alpha-only'),
      );
      await post('/api/admin/features-batch/import', flagImport('beta-flag', 'beta', 'beta-only'));
      const created = await post(
        '/api/admin/api-tokens',
        { tokenName: 'alpha', type: 'client', environment: 'development', projects: ['alpha'] },
        201,
      );
      alphaToken = created.json().secret as string;
      await app.listen({ port: 0, host: '127.0.0.1' });
      base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    });
    after(async () => {
      for (const connection of open) connection.close();
      await app.close();
      await cleanup();
    });

    it('gives a project-scoped token, by delta and by stream, only what /api/client/features gives it', async () => {
      const betaOnly = await segmentId('beta-only');
      const hydration = await delta(alphaToken);
      assert.equal(hydration.statusCode, 200, hydration.body);
      const polled = emptyState();
      apply(polled, (hydration.json() as { events: Event[] }).events);
      await assertMatchesFeatures(polled, alphaToken, 'the delta hydration');
      const connection = await stream(alphaToken);
      assert.equal(connection.status, 200);
      await waitFor(() => connection.events.length >= 1, 10_000, 'the connected event');
      const streamed = emptyState();
      apply(streamed, streamEvents(connection));
      await assertMatchesFeatures(streamed, alphaToken, 'the stream hydration');

      // A segment only project beta uses changes: nothing of it reaches project alpha's token.
      await editSegment('beta-only', 'changed');
      const afterEdit = await delta(alphaToken, String(hydration.headers.etag));
      const editEvents =
        afterEdit.statusCode === 304 ? [] : (afterEdit.json() as { events: Event[] }).events;
      assert.deepEqual(
        editEvents.filter(
          (event) => event.segment?.id === betaOnly || event.segmentId === betaOnly,
        ),
        [],
        'an event of a segment only project beta uses',
      );
      apply(polled, editEvents);
      await assertMatchesFeatures(polled, alphaToken, 'after a change of beta’s segment');

      // Alpha's flag starts using beta's segment (unchanged, so no segment event in the log): the
      // segment reaches alpha's token before the flag; alpha's old segment, now unused, is removed.
      await post(
        '/api/admin/features-batch/import',
        flagImport('alpha-flag', 'alpha', 'beta-only'),
      );
      const etag = afterEdit.headers.etag ?? hydration.headers.etag;
      const moved = await delta(alphaToken, String(etag));
      assert.equal(moved.statusCode, 200, moved.body);
      const movedEvents = (moved.json() as { events: Event[] }).events;
      assert.deepEqual(
        movedEvents.map((event) => [
          event.type,
          event.segment?.name ?? event.feature?.name ?? event.segmentId,
        ]),
        [
          ['segment-updated', 'beta-only'],
          ['feature-updated', 'alpha-flag'],
          ['segment-removed', await segmentId('alpha-only')],
        ],
      );
      apply(polled, movedEvents);
      await assertMatchesFeatures(polled, alphaToken, 'after alpha’s flag took beta’s segment');

      // Now alpha uses it: its changes reach alpha's token.
      await editSegment('beta-only', 'changed again');
      // The edit is written past the API: the server sees it at its next revision check.
      let shared = await delta(alphaToken, String(moved.headers.etag));
      await waitFor(
        async () => {
          shared = await delta(alphaToken, String(moved.headers.etag));
          return shared.statusCode !== 304;
        },
        5000,
        'the change of the segment alpha uses',
      );
      assert.equal(shared.statusCode, 200, shared.body);
      apply(polled, (shared.json() as { events: Event[] }).events);
      await assertMatchesFeatures(polled, alphaToken, 'after a change of the segment alpha uses');

      // The stream got the same, change by change.
      await waitFor(
        async () => {
          const now = emptyState();
          apply(now, streamEvents(connection));
          return (
            JSON.stringify([...now.segments.values()]) ===
            JSON.stringify((await features(alphaToken)).segments)
          );
        },
        10_000,
        'the stream to bring alpha’s segments up to date',
      );
      const all = streamEvents(connection);
      const streamedAll = emptyState();
      apply(streamedAll, all);
      await assertMatchesFeatures(streamedAll, alphaToken, 'the stream after every change');
      // Beta's segment arrives only with (or after) a flag of alpha that uses it.
      let used = false;
      for (const frame of connection.events) {
        const frameEvents = (JSON.parse(frame.data) as { events: Event[] }).events;
        used ||= frameEvents.some((event) =>
          (event.features ?? (event.feature ? [event.feature] : [])).some((feature) =>
            feature.strategies.some((strategy) => strategy.segments?.includes(betaOnly)),
          ),
        );
        const sent = frameEvents.some(
          (event) =>
            event.segment?.id === betaOnly ||
            event.segments?.some((segment) => segment.id === betaOnly),
        );
        assert.ok(used || !sent, `beta’s segment before alpha used it: ${frame.data}`);
      }
      connection.close();
    });

    it('hydrates a delta id it did not issue: 0, in the future, not a number, compacted away', async () => {
      await post(
        '/api/admin/features-batch/import',
        flagImport('prod-flag', 'default', undefined, 'production'),
      );
      const newestOf = async (environment: string) =>
        (
          await db.query<{ id: number }>(
            'SELECT max(id)::int AS id FROM client_change_events WHERE environment = $1',
            [environment],
          )
        )[0]!.id;
      const prodId = await newestOf('production');
      const devId = await newestOf('development');
      const [row] = await db.query<{ oldest: number }>(
        `SELECT min(id)::int AS oldest FROM client_change_events WHERE environment = 'development'`,
      );
      const oldest = row!.oldest;
      assert.ok(prodId > devId, 'a production event after the last development one');
      await post('/api/admin/features-batch/import', flagImport('dev-flag', 'default'));
      const latest = etagId((await delta(DEV_TOKEN)).headers.etag);
      for (const etag of ['"0"', '0', `"${latest + 1000}"`, '"abc"', '"-1"']) {
        const response = await delta(DEV_TOKEN, etag);
        assert.equal(response.statusCode, 200, etag);
        assert.deepEqual(
          (response.json() as { events: Event[] }).events.map((event) => event.type),
          ['hydration'],
          etag,
        );
        assert.equal(response.headers.etag, `"${latest}"`, etag);
      }
      // A known id still resumes, another environment's too (ids are one sequence).
      const resumed = await delta(DEV_TOKEN, `"${prodId}"`);
      assert.deepEqual(
        (resumed.json() as { events: Event[] }).events.map((event) => [
          event.type,
          event.feature?.name,
        ]),
        [['feature-updated', 'dev-flag']],
      );
      await db.transaction((tx) => compactClientChanges(tx, 1));
      await post('/api/admin/features-batch/import', flagImport('dev-flag-2', 'default'));
      await waitFor(
        async () => (await delta(DEV_TOKEN, `"${oldest}"`)).json().events[0]?.type === 'hydration',
        10_000,
        'the compacted id to hydrate',
      );
    });

    it('hydrates a stream whose Last-Event-ID it did not issue', async () => {
      const latest = etagId((await delta(DEV_TOKEN)).headers.etag);
      for (const id of ['0', String(latest + 1000), 'abc', '1']) {
        const connection = await stream(DEV_TOKEN, { 'last-event-id': id });
        assert.equal(connection.status, 200, id);
        await waitFor(() => connection.events.length >= 1, 10_000, `the first event for ${id}`);
        assert.equal(connection.events[0]!.event, 'unleash-connected', id);
        assert.deepEqual(
          streamEvents(connection).map((event) => event.type),
          ['hydration'],
          id,
        );
        connection.close();
        await connection.ended;
      }
    });
  });

  describe(`delta hydrations from the client-features cache on ${backend.name}`, () => {
    it('answers many identical delta requests with a constant number of database queries', async () => {
      const { db, cleanup } = await backend.open();
      let queries = 0;
      const counting = new Proxy(db, {
        get(target, property, receiver) {
          if (property === 'query') {
            return (...args: Parameters<Database['query']>) => {
              queries++;
              return target.query(...args);
            };
          }
          const value = Reflect.get(target, property, receiver);
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });
      // The revision is trusted for a minute: only requests can cause reads.
      const app = await startApp(counting, { revisionCheckMs: 60_000 });
      try {
        const imported = await app.inject({
          method: 'POST',
          url: '/api/admin/features-batch/import',
          headers: admin,
          payload: flagImport('cached-flag', 'default'),
        });
        assert.equal(imported.statusCode, 200, imported.body);
        const first = await delta(app, undefined);
        assert.equal(first.statusCode, 200);
        await delta(app, '"0"');
        queries = 0;
        for (let i = 0; i < 50; i++) {
          for (const etag of [undefined, '"0"', '"garbage"', '"99999999"']) {
            const response = await delta(app, etag);
            assert.equal(response.statusCode, 200, etag);
            assert.equal(response.json().events[0].type, 'hydration', etag);
          }
        }
        assert.ok(queries <= 5, `${queries} database queries for 200 delta hydrations`);
      } finally {
        await app.close();
        await cleanup();
      }
    });
  });
}

function delta(app: FastifyInstance, etag: string | undefined) {
  return app.inject({
    url: '/api/client/delta',
    headers: { authorization: DEV_TOKEN, ...(etag === undefined ? {} : { 'if-none-match': etag }) },
  });
}
