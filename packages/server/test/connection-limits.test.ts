// Issue #40 (LOW): a request trickled one byte at a time held its connection for ever (Fastify's
// `requestTimeout` was 0), and one address could open any number of connections. Real sockets
// against a listening flags-server: the timeout cuts slow requests but not streams (answers), and
// the per-address cap closes the connection beyond it at once, other addresses and the load
// balancers `trustProxy` lists still served.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import {
  assertCutAfterTimeout,
  getOn,
  openRaw,
  type RawConnection,
} from '../../../test/helpers/raw-socket.js';
import { waitFor } from '../../../test/helpers/wait.js';
import { buildApp } from '../src/app.js';
import { type Database, openPglite } from '../src/db/database.js';
import { DEV_TOKEN, testConfig } from './helpers.js';

const REQUEST_TIMEOUT_MS = 300;

describe('flags-server connection limits', () => {
  let db: Database;
  let app: FastifyInstance;
  let port: number;
  const warnings: { msg: string }[] = [];
  const open: RawConnection[] = [];
  before(async () => {
    db = await openPglite();
    const logger = pino(
      { level: 'warn' },
      { write: (line: string) => warnings.push(JSON.parse(line)) },
    );
    app = await buildApp(
      testConfig({
        requestTimeoutMs: REQUEST_TIMEOUT_MS,
        maxConnectionsPerAddress: 3,
        // 127.0.0.3 plays the load balancer: a trusted proxy, exempt from the cap.
        trustProxy: ['127.0.0.3'],
        streamingKeepAliveMs: 100,
      }),
      { db, logger },
    );
    await app.listen({ port: 0, host: '127.0.0.1' });
    port = (app.server.address() as AddressInfo).port;
  });
  after(async () => {
    for (const connection of open) connection.socket.destroy();
    await app.close();
    await db.close();
  });
  // Each test but the cap's from its own loopback address, so that they do not share the cap.
  const connect = async (from: string) => {
    const connection = await openRaw(port, from);
    open.push(connection);
    return connection;
  };

  it('cuts a body trickled one byte at a time once requestTimeoutMs passes', async () => {
    const connection = await connect('127.0.0.11');
    connection.socket.write(
      'POST /api/client/metrics HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n' +
        `Authorization: ${DEV_TOKEN}\r\nContent-Length: 1000\r\n\r\n`,
    );
    // 1,000 bytes at one per 50 ms would take 50 s; Node cuts it long before, with a 408.
    await assertCutAfterTimeout(connection, '{'.padEnd(1000, ' '), 10 * REQUEST_TIMEOUT_MS);
  });

  it('leaves a stream open past requestTimeoutMs', async () => {
    const connection = await connect('127.0.0.12');
    assert.equal(await getOn(connection, '/health'), 200);
    assert.equal(
      await getOn(connection, '/api/client/streaming', { authorization: DEV_TOKEN }),
      200,
    );
    await new Promise((resolve) => setTimeout(resolve, 4 * REQUEST_TIMEOUT_MS));
    const seen = connection.received().length;
    await waitFor(
      () => connection.received().length > seen,
      2000,
      'keep-alive comments after 4× the timeout',
    );
    assert.equal(connection.closed(), false);
  });

  it('closes a connection beyond maxConnectionsPerAddress at once, and serves other addresses', async () => {
    for (let index = 0; index < 3; index++) {
      const connection = await connect('127.0.0.1');
      assert.equal(await getOn(connection, '/health'), 200);
    }
    for (let index = 0; index < 4; index++) {
      const refused = await connect('127.0.0.1');
      await waitFor(() => refused.closed(), 2000, 'the connection over the cap to be closed');
      assert.equal(refused.received(), '');
    }
    assert.equal(await getOn(await connect('127.0.0.2'), '/health'), 200);
    for (let index = 0; index < 5; index++) {
      assert.equal(await getOn(await connect('127.0.0.3'), '/health'), 200);
    }
    const refusals = warnings.filter((line) => line.msg.includes('maxConnectionsPerAddress'));
    assert.equal(refusals.length, 1, JSON.stringify(warnings));
  });
});
