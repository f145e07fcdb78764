import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { waitFor } from '../../../../test/helpers/wait.js';
import type { Database } from '../../src/db/database.js';
import { backends, DEV_TOKEN, PROD_TOKEN, startApp } from '../helpers.js';
import { openSse, type SseConnection } from '../sse-client.js';

/**
 * Issue #40 ("one key takes every event-stream slot"): one token from one address used to open
 * every stream the server accepts, and every other client got 429. Over real sockets on the
 * loopback range, so each client has an address of its own (127.0.0.1 the attacker).
 */

const ATTACKER = '127.0.0.1';
const NEIGHBOUR = '127.0.0.2';
const THIRD = '127.0.0.3';
const MAX_STREAMS = 6;
const PER_ADDRESS = 2;
const PER_TOKEN = 4;

for (const backend of backends) {
  describe(`fair shares of the client streams on ${backend.name}`, () => {
    let db: Database;
    let cleanup: () => Promise<void>;
    let app: FastifyInstance;
    let url: string;
    const held: SseConnection[] = [];
    const stream = async (token: string, from: string) => {
      const connection = await openSse(
        url,
        { authorization: token, 'unleash-client-spec': '5.2.0' },
        { from },
      );
      held.push(connection);
      return connection;
    };
    /** Opens streams until one is refused (at most `MAX_STREAMS + 1`). */
    const openUntilRefused = async (token: string, from: string) => {
      let opened = 0;
      for (let attempt = 0; attempt <= MAX_STREAMS; attempt++) {
        const connection = await stream(token, from);
        if (connection.status !== 200) return { opened, refused: connection };
        opened++;
      }
      assert.fail(`${MAX_STREAMS + 1} streams opened: the global cap did not hold`);
    };
    const assertRefusal = async (refused: SseConnection, detail: RegExp) => {
      assert.equal(refused.status, 429);
      assert.ok(Number(refused.headers['retry-after']) > 0, 'a Retry-After');
      const error = JSON.parse(await refused.body);
      assert.equal(error.name, 'RateLimitError');
      assert.match(error.details[0].message, detail);
    };

    before(async () => {
      ({ db, cleanup } = await backend.open());
      app = await startApp(db, {
        streamingMaxConnections: MAX_STREAMS,
        streamingMaxConnectionsPerAddress: PER_ADDRESS,
        streamingMaxConnectionsPerToken: PER_TOKEN,
      });
      await app.listen({ port: 0, host: '127.0.0.1' });
      url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/api/client/streaming`;
    });
    after(async () => {
      for (const connection of held) connection.close();
      await app.close();
      await cleanup();
    });

    it('leaves a stream for a client at another address while one address holds its share', async () => {
      const attack = await openUntilRefused(DEV_TOKEN, ATTACKER);
      const neighbour = await stream(DEV_TOKEN, NEIGHBOUR);
      assert.equal(neighbour.status, 200);
      assert.equal(attack.opened, PER_ADDRESS);
      await assertRefusal(attack.refused, /address/);
    });

    it('leaves streams for other tokens while one token holds its share', async () => {
      // The attacker's 2 and the neighbour's 1 are open: one more of this token, from a third address.
      const third = await openUntilRefused(DEV_TOKEN, THIRD);
      assert.equal(third.opened, PER_TOKEN - PER_ADDRESS - 1);
      await assertRefusal(third.refused, /token/);
      assert.equal((await stream(PROD_TOKEN, THIRD)).status, 200);
    });

    it('gives a share back when its streams close', async () => {
      for (const connection of held) connection.close();
      await Promise.all(held.map((connection) => connection.ended));
      await waitFor(
        async () => (await stream(DEV_TOKEN, ATTACKER)).status === 200,
        10_000,
        'a stream from the attacker’s address again',
      );
    });
  });
}
