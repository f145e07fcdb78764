import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { describe, it } from 'node:test';
import { realisticContexts, realisticPayload } from './fixtures/realistic.js';
import { CLIENT_KEY, call, type Listening, startProxy } from './helpers/proxy.js';

/**
 * Evaluation answers are written into scratch memory that the proxy reuses once an answer has gone
 * to the socket (`AnswerWriter.settle`). These tests send never-seen contexts over real sockets,
 * where the memory is reused, and compare every answer with the one `inject` gets for the same
 * request (no socket: fresh memory every time): kept-alive requests one after another, requests
 * pipelined in one packet (an answer waits behind the one before), and a client that stops
 * reading until its socket backs up.
 */

/** `GET /proxy` paths of `count` never-seen contexts (each its own sessionId). */
function paths(count: number, tag: string): string[] {
  return realisticContexts(count).map((context, i) => {
    const query = new URLSearchParams({
      userId: context.userId,
      sessionId: `${tag}-${i}`,
      remoteAddress: context.remoteAddress,
    });
    for (const [name, value] of Object.entries(context.properties))
      query.append(`properties[${name}]`, value);
    return `/proxy?${query}`;
  });
}

interface RawAnswer {
  readonly status: number;
  readonly etag: string | undefined;
  readonly body: string;
}

/**
 * Sends every path as a pipelined GET in one write on one connection; reads nothing for `pauseMs`,
 * then reads all the answers (Content-Length framing).
 */
async function pipelined(base: string, list: string[], pauseMs: number): Promise<RawAnswer[]> {
  const { hostname, port } = new URL(base);
  const socket = connect(Number(port), hostname);
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.pause();
  socket.write(
    list
      .map(
        (path) =>
          `GET ${path} HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: ${CLIENT_KEY}\r\n\r\n`,
      )
      .join(''),
  );
  await new Promise((resolve) => setTimeout(resolve, pauseMs));
  const answers: RawAnswer[] = [];
  let buffered = Buffer.alloc(0);
  await new Promise<void>((resolve, reject) => {
    socket.on('error', reject);
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      for (;;) {
        const headEnd = buffered.indexOf('\r\n\r\n');
        if (headEnd < 0) break;
        const head = buffered.subarray(0, headEnd).toString('latin1');
        const length = Number(/\r\ncontent-length: (\d+)/i.exec(head)?.[1]);
        if (buffered.length < headEnd + 4 + length) break;
        answers.push({
          status: Number(head.split(' ')[1]),
          etag: /\r\netag: ([^\r]+)/i.exec(head)?.[1],
          body: buffered.subarray(headEnd + 4, headEnd + 4 + length).toString('utf8'),
        });
        buffered = buffered.subarray(headEnd + 4 + length);
      }
      if (answers.length === list.length) resolve();
    });
    socket.resume();
  });
  socket.destroy();
  return answers;
}

/** Sends every path as a GET over HTTP (undici's kept-alive connections), one after another. */
async function oneByOne(base: string, list: string[]): Promise<RawAnswer[]> {
  const answers: RawAnswer[] = [];
  for (const path of list) {
    const answer = await call(base, 'GET', path, { headers: { authorization: CLIENT_KEY } });
    answers.push({
      status: answer.status,
      etag: answer.headers.etag as string | undefined,
      body: answer.text,
    });
  }
  return answers;
}

async function assertSameAsInject(run: Listening, list: string[], answers: RawAnswer[]) {
  assert.equal(answers.length, list.length);
  for (let i = 0; i < list.length; i++) {
    const expected = await call(run, 'GET', list[i] as string, {
      headers: { authorization: CLIENT_KEY },
    });
    const answer = answers[i] as RawAnswer;
    assert.equal(answer.status, 200);
    assert.equal(answer.body, expected.text, `answer ${i} (${list[i]})`);
    assert.equal(answer.etag, expected.headers.etag);
  }
}

describe('evaluation answers written into reused memory', () => {
  it('are whole and right for never-seen contexts one after another on a kept-alive connection', async () => {
    const run = await startProxy(realisticPayload(200), {}, { listen: true });
    try {
      await run.proxy.poller.ready;
      const list = paths(300, 'sequential');
      const answers = await oneByOne(run.base, list);
      // Not all the same answer: the contexts differ in what they get.
      assert.ok(new Set(answers.map((answer) => answer.body)).size > 50);
      await assertSameAsInject(run, list, answers);
    } finally {
      await run.close();
    }
  });

  it('are whole and right when pipelined requests wait behind each other', async () => {
    const run = await startProxy(realisticPayload(200), {}, { listen: true });
    try {
      await run.proxy.poller.ready;
      const list = paths(40, 'pipelined');
      await assertSameAsInject(run, list, await pipelined(run.base, list, 0));
    } finally {
      await run.close();
    }
  });

  it('are whole and right when a client stops reading until its socket backs up', async () => {
    // About 70 KB an answer: 160 of them are far more than the kernel's socket buffers take.
    const run = await startProxy(realisticPayload(1000), {}, { listen: true });
    try {
      await run.proxy.poller.ready;
      const stalled = paths(160, 'stalled');
      const reading = paths(20, 'meanwhile');
      const stalledAnswers = pipelined(run.base, stalled, 500);
      // Meanwhile other clients are answered (and the scratch memory is lent to them).
      const others = await oneByOne(run.base, reading);
      await assertSameAsInject(run, reading, others);
      await assertSameAsInject(run, stalled, await stalledAnswers);
    } finally {
      await run.close();
    }
  });

  it('are whole and right when answers written elsewhere are sent while a client is backed up', async () => {
    const run = await startProxy(realisticPayload(1000), {}, { listen: true });
    try {
      await run.proxy.poller.ready;
      const stalled = paths(160, 'stalled-named');
      const reading = paths(20, 'meanwhile-named');
      const stalledAnswers = pipelined(run.base, stalled, 500);
      // Wait until the stalled connection's answers have backed up (the first holds the memory).
      await new Promise((resolve) => setTimeout(resolve, 200));
      const named = JSON.stringify({
        context: { userId: 'user-1' },
        toggles: ['checkout.flag-0', 'search.flag-1'],
      });
      for (const path of reading) {
        // Answers of named toggles and of single flags are strings of their own, not the scratch
        // memory: sending them must not hand that memory back while the stalled answer holds it.
        const asked = await call(run.base, 'POST', '/proxy', {
          headers: { authorization: CLIENT_KEY, 'content-type': 'application/json' },
          body: named,
        });
        assert.equal(asked.status, 200);
        const one = await call(run.base, 'GET', '/proxy/features/search.flag-1?userId=user-1', {
          headers: { authorization: CLIENT_KEY },
        });
        assert.ok(one.status === 200 || one.status === 404);
        await assertSameAsInject(run, [path], await oneByOne(run.base, [path]));
      }
      await assertSameAsInject(run, stalled, await stalledAnswers);
    } finally {
      await run.close();
    }
  });
});
