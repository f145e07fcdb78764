import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { HandedOffResponse } from '@flags/serving';
import { waitFor } from '../../../test/helpers/wait.js';
import {
  ALL_CLIENT,
  auth,
  firstPayload,
  secondPayload,
  startChangingProxy,
} from './helpers/changing-proxy.js';
import { call, type Listening } from './helpers/proxy.js';

/** A TCP connection to the proxy, written to and read from byte for byte. */
class RawConnection {
  text = '';
  closed = false;

  private constructor(readonly socket: Socket) {
    socket.setEncoding('latin1');
    socket.on('data', (data: string) => {
      this.text += data;
    });
    socket.on('close', () => {
      this.closed = true;
    });
    socket.on('error', () => {});
  }

  static open(base: string): Promise<RawConnection> {
    const { hostname, port } = new URL(base);
    return new Promise((resolve, reject) => {
      const socket = connect(Number(port), hostname, () => resolve(new RawConnection(socket)));
      socket.once('error', reject);
    });
  }

  send(text: string): void {
    this.socket.write(text);
  }

  async until(done: (text: string) => boolean, what: string): Promise<string> {
    await waitFor(() => done(this.text), 10_000, what);
    return this.text;
  }

  close(): void {
    this.socket.destroy();
  }
}

const streamRequest = (token: string, extra = '') =>
  `GET /api/client/streaming HTTP/1.1\r\nHost: proxy.test\r\nAuthorization: ${token}\r\n${extra}\r\n`;

interface Head {
  readonly status: string;
  readonly headers: Record<string, string>;
}

/** The status line and headers (minus `date`) of the answer that starts at `from` in `text`. */
function head(text: string, from = 0): Head {
  const end = text.indexOf('\r\n\r\n', from);
  const [status, ...lines] = text.slice(from, end).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).toLowerCase();
    if (name !== 'date') headers[name] = line.slice(colon + 1).trim();
  }
  return { status: status as string, headers };
}

