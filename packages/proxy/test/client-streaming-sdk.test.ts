import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { after, describe, it } from 'node:test';
import { InMemStorageProvider, Unleash } from 'unleash-client';
import { stopSdk } from '../../../test/helpers/unleash-sdk.js';
import {
  ALL_CLIENT,
  auth,
  firstPayload,
  secondPayload,
  startChangingProxy,
} from './helpers/changing-proxy.js';
import { call, type Listening, waitFor } from './helpers/proxy.js';

/** One request the proxy received, with the headers the SDK resumes with and the answer's status. */
interface Seen {
  readonly path: string;
  readonly lastEventId: string | undefined;
  readonly ifNoneMatch: string | undefined;
  status: number;
}

/** Records every request the listening proxy receives (beside Fastify's own handler). */
function recordRequests(run: Listening): Seen[] {
  const seen: Seen[] = [];
  run.proxy.app.server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const entry: Seen = {
      path: (request.url ?? '').split('?')[0] as string,
      lastEventId: request.headers['last-event-id'] as string | undefined,
      ifNoneMatch: request.headers['if-none-match'],
      status: 0,
    };
    seen.push(entry);
    response.on('finish', () => {
      entry.status = response.statusCode;
    });
  });
  return seen;
}

function sdk(run: Listening, experimentalMode: object): Unleash {
  const unleash = new Unleash({
    url: `${run.base}/api`,
    appName: 'checkout-service',
    instanceId: 'pod-1',
    customHeaders: { Authorization: ALL_CLIENT },
    refreshInterval: 100,
    disableMetrics: true,
    storageProvider: new InMemStorageProvider(),
    experimentalMode: experimentalMode as never,
  });
  // Errors and warnings are read by the assertions through the answers, not thrown.
  unleash.on('error', () => {});
  unleash.on('warn', () => {});
  return unleash;
}

/** The SDK's answers that differ between `firstPayload` and `secondPayload`. */
function answers(unleash: Unleash) {
  return {
    checkout: unleash.isEnabled('checkout'),
    variant: unleash.getVariant('checkout').name,
    beta7: unleash.isEnabled('beta-users', { userId: '7' }),
    beta8: unleash.isEnabled('beta-users', { userId: '8' }),
    retired: unleash.isEnabled('retired'),
    receipts: unleash.isEnabled('receipts'),
  };
}
const FIRST = {
  checkout: true,
  variant: 'blue',
  beta7: true,
  beta8: false,
  retired: true,
  receipts: false,
};
const SECOND = {
  checkout: false,
  variant: 'disabled',
  beta7: true,
  beta8: true,
  retired: false,
  receipts: true,
};

/** The proxy's latest event id, read from the delta ETag. */
async function latestId(run: Listening): Promise<string> {
  const answer = await call(run, 'GET', '/api/client/delta', auth(ALL_CLIENT));
  return String(answer.headers.etag).slice(1, -1);
}

describe('unleash-client 6.12 against flags-proxy: streaming', () => {
  let run: Listening;
  let unleash: Unleash | undefined;
  after(async () => {
    stopSdk(unleash);
    await run?.close();
  });

  it('hydrates, follows changes, and resumes a killed stream without loss', async () => {
    run = await startChangingProxy({}, true);
    await run.proxy.poller.ready;
    const seen = recordRequests(run);
    const sockets: Socket[] = [];
    run.proxy.app.server.on('connection', (socket: Socket) => sockets.push(socket));
    unleash = sdk(run, { type: 'streaming' });
    const client = unleash;
    await waitFor(() => client.isSynchronized());
    assert.deepEqual(answers(client), FIRST);
    assert.ok(seen.some((request) => request.path === '/api/client/streaming'));

    run.upstream.setPayload(structuredClone(secondPayload));
    await waitFor(() => answers(client).receipts);
    assert.deepEqual(answers(client), SECOND);

    // Kill the stream from the proxy's side, then change the flags while the SDK reconnects.
    const before = await latestId(run);
    const streams = seen.filter((request) => request.path === '/api/client/streaming').length;
    // (The proxy serves a stream on its bare socket, which `closeAllConnections` does not know.)
    for (const socket of sockets) socket.destroy();
    run.upstream.setPayload(structuredClone(firstPayload));
    await waitFor(() => answers(client).retired, 15_000);
    assert.deepEqual(answers(client), FIRST);
    const reconnects = seen
      .filter((request) => request.path === '/api/client/streaming')
      .slice(streams);
    assert.ok(reconnects.length >= 1);
    // It came back with the last id it had, so the proxy sent the events since, not a hydration.
    assert.equal(reconnects[0]?.lastEventId, before);
    // Streaming all along: no fall-back to polling.
    assert.ok(!seen.some((request) => request.path === '/api/client/features'));
  });
});

describe('unleash-client 6.12 against flags-proxy: delta polling', () => {
  let run: Listening;
  let unleash: Unleash | undefined;
  after(async () => {
    stopSdk(unleash);
    await run?.close();
  });

  it('hydrates, gets 304 while nothing changes, and applies the changes', async () => {
    run = await startChangingProxy({}, true);
    await run.proxy.poller.ready;
    const seen = recordRequests(run);
    unleash = sdk(run, { type: 'polling', format: 'delta' });
    const client = unleash;
    await waitFor(() => client.isSynchronized());
    assert.deepEqual(answers(client), FIRST);
    const first = await latestId(run);
    // The SDK sends the ETag back as it got it, and is told nothing changed.
    await waitFor(() =>
      seen.some((request) => request.ifNoneMatch === `"${first}"` && request.status === 304),
    );

    run.upstream.setPayload(structuredClone(secondPayload));
    await waitFor(() => answers(client).receipts);
    assert.deepEqual(answers(client), SECOND);
    const deltas = seen.filter((request) => request.path === '/api/client/delta');
    assert.equal(deltas.filter((request) => request.ifNoneMatch === undefined).length, 1);
    assert.ok(!seen.some((request) => request.path === '/api/client/features'));
  });
});
