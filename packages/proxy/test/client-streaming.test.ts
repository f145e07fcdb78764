import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  ALL_CLIENT,
  auth,
  BILLING_CLIENT,
  FRONTEND,
  firstPayload,
  secondPayload,
  startChangingProxy,
} from './helpers/changing-proxy.js';
import { call, type Listening, waitFor } from './helpers/proxy.js';
import { SseClient } from './helpers/sse.js';

const names = (payload: { features: ReadonlyArray<{ name: string }> }) =>
  payload.features.map((feature) => feature.name).sort();

describe('GET /api/client/streaming', () => {
  let run: Listening;
  const open: SseClient[] = [];
  const stream = async (token: string, headers: Record<string, string> = {}) => {
    const client = await SseClient.open(
      `${run.base}/api/client/streaming`,
      auth(token, headers).headers,
    );
    open.push(client);
    return client;
  };

  before(async () => {
    run = await startChangingProxy({ streamingKeepAliveMs: 100 }, true);
    await run.proxy.poller.ready;
  });
  after(async () => {
    for (const client of open) client.close();
    await run.close();
  });

  it('refuses callers without a client token', async () => {
    assert.equal((await stream('')).response.status, 401);
    const frontend = await stream(FRONTEND);
    assert.equal(frontend.response.status, 403);
    // No bodiless HEAD streams holding a slot.
    assert.equal((await call(run, 'HEAD', '/api/client/streaming', auth(ALL_CLIENT))).status, 404);
    assert.equal(((await frontend.response.json()) as { name: string }).name, 'InvalidTokenError');
  });

  let connectedId: string;
  let all: SseClient;
  let billing: SseClient;

  it('starts with unleash-connected carrying a hydration of the token’s scope', async () => {
    all = await stream(ALL_CLIENT);
    assert.equal(all.response.status, 200);
    assert.equal(all.response.headers.get('content-type'), 'text/event-stream; charset=utf-8');
    assert.equal(all.response.headers.get('cache-control'), 'no-cache');
    await all.received(1);
    const [connected] = all.named('unleash-connected');
    assert.ok(connected);
    connectedId = String(connected.id);
    assert.match(connectedId, /^\d+$/);
    assert.deepEqual(connected.data, {
      events: [
        {
          eventId: Number(connectedId),
          type: 'hydration',
          features: firstPayload.features,
          segments: firstPayload.segments,
        },
      ],
    });

    billing = await stream(BILLING_CLIENT);
    await billing.received(1);
    const [billingConnected] = billing.named('unleash-connected');
    assert.deepEqual(names(billingConnected?.data.events[0]), ['beta-users', 'invoice']);
  });

  it('sends keep-alive comments on idle streams', async () => {
    await waitFor(() => all.comments.length >= 2);
    assert.equal(all.comments[0]?.trim(), 'keep-alive');
  });

  it('sends unleash-updated with the events of each change, per scope', async () => {
    run.upstream.setPayload(structuredClone(secondPayload));
    await all.received(2);
    const [updated] = all.named('unleash-updated');
    assert.ok(updated);
    const first = Number(connectedId);
    assert.equal(updated.id, String(first + 7));
    assert.deepEqual(
      updated.data.events.map((event: { type: string; eventId: number }) => [
        event.type,
        event.eventId,
      ]),
      [
        ['feature-updated', first + 1],
        ['feature-removed', first + 2],
        ['feature-updated', first + 3],
        ['feature-updated', first + 4],
        ['feature-removed', first + 5],
        ['segment-updated', first + 6],
        ['segment-removed', first + 7],
      ],
    );
    await billing.received(2);
    const [billingUpdated] = billing.named('unleash-updated');
    assert.deepEqual(
      billingUpdated?.data.events.map((event: { type: string }) => event.type),
      ['feature-removed', 'feature-updated', 'segment-updated', 'segment-removed'],
    );
    assert.equal(billingUpdated?.id, String(first + 7));
  });

  it('resumes from a Last-Event-ID it issued with the events since, without a hydration', async () => {
    const resumed = await stream(ALL_CLIENT, { 'last-event-id': connectedId });
    assert.equal(resumed.response.status, 200);
    await resumed.received(1);
    assert.deepEqual(
      resumed.events.map((event) => event.event),
      ['unleash-updated'],
    );
    assert.deepEqual(
      resumed.named('unleash-updated')[0]?.data,
      all.named('unleash-updated')[0]?.data,
    );

    // Up to date: nothing but keep-alives.
    const current = await stream(ALL_CLIENT, { 'last-event-id': String(Number(connectedId) + 7) });
    await waitFor(() => current.comments.length >= 1);
    assert.deepEqual(current.events, []);
  });

  it('hydrates a Last-Event-ID it did not issue (another proxy’s, or garbage)', async () => {
    for (const lastEventId of [
      String(Number(connectedId) - 1),
      String(Number(connectedId) + 8),
      'abc',
      '',
    ]) {
      const client = await stream(ALL_CLIENT, { 'last-event-id': lastEventId });
      await client.received(1);
      const [connected] = client.named('unleash-connected');
      assert.equal(connected?.data.events[0].type, 'hydration', lastEventId);
      // The current hydration, not the one rendered for the streams opened before the change.
      assert.equal(connected?.id, String(Number(connectedId) + 7), lastEventId);
      assert.deepEqual(names(connected?.data.events[0]), names(secondPayload));
      client.close();
    }
  });

  it('answers 429 beyond streamingMaxConnections, hydrates after a change larger than the window, and ends its streams when the app closes', async () => {
    const bounded = await startChangingProxy(
      { streamingMaxConnections: 1, deltaEventsRetained: 2 },
      true,
    );
    await bounded.proxy.poller.ready;
    const url = `${bounded.base}/api/client/streaming`;
    const first = await SseClient.open(url, auth(ALL_CLIENT).headers);
    assert.equal(first.response.status, 200);
    await first.received(1);
    const refused = await SseClient.open(url, auth(ALL_CLIENT).headers);
    assert.equal(refused.response.status, 429);
    assert.equal(refused.response.headers.get('retry-after'), '60');
    const body = (await refused.response.json()) as { name: string };
    assert.equal(body.name, 'RateLimitError');
    // Polling is still served.
    assert.equal((await call(bounded, 'GET', '/api/client/delta', auth(ALL_CLIENT))).status, 200);

    // A change of more events than are retained reaches the stream as a hydration.
    bounded.upstream.setPayload(structuredClone(secondPayload));
    await first.received(2);
    const [updated] = first.named('unleash-updated');
    assert.equal(updated?.data.events.length, 1);
    assert.equal(updated?.data.events[0].type, 'hydration');
    assert.deepEqual(names(updated?.data.events[0]), names(secondPayload));

    await bounded.close();
    await waitFor(() => first.ended);
  });
});
