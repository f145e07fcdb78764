import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ALL_CLIENT, BILLING_CLIENT, startChangingProxy } from './helpers/changing-proxy.js';
import { type OpenedStream, openEventStream } from './helpers/event-stream-client.js';
import { CLIENT_KEY, call, type Listening, startProxy, waitFor } from './helpers/proxy.js';

/**
 * Issue #40 ("one key takes every event-stream slot"): an attacker holding only the public key,
 * from one address, used to open every stream a process accepts, and every other client got 429.
 * These run on the loopback range over real sockets, so each client has an address of its own
 * (127.0.0.1 the attacker, 127.0.0.2 and 127.0.0.3 other clients).
 */

const ATTACKER = '127.0.0.1';
const NEIGHBOUR = '127.0.0.2';
const THIRD = '127.0.0.3';
/** The global cap of each suite: more than any one address or key may hold. */
const MAX_STREAMS = 6;
const PER_ADDRESS = 2;
const PER_KEY = 4;
const OTHER_KEY = 'client-key-2';

/** Opens streams until one is refused (at most `MAX_STREAMS + 1`); returns the open ones and the refusal. */
async function openUntilRefused(
  open: () => Promise<OpenedStream>,
  held: OpenedStream[],
): Promise<{ readonly opened: OpenedStream[]; readonly refused: OpenedStream }> {
  const opened: OpenedStream[] = [];
  for (let attempt = 0; attempt <= MAX_STREAMS; attempt++) {
    const stream = await open();
    held.push(stream);
    if (stream.status !== 200) return { opened, refused: stream };
    opened.push(stream);
  }
  assert.fail(`${MAX_STREAMS + 1} streams opened: the global cap did not hold`);
}

function assertRefusal(refused: OpenedStream, detail: RegExp): void {
  assert.equal(refused.status, 429);
  assert.ok(Number(refused.headers['retry-after']) > 0, 'a Retry-After');
  const error = JSON.parse(refused.text);
  assert.equal(error.name, 'RateLimitError');
  assert.match(error.details[0].message, detail);
}

describe('fair shares of the OFREP event streams', () => {
  let run: Listening;
  const held: OpenedStream[] = [];
  /** The stream URL of a bulk answer to `key`. */
  const streamUrl = async (key: string) => {
    const answer = await call(run.base, 'POST', '/ofrep/v1/evaluate/flags', {
      headers: { authorization: key, 'content-type': 'application/json' },
      body: JSON.stringify({ context: { targetingKey: 'u1' } }),
    });
    assert.equal(answer.status, 200, answer.text);
    return new URL(answer.json().eventStreams[0].endpoint.requestUri, run.base).href;
  };

  before(async () => {
    run = await startProxy(
      { version: 2, features: [{ name: 'first', enabled: true, strategies: [] }] },
      {
        metricsInterval: 0,
        clientKeys: [CLIENT_KEY, OTHER_KEY],
        ofrepEventStreamsMax: MAX_STREAMS,
        ofrepEventStreamsMaxPerAddress: PER_ADDRESS,
        ofrepEventStreamsMaxPerKey: PER_KEY,
      },
      { listen: true },
    );
    await run.proxy.poller.ready;
  });
  after(async () => {
    for (const stream of held) stream.close();
    await run.close();
  });

  it('leaves a stream for a client at another address while one address holds its share', async () => {
    const url = await streamUrl(CLIENT_KEY);
    const attack = await openUntilRefused(() => openEventStream(url, {}, ATTACKER), held);
    const neighbour = await openEventStream(url, {}, NEIGHBOUR);
    held.push(neighbour);
    assert.equal(neighbour.status, 200, neighbour.text);
    assert.equal(attack.opened.length, PER_ADDRESS);
    assertRefusal(attack.refused, /address/);
  });

  it('leaves streams for other keys while one key holds its share', async () => {
    const url = await streamUrl(CLIENT_KEY);
    // The attacker's 2 and the neighbour's 1 are open: one more of this key, from a third address.
    const third = await openUntilRefused(() => openEventStream(url, {}, THIRD), held);
    assert.equal(third.opened.length, PER_KEY - PER_ADDRESS - 1);
    assertRefusal(third.refused, /key/);
    const otherKey = await openEventStream(await streamUrl(OTHER_KEY), {}, THIRD);
    held.push(otherKey);
    assert.equal(otherKey.status, 200, otherKey.text);
  });

  it('gives a share back when its streams close', async () => {
    const url = await streamUrl(OTHER_KEY);
    for (const stream of held) stream.close();
    await waitFor(async () => {
      const again = await openEventStream(url, {}, ATTACKER);
      held.push(again);
      return again.status === 200;
    }, 10_000);
  });
});

describe('fair shares of the client streams', () => {
  let run: Listening;
  const held: OpenedStream[] = [];
  const url = () => `${run.base}/api/client/streaming`;

  before(async () => {
    run = await startChangingProxy(
      {
        metricsInterval: 0,
        streamingMaxConnections: MAX_STREAMS,
        streamingMaxConnectionsPerAddress: PER_ADDRESS,
        streamingMaxConnectionsPerToken: PER_KEY,
      },
      true,
    );
    await run.proxy.poller.ready;
  });
  after(async () => {
    for (const stream of held) stream.close();
    await run.close();
  });

  it('leaves a stream for a client at another address while one address holds its share', async () => {
    const attack = await openUntilRefused(
      () => openEventStream(url(), { authorization: ALL_CLIENT }, ATTACKER),
      held,
    );
    const neighbour = await openEventStream(url(), { authorization: ALL_CLIENT }, NEIGHBOUR);
    held.push(neighbour);
    assert.equal(neighbour.status, 200, neighbour.text);
    assert.equal(attack.opened.length, PER_ADDRESS);
    assertRefusal(attack.refused, /address/);
  });

  it('leaves streams for other tokens while one token holds its share', async () => {
    const third = await openUntilRefused(
      () => openEventStream(url(), { authorization: ALL_CLIENT }, THIRD),
      held,
    );
    assert.equal(third.opened.length, PER_KEY - PER_ADDRESS - 1);
    assertRefusal(third.refused, /token/);
    const otherToken = await openEventStream(url(), { authorization: BILLING_CLIENT }, THIRD);
    held.push(otherToken);
    assert.equal(otherToken.status, 200, otherToken.text);
  });

  it('gives a share back when its streams close', async () => {
    for (const stream of held) stream.close();
    await waitFor(async () => {
      const again = await openEventStream(url(), { authorization: ALL_CLIENT }, ATTACKER);
      held.push(again);
      return again.status === 200;
    }, 10_000);
  });
});
