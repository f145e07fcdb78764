// Issue #40 (LOW): a request trickled one byte at a time held its connection for ever (Fastify's
// `requestTimeout` was 0), and one address could open any number of connections. Real sockets
// against a listening proxy: the timeout cuts slow requests but not event streams (answers), and
// the per-address cap closes the connection beyond it at once, other addresses and the load
// balancers `trustProxy` lists still served.
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type { AddressInfo, Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { ConnectionCap } from '@flags/serving';
import {
  assertCutAfterTimeout,
  getOn,
  openRaw,
  type RawConnection,
  trickle,
} from '../../../test/helpers/raw-socket.js';
import { waitFor } from '../../../test/helpers/wait.js';
import { ALL_CLIENT, auth, startChangingProxy } from './helpers/changing-proxy.js';
import type { Listening } from './helpers/proxy.js';
import { SseClient } from './helpers/sse.js';

const REQUEST_TIMEOUT_MS = 300;
const portOf = (run: Listening) => (run.proxy.app.server.address() as AddressInfo).port;

describe('requestTimeoutMs', () => {
  let run: Listening;
  const open: RawConnection[] = [];
  before(async () => {
    run = await startChangingProxy(
      { requestTimeoutMs: REQUEST_TIMEOUT_MS, streamingKeepAliveMs: 100 },
      true,
    );
    await run.proxy.poller.ready;
  });
  after(async () => {
    for (const connection of open) connection.socket.destroy();
    await run.close();
  });
  const connect = async () => {
    const connection = await openRaw(portOf(run));
    open.push(connection);
    return connection;
  };

  it('cuts a body trickled one byte at a time once the timeout passes', async () => {
    const connection = await connect();
    const head =
      'POST /api/client/metrics HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n' +
      `Authorization: ${ALL_CLIENT}\r\nContent-Length: 1000\r\n\r\n`;
    connection.socket.write(head);
    // 1,000 bytes at one per 50 ms would take 50 s; Node cuts it long before, with a 408.
    await assertCutAfterTimeout(connection, '{'.padEnd(1000, ' '), 10 * REQUEST_TIMEOUT_MS);
  });

  it('cuts request headers trickled one byte at a time', async () => {
    const connection = await connect();
    const head = `GET /proxy HTTP/1.1\r\nHost: test\r\nX-Slow: ${'a'.repeat(1000)}\r\n\r\n`;
    const closed = await trickle(connection, head, 50, 10 * REQUEST_TIMEOUT_MS);
    assert.ok(closed, 'the trickled head still holds its connection after 10× the timeout');
  });

  it('leaves event streams open past it, on a new connection and on a kept-alive one', async () => {
    const fresh = await SseClient.open(
      `${run.base}/api/client/streaming`,
      auth(ALL_CLIENT).headers,
    );
    assert.equal(fresh.response.status, 200);
    // A stream asked for on a connection that already served a request goes through Node's parser.
    const keptAlive = await connect();
    assert.equal(await getOn(keptAlive, '/internal-backstage/health'), 200);
    assert.equal(
      await getOn(keptAlive, '/api/client/streaming', { authorization: ALL_CLIENT }),
      200,
    );
    await new Promise((resolve) => setTimeout(resolve, 4 * REQUEST_TIMEOUT_MS));
    const [freshComments, keptAliveText] = [fresh.comments.length, keptAlive.received().length];
    // Keep-alive comments still arrive on both after 4× the timeout.
    await waitFor(
      () => fresh.comments.length > freshComments && keptAlive.received().length > keptAliveText,
      2000,
      'keep-alive comments on both streams',
    );
    assert.equal(fresh.ended, false);
    assert.equal(keptAlive.closed(), false);
    fresh.close();
  });
});

describe('maxConnectionsPerAddress', () => {
  let run: Listening;
  const open: RawConnection[] = [];
  before(async () => {
    run = await startChangingProxy(
      // 127.0.0.3 plays the load balancer: a trusted proxy, exempt from the cap.
      { maxConnectionsPerAddress: 3, trustProxy: ['127.0.0.3'] },
      true,
    );
    await run.proxy.poller.ready;
  });
  after(async () => {
    for (const connection of open) connection.socket.destroy();
    await run.close();
  });
  const connect = async (from: string) => {
    const connection = await openRaw(portOf(run), from);
    open.push(connection);
    return connection;
  };
  const refusalLines = () =>
    run.log.lines.filter((line) => line.message.includes('maxConnectionsPerAddress'));

  it('closes a connection beyond the cap at once, and serves other addresses', async () => {
    const held = [];
    for (let index = 0; index < 3; index++) {
      const connection = await connect('127.0.0.1');
      // Answered: the proxy has counted it.
      assert.equal(await getOn(connection, '/internal-backstage/health'), 200);
      held.push(connection);
    }
    for (let index = 0; index < 4; index++) {
      const refused = await connect('127.0.0.1');
      await waitFor(() => refused.closed(), 2000, 'the connection over the cap to be closed');
      assert.equal(refused.received(), '');
    }
    for (const connection of held) assert.equal(connection.closed(), false);

    const other = await connect('127.0.0.2');
    assert.equal(await getOn(other, '/internal-backstage/health'), 200);
    const balancer = await Promise.all([1, 2, 3, 4, 5].map(() => connect('127.0.0.3')));
    for (const connection of balancer) {
      assert.equal(await getOn(connection, '/internal-backstage/health'), 200);
    }

    // Counted, and said once rather than once per connection.
    assert.equal(refusalLines().length, 1, run.log.text());
    assert.match(refusalLines()[0]?.message ?? '', /127\.0\.0\.1|refused/);
    assert.equal(await getOn(other, '/internal-backstage/metrics'), 200);
    await waitFor(
      () => /^flags_proxy_connections_refused_total 4$/m.test(other.received()),
      2000,
      'the refusals in Prometheus',
    );

    // A closed connection frees its place.
    held[0]?.socket.destroy();
    await waitFor(
      async () => {
        const again = await connect('127.0.0.1');
        await new Promise((resolve) => setTimeout(resolve, 50));
        return !again.closed() && (await getOn(again, '/internal-backstage/health')) === 200;
      },
      2000,
      'a place for 127.0.0.1 after one of its connections closed',
    );
  });
});

describe('ConnectionCap', () => {
  /** A socket as the cap sees it: an address, `destroy` and `close`. */
  const socketFrom = (remoteAddress: string) =>
    Object.assign(new EventEmitter(), {
      remoteAddress,
      destroyed: false,
      destroy() {
        this.destroyed = true;
      },
    });

  it('counts IPv6 peers by /64 and IPv4-mapped peers as IPv4, and frees a place on close', () => {
    const cap = new ConnectionCap({ maxPerAddress: 2, log: { warn() {} } });
    const admit = (address: string) => cap.admit(socketFrom(address) as unknown as Socket);
    const first = socketFrom('2001:db8:1:2::1');
    assert.equal(cap.admit(first as unknown as Socket), true);
    assert.equal(admit('2001:db8:1:2:ffff::9'), true);
    // A third address of the same /64 is one too many; another /64 is not.
    assert.equal(admit('2001:db8:1:2::3'), false);
    assert.equal(admit('2001:db8:1:3::1'), true);
    assert.equal(admit('::ffff:192.0.2.1'), true);
    assert.equal(admit('192.0.2.1'), true);
    assert.equal(admit('192.0.2.1'), false);
    assert.equal(cap.refused, 2);
    first.emit('close');
    assert.equal(cap.openFrom('2001:db8:1:2::77'), 1);
    assert.equal(admit('2001:db8:1:2::3'), true);
  });
});
