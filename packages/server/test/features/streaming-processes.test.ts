// Two flags-server processes on one PostgreSQL: a write through one reaches a stream held by the
// other through LISTEN/NOTIFY. The fallback check is set to ten minutes, so only the
// notification can deliver the event within the test's wait.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { waitFor } from '../../../../test/helpers/wait.js';
import { admin, DEV_TOKEN, postgresUrl } from '../helpers.js';
import { type ServerProcess, spawnServer } from '../server-process.js';
import { openSse, type SseConnection } from '../sse-client.js';

const TEN_MINUTES = String(10 * 60_000);

describe('two flags-server processes on one PostgreSQL', { skip: !postgresUrl }, () => {
  const url = postgresUrl!;
  const schema = `streams_${randomBytes(6).toString('hex')}`;
  let a: ServerProcess;
  let b: ServerProcess;
  const streams: SseConnection[] = [];

  const importThrough = async (server: ServerProcess, name: string, enabled: boolean) => {
    const response = await fetch(`${server.base}/api/admin/features-batch/import`, {
      method: 'POST',
      headers: { ...admin, 'content-type': 'application/json' },
      body: JSON.stringify({
        project: 'default',
        environment: 'development',
        data: {
          features: [{ name }],
          featureStrategies: [{ name: 'default', featureName: name, parameters: {} }],
          featureEnvironments: [{ name, featureName: name, enabled }],
          tagTypes: [],
        },
      }),
    });
    assert.equal(response.status, 200, await response.text());
  };

  before(async () => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(`CREATE SCHEMA ${schema}`);
    await client.end();
    const withSchema = new URL(url);
    withSchema.searchParams.set('options', `-c search_path=${schema}`);
    const env = { DATABASE_URL: withSchema.href, REVISION_CHECK_MS: TEN_MINUTES };
    a = await spawnServer(env);
    b = await spawnServer(env);
  });

  after(async () => {
    for (const stream of streams) stream.close();
    for (const server of [a, b]) {
      if (!server) continue;
      server.child.kill('SIGTERM');
      await server.exited;
    }
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await client.end();
  });

  it('delivers a write through A to a stream held by B, and to B’s delta API', async () => {
    // B reads its revision once here and trusts it for ten minutes.
    const first = await fetch(`${b.base}/api/client/delta`, {
      headers: { authorization: DEV_TOKEN },
    });
    assert.equal(first.status, 200);
    const etag = first.headers.get('etag')!;

    const stream = await openSse(`${b.base}/api/client/streaming`, { authorization: DEV_TOKEN });
    streams.push(stream);
    assert.equal(stream.status, 200);
    await waitFor(() => stream.events.length >= 1, 30_000, 'the connected event');
    assert.equal(stream.events[0]!.event, 'unleash-connected');

    await importThrough(a, 'written-through-a', true);
    await waitFor(() => stream.events.length >= 2, 30_000, 'the event on B’s stream');
    const updated = stream.events[1]!;
    assert.equal(updated.event, 'unleash-updated');
    const events = JSON.parse(updated.data).events as {
      type: string;
      feature?: { name: string };
    }[];
    assert.deepEqual(
      events.map((event) => [event.type, event.feature?.name]),
      [['feature-updated', 'written-through-a']],
    );

    // The notification also moved B's revision: its delta API answers with the change at once.
    // (The log was empty at the first call, so its position was 0, which is never resumed from
    // (issue 40): the answer is a hydration, from B's client-features cache, holding the change.)
    assert.equal(etag, '"0"');
    const delta = await fetch(`${b.base}/api/client/delta`, {
      headers: { authorization: DEV_TOKEN, 'if-none-match': etag },
    });
    assert.equal(delta.status, 200);
    const body = (await delta.json()) as {
      events: { type: string; features?: { name: string }[] }[];
    };
    assert.deepEqual(
      body.events.map((event) => [event.type, event.features?.map((feature) => feature.name)]),
      [['hydration', ['written-through-a']]],
    );
    const resumed = await fetch(`${b.base}/api/client/delta`, {
      headers: { authorization: DEV_TOKEN, 'if-none-match': delta.headers.get('etag')! },
    });
    assert.equal(resumed.status, 304);
  });
});
