import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { describe, it } from 'node:test';
import { openPglite } from '../src/db/database.js';
import { startApp } from './helpers.js';

/**
 * A request that reaches flags-server after shutdown began (its connection was busy, so it was not
 * closed with the idle ones) is answered 503 in the error shape of every other error, with
 * `Connection: close`, and the server still closes.
 */
describe('flags-server while closing', () => {
  it('answers a request that arrives during shutdown with a 503 in the error shape', async () => {
    const db = await openPglite();
    const app = await startApp(db);
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as AddressInfo;
    const socket = connect(port, '127.0.0.1');
    let raw = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk) => {
      raw += chunk;
    });
    const ended = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    try {
      await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
      // Half a request: the connection is busy, so closing does not drop it as idle.
      socket.write('GET /health HTTP/1.1\r\nHost: flags\r\n');
      await new Promise((resolve) => setTimeout(resolve, 50));
      const closed = app.close();
      await new Promise((resolve) => setTimeout(resolve, 50));
      socket.write('\r\n');
      await ended;
      await closed;
      const [head, body] = raw.split('\r\n\r\n') as [string, string];
      assert.match(head, /^HTTP\/1\.1 503 /);
      assert.match(head, /\r\nconnection: close/i);
      assert.match(head, /\r\ncontent-type: application\/json/i);
      assert.match(head, /\r\nx-content-type-options: nosniff\r\n/i);
      assert.deepEqual(JSON.parse(body), {
        code: 'SHUTTING_DOWN',
        name: 'ServiceUnavailableError',
        message: 'The server is shutting down: send the request to another instance, or retry.',
        details: [
          {
            message: 'The server is shutting down: send the request to another instance, or retry.',
          },
        ],
      });
    } finally {
      socket.destroy();
      await db.close();
    }
  });
});