describe('the stream front (streams served below Node’s HTTP server)', () => {
  let run: Listening;
  const opened: RawConnection[] = [];
  const responses: ServerResponse[] = [];
  /** The connections the proxy's server holds. */
  const held = () =>
    new Promise<number>((resolve, reject) =>
      run.proxy.app.server.getConnections((error, count) =>
        error ? reject(error) : resolve(count),
      ),
    );
  const open = async () => {
    const connection = await RawConnection.open(run.base);
    opened.push(connection);
    return connection;
  };

  before(async () => {
    run = await startChangingProxy({ streamingKeepAliveMs: 60_000 }, true);
    await run.proxy.poller.ready;
    run.proxy.app.server.on('request', (_request: IncomingMessage, response: ServerResponse) => {
      responses.push(response);
    });
  });
  after(async () => {
    for (const connection of opened) connection.close();
    await run?.close();
  });

  it('serves a stream on a new connection from its bare socket, byte for byte as Node’s server does on a kept-alive one', async () => {
    const fresh = await open();
    fresh.send(streamRequest(ALL_CLIENT));
    await fresh.until((text) => text.includes('\n\n\r\n'), 'the hydration on the new connection');
    assert.ok(responses.at(-1) instanceof HandedOffResponse, 'served by the front');

    const kept = await open();
    kept.send('GET /proxy/health HTTP/1.1\r\nHost: proxy.test\r\n\r\n');
    await kept.until((text) => text.endsWith('\r\n\r\nok'), 'the health answer');
    const streamStart = kept.text.length;
    kept.send(streamRequest(ALL_CLIENT));
    await kept.until(
      (text) => text.indexOf('\n\n\r\n', streamStart) > 0,
      'the hydration on the kept-alive connection',
    );
    assert.ok(!(responses.at(-1) instanceof HandedOffResponse), 'served by Node’s server');

    // The same head (status, every header, chunked encoding) and the same framed hydration.
    const frontHead = head(fresh.text);
    assert.deepEqual(frontHead, head(kept.text, streamStart));
    assert.equal(frontHead.status, 'HTTP/1.1 200 OK');
    assert.equal(frontHead.headers['transfer-encoding'], 'chunked');
    assert.equal(frontHead.headers['content-type'], 'text/event-stream; charset=utf-8');
    const body = (text: string, from: number) => text.slice(text.indexOf('\r\n\r\n', from) + 4);
    assert.equal(body(fresh.text, 0), body(kept.text, streamStart));
    assert.match(body(fresh.text, 0), /^[0-9a-f]+\r\nevent: unleash-connected\nid: \d+\ndata: /);

    // A change reaches both as the same chunk.
    const sent = [fresh.text.length, kept.text.length] as const;
    run.upstream.setPayload(structuredClone(secondPayload));
    await fresh.until((text) => text.includes('unleash-updated'), 'the change on the front');
    await kept.until((text) => text.includes('unleash-updated'), 'the change on Node’s server');
    await fresh.until((text) => text.endsWith('\n\n\r\n'), 'the whole chunk');
    await kept.until((text) => text.endsWith('\n\n\r\n'), 'the whole chunk');
    assert.equal(fresh.text.slice(sent[0]), kept.text.slice(sent[1]));
    assert.match(fresh.text.slice(sent[0]), /^[0-9a-f]+\r\nevent: unleash-updated\n/);
    run.upstream.setPayload(structuredClone(firstPayload));
  });

  it('answers a refusal as Fastify does, then closes the connection', async () => {
    const count = await held();
    const refused = await open();
    refused.send(streamRequest('not-a-token'));
    await refused.until(() => refused.closed, 'the connection to close');
    await waitFor(async () => (await held()) === count, 10_000, 'the server to close it');
    const answer = head(refused.text);
    const reference = await call(run, 'GET', '/api/client/streaming', auth('not-a-token'));
    assert.equal(answer.status, `HTTP/1.1 ${reference.status} Forbidden`);
    assert.equal(answer.headers.connection, 'close');
    assert.deepEqual(
      JSON.parse(refused.text.slice(refused.text.indexOf('\r\n\r\n') + 4)),
      reference.json(),
    );
    assert.ok(responses.at(-1) instanceof HandedOffResponse);
  });

  it('leaves every other connection to Node’s server: other routes, a head in pieces, pipelined requests, garbage', async () => {
    const other = await open();
    other.send('GET /proxy/health HTTP/1.1\r\nHost: proxy.test\r\n\r\n');
    await other.until((text) => text.endsWith('\r\n\r\nok'), 'the health answer');
    assert.match(other.text, /^HTTP\/1\.1 200 OK\r\n/);
    assert.match(other.text, /connection: keep-alive/i);

    const pieces = await open();
    const request = streamRequest(ALL_CLIENT);
    pieces.send(request.slice(0, 20));
    await new Promise((resolve) => setTimeout(resolve, 50));
    pieces.send(request.slice(20));
    await pieces.until((text) => text.includes('unleash-connected'), 'the stream');
    assert.ok(!(responses.at(-1) instanceof HandedOffResponse));

    const pipelined = await open();
    pipelined.send(request + request);
    await pipelined.until((text) => text.includes('unleash-connected'), 'the first stream');
    assert.ok(!(responses.at(-1) instanceof HandedOffResponse));

    const garbage = await open();
    garbage.send('GET /api/client/streaming HTTP/1.1\r\nHost: a\r\nBad Header\r\n\r\n');
    await garbage.until(() => garbage.closed, 'the connection to close');
    assert.match(garbage.text, /^HTTP\/1\.1 400 Bad Request/);
  });

  it('closes a new connection that sends nothing when Node’s server would', async () => {
    const server = run.proxy.app.server;
    const usual = server.headersTimeout;
    server.headersTimeout = 200;
    try {
      const silent = await open();
      await silent.until(() => silent.closed, 'the silent connection to close');
      assert.equal(silent.text, '');
    } finally {
      server.headersTimeout = usual;
    }
  });

  it('lets a stream go when its client leaves', async () => {
    const leaving = await open();
    leaving.send(streamRequest(ALL_CLIENT));
    await leaving.until((text) => text.includes('\n\n\r\n'), 'the hydration');
    const count = await held();
    leaving.socket.end();
    await waitFor(async () => (await held()) === count - 1, 10_000, 'the stream to close');
  });

  it('ends its streams with the last chunk when the app closes', async () => {
    const fresh = await open();
    fresh.send(streamRequest(ALL_CLIENT));
    await fresh.until((text) => text.includes('\n\n\r\n'), 'the hydration');
    await run.proxy.app.close();
    await fresh.until(() => fresh.closed, 'the stream to end');
    assert.ok(fresh.text.endsWith('0\r\n\r\n'));
  });
});
