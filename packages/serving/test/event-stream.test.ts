import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, describe, it } from 'node:test';
import Fastify from 'fastify';
import { EventStreamHub, eventFrame } from '../src/http/event-stream.js';

describe('event streams', () => {
  it('formats frames with event, id and one data line per line of data', () => {
    assert.equal(
      eventFrame({ event: 'unleash-updated', id: 7, data: 'a\nb' }),
      'event: unleash-updated\nid: 7\ndata: a\ndata: b\n\n',
    );
    assert.equal(eventFrame({ data: '{}' }), 'data: {}\n\n');
  });

  it('streams broadcasts to matching topics, refuses beyond its bound and forgets closed streams', async () => {
    const hub = new EventStreamHub<string>({ maxStreams: 2, keepAliveMs: 50 });
    const app = Fastify();
    app.get<{ Querystring: { topic: string } }>('/events', (request, reply) => {
      reply.header('x-custom', 'kept');
      const stream = hub.open(reply, request.query.topic);
      if (!stream) return reply.code(429).send({ error: 'too many streams' });
      stream.send({ event: 'hello', data: request.query.topic });
      return reply;
    });
    app.addHook('onClose', async () => hub.closeAll());
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    after(() => app.close());

    const reader = async (topic: string) => {
      const response = await fetch(`${url}/events?topic=${topic}`);
      return { response, body: (response.body as ReadableStream<Uint8Array>).getReader() };
    };
    const read = async (body: ReadableStreamDefaultReader<Uint8Array>, until: string) => {
      let text = '';
      while (!text.includes(until)) {
        const chunk = await body.read();
        if (chunk.done) break;
        text += Buffer.from(chunk.value).toString();
      }
      return text;
    };

    const a = await reader('a');
    const b = await reader('b');
    assert.equal(a.response.status, 200);
    assert.equal(a.response.headers.get('content-type'), 'text/event-stream; charset=utf-8');
    assert.equal(a.response.headers.get('x-custom'), 'kept');
    assert.match(await read(a.body, 'data: a'), /event: hello\ndata: a\n\n/);
    assert.match(await read(b.body, 'data: b'), /event: hello\ndata: b\n\n/);

    const refused = await fetch(`${url}/events?topic=c`);
    assert.equal(refused.status, 429);

    assert.equal(
      hub.broadcast({ event: 'change', data: 'for a' }, (topic) => topic === 'a'),
      1,
    );
    assert.match(await read(a.body, 'for a'), /event: change\ndata: for a/);
    assert.match(await read(b.body, 'keep-alive'), /^: keep-alive\n\n/m);

    await a.body.cancel();
    for (let i = 0; i < 100 && hub.size > 1; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(hub.size, 1);
    // The closed stream left, the open one stayed.
    assert.equal(
      hub.broadcast({ data: 'still b' }, (topic) => topic === 'b'),
      1,
    );
    assert.equal(
      hub.broadcast({ data: 'not a' }, (topic) => topic === 'a'),
      0,
    );
    const c = await reader('c');
    assert.equal(c.response.status, 200);
    await c.body.cancel();
    await b.body.cancel();
  });

  it('closes a stream whose client stopped reading once too much waits for it, and keeps a reading one', async () => {
    const hub = new EventStreamHub<string>({
      maxStreams: 10,
      keepAliveMs: 0,
      maxPendingBytes: 64 * 1024,
    });
    const app = Fastify();
    app.get<{ Querystring: { topic: string } }>('/events', (request, reply) => {
      const stream = hub.open(reply, request.query.topic);
      stream?.send({ event: 'hello', data: request.query.topic });
      return reply;
    });
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    after(async () => {
      hub.closeAll();
      await app.close();
    });
    const { port } = new URL(url);
    // A client that reads the head, then nothing more (its socket stays open).
    const stalled = connect(Number(port), '127.0.0.1');
    stalled.write(`GET /events?topic=stalled HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
    await new Promise((resolve) => stalled.once('data', resolve));
    stalled.pause();
    let stalledClosed = false;
    stalled.on('close', () => {
      stalledClosed = true;
    });
    // A client that reads everything.
    const reading = (await fetch(`${url}/events?topic=reading`)).body as ReadableStream<Uint8Array>;
    let received = 0;
    const drained = (async () => {
      for await (const chunk of reading) received += chunk.byteLength;
    })();
    for (let i = 0; i < 100 && hub.size < 2; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(hub.size, 2);

    // 200 frames of 48 KB, about 10 MB, far beyond what the kernel's buffers take for the stalled
    // client; the reading client takes each before the next.
    const frame = { data: 'x'.repeat(48 * 1024) };
    let sentToStalled = 0;
    for (let i = 0; i < 200; i++) {
      sentToStalled += hub.broadcast(frame, (topic) => topic === 'stalled');
      const before = received;
      assert.equal(
        hub.broadcast(frame, (topic) => topic === 'reading'),
        1,
      );
      for (let wait = 0; wait < 500 && received < before + 48 * 1024; wait++)
        await new Promise((r) => setTimeout(r, 1));
    }
    assert.ok(
      sentToStalled < 200,
      `stopped sending to the stalled client (${sentToStalled} frames)`,
    );
    assert.equal(hub.size, 1, 'the reading client still has its stream');
    // Reading again, the stalled client finds its connection closed.
    stalled.on('error', () => {});
    stalled.resume();
    for (let i = 0; i < 200 && !stalledClosed; i++) await new Promise((r) => setTimeout(r, 10));
    assert.ok(stalledClosed, 'the stalled client was disconnected');
    assert.equal(
      hub.broadcast({ data: 'still here' }, (topic) => topic === 'reading'),
      1,
    );
    stalled.destroy();
    hub.closeAll();
    await drained;
  });
});
