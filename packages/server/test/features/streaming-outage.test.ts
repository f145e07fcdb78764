// A stream held by a server whose PostgreSQL connections (its LISTEN connection among them) go
// through a relay that is cut: a change written meanwhile by another server reaches the stream
// once the relay is restored, because the server listens again and reads what it missed. The
// fallback check is ten minutes, so only the re-listen can deliver it within the test's wait.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { waitFor } from '../../../../test/helpers/wait.js';
import { buildApp } from '../../src/app.js';
import { type Database, openPostgres } from '../../src/db/database.js';
import { admin, DEV_TOKEN, postgresUrl, testConfig } from '../helpers.js';
import { openSse, type SseConnection } from '../sse-client.js';
import { startTcpRelay, type TcpRelay } from '../tcp-relay.js';

describe('streaming through a database outage', { skip: !postgresUrl }, () => {
  const url = postgresUrl!;
  const schema = `outage_${randomBytes(6).toString('hex')}`;
  let relay: TcpRelay;
  let behindRelay: Database;
  let direct: Database;
  let held: FastifyInstance;
  let writer: FastifyInstance;
  let stream: SseConnection | undefined;

  before(async () => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(`CREATE SCHEMA ${schema}`);
    await client.end();
    relay = await startTcpRelay(url);
    direct = openPostgres(url, { schema, maxConnections: 2 });
    writer = await buildApp(testConfig(), { db: direct, logger: false });
    behindRelay = openPostgres(relay.url, { schema, maxConnections: 2, connectTimeoutMs: 1000 });
    held = await buildApp(testConfig({ revisionCheckMs: 600_000, databaseRetryMs: 100 }), {
      db: behindRelay,
      logger: false,
    });
    await held.listen({ port: 0, host: '127.0.0.1' });
  });

  after(async () => {
    stream?.close();
    await held?.close();
    await writer?.close();
    await behindRelay?.close();
    await direct?.close();
    await relay?.close();
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await client.end();
  });

  const importFlag = async (name: string) => {
    const imported = await writer.inject({
      method: 'POST',
      url: '/api/admin/features-batch/import',
      headers: admin,
      payload: {
        project: 'default',
        environment: 'development',
        data: {
          features: [{ name }],
          featureStrategies: [{ name: 'default', featureName: name }],
          featureEnvironments: [{ name, enabled: true }],
          tagTypes: [],
        },
      },
    });
    assert.equal(imported.statusCode, 200, imported.body);
  };

  it('delivers a change written while the relay was cut once it is restored; delta answers from memory meanwhile', async () => {
    const port = (held.server.address() as AddressInfo).port;
    // The relay is cut the moment the first change arrives: the server is still reading the rest
    // of what that change moved (the compaction floors) when its database goes.
    stream = await openSse(
      `http://127.0.0.1:${port}/api/client/streaming`,
      { authorization: DEV_TOKEN },
      { onEvent: () => stream?.events.length === 2 && relay.cut('reset') },
    );
    assert.equal(stream.status, 200);
    await waitFor(() => stream!.events.length >= 1, 30_000, 'the connected event');
    // A first change through the other server: the stream is caught up and the LISTEN works.
    await importFlag('written-before-outage');
    await waitFor(() => stream!.events.length >= 2, 30_000, 'the event before the outage');

    await importFlag('written-during-outage');
    // The stream itself is between the test and the server, not through the relay: still open.
    assert.equal(stream.isEnded(), false);
    assert.equal(stream.events.length, 2);
    // The delta API: 304 from memory for a client that is up to date; a hydration from the
    // client-features cache (the last configuration built, with the event id it reflects, as
    // /api/client/features answers meanwhile).
    const current = await held.inject({
      url: '/api/client/delta',
      headers: { authorization: DEV_TOKEN, 'if-none-match': `"${stream.events[1]!.id}"` },
    });
    assert.equal(current.statusCode, 304, current.body);
    const hydration = await held.inject({
      url: '/api/client/delta',
      headers: { authorization: DEV_TOKEN },
    });
    assert.equal(hydration.statusCode, 200, hydration.body);
    const [hydrated] = (hydration.json() as { events: { type: string; eventId: number }[] }).events;
    assert.equal(hydrated!.type, 'hydration');
    assert.equal(hydration.headers.etag, `"${hydrated!.eventId}"`);

    relay.restore();
    await waitFor(() => stream!.events.length >= 3, 30_000, 'the event after the outage');
    const events = JSON.parse(stream.events[2]!.data).events as {
      type: string;
      feature?: { name: string };
    }[];
    assert.deepEqual(
      events.map((event) => [event.type, event.feature?.name]),
      [['feature-updated', 'written-during-outage']],
    );
  });
});
