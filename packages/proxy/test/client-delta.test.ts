import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { applyDelta } from '@flags/engine';
import {
  ALL_CLIENT,
  auth,
  BILLING_CLIENT,
  FRONTEND,
  firstPayload,
  secondPayload,
  startChangingProxy,
} from './helpers/changing-proxy.js';
import { call, type Running, startProxy, waitFor } from './helpers/proxy.js';

const names = (payload: { features: ReadonlyArray<{ name: string }> }) =>
  payload.features.map((feature) => feature.name).sort();

describe('GET /api/client/delta', () => {
  let run: Running;
  before(async () => {
    run = await startChangingProxy();
    await run.proxy.poller.ready;
  });
  after(() => run.close());

  it('refuses callers without a client token, as /api/client/features does', async () => {
    assert.equal((await call(run, 'GET', '/api/client/delta')).status, 401);
    const frontend = await call(run, 'GET', '/api/client/delta', auth(FRONTEND));
    assert.equal(frontend.status, 403);
    assert.equal(frontend.json().name, 'InvalidTokenError');
  });

  let hydrated: { etag: string; id: number; billingEtag: string };

  it('hydrates a first call with the scope’s features and segments, then answers 304', async () => {
    const first = await call(run, 'GET', '/api/client/delta', auth(ALL_CLIENT));
    assert.equal(first.status, 200);
    assert.equal(first.headers['content-type'], 'application/json; charset=utf-8');
    const etag = String(first.headers.etag);
    assert.match(etag, /^"\d+"$/);
    const id = Number(etag.slice(1, -1));
    assert.deepEqual(first.json(), {
      events: [
        {
          eventId: id,
          type: 'hydration',
          features: firstPayload.features,
          segments: firstPayload.segments,
        },
      ],
    });
    const again = await call(
      run,
      'GET',
      '/api/client/delta',
      auth(ALL_CLIENT, { 'if-none-match': etag }),
    );
    assert.equal(again.status, 304);
    assert.equal(again.text, '');
    assert.equal(again.headers.etag, etag);
    // The bare number (as Unleash Edge sends it) is read the same.
    const bare = await call(
      run,
      'GET',
      '/api/client/delta',
      auth(ALL_CLIENT, { 'if-none-match': String(id) }),
    );
    assert.equal(bare.status, 304);

    const billing = await call(run, 'GET', '/api/client/delta', auth(BILLING_CLIENT));
    assert.equal(billing.status, 200);
    const [event] = billing.json().events;
    assert.deepEqual(names(event), ['beta-users', 'invoice']);
    assert.deepEqual(event.segments, firstPayload.segments);
    hydrated = { etag, id, billingEtag: String(billing.headers.etag) };
  });

  it('answers ids it did not issue, and garbage, with a hydration (never a 500)', async () => {
    for (const ifNoneMatch of [
      '"abc"',
      '*',
      'W/"x"',
      '""',
      '"-5"',
      '"1.5"',
      `"${hydrated.id - 1}"`,
      `"${hydrated.id + 1}"`,
      '"99999999999999999999999"',
      `"${'9'.repeat(400)}"`,
    ]) {
      const answer = await call(
        run,
        'GET',
        '/api/client/delta',
        auth(ALL_CLIENT, { 'if-none-match': ifNoneMatch }),
      );
      assert.equal(answer.status, 200, ifNoneMatch);
      assert.deepEqual(
        answer.json().events.map((event: { type: string }) => event.type),
        ['hydration'],
        ifNoneMatch,
      );
    }
  });

  it('sends what changed since the id, filtered to the token’s projects', async () => {
    run.upstream.setPayload(structuredClone(secondPayload));
    let changed = await call(run, 'GET', '/api/client/delta', auth(ALL_CLIENT));
    await waitFor(async () => {
      changed = await call(
        run,
        'GET',
        '/api/client/delta',
        auth(ALL_CLIENT, { 'if-none-match': hydrated.etag }),
      );
      return changed.status === 200;
    });
    const events = changed.json().events;
    assert.deepEqual(
      events.map((event: { type: string; eventId: number }) => [event.type, event.eventId]),
      [
        ['feature-updated', hydrated.id + 1],
        ['feature-removed', hydrated.id + 2],
        ['feature-updated', hydrated.id + 3],
        ['feature-updated', hydrated.id + 4],
        ['feature-removed', hydrated.id + 5],
        ['segment-updated', hydrated.id + 6],
        ['segment-removed', hydrated.id + 7],
      ],
    );
    assert.deepEqual(events[0].feature, secondPayload.features[0]);
    assert.deepEqual(events[1], {
      eventId: hydrated.id + 2,
      type: 'feature-removed',
      featureName: 'invoice',
      project: 'billing',
    });
    assert.deepEqual(events[4], {
      eventId: hydrated.id + 5,
      type: 'feature-removed',
      featureName: 'retired',
      project: 'default',
    });
    assert.deepEqual(events[6], {
      eventId: hydrated.id + 7,
      type: 'segment-removed',
      segmentId: 2,
    });
    assert.equal(changed.headers.etag, `"${hydrated.id + 7}"`);
    // Applied to the hydration, the events give the new payload.
    const applied = applyDelta(firstPayload, events);
    assert.deepEqual(names(applied), names(secondPayload));
    assert.deepEqual(
      applied.features.find((feature) => feature.name === 'checkout'),
      secondPayload.features[0],
    );
    assert.deepEqual(applied.segments, secondPayload.segments);
    const current = await call(
      run,
      'GET',
      '/api/client/delta',
      auth(ALL_CLIENT, { 'if-none-match': String(changed.headers.etag) }),
    );
    assert.equal(current.status, 304);

    // The billing token sees its project's changes and the segments, nothing of the others.
    const billing = await call(
      run,
      'GET',
      '/api/client/delta',
      auth(BILLING_CLIENT, { 'if-none-match': hydrated.billingEtag }),
    );
    assert.equal(billing.status, 200);
    const billingEvents = billing.json().events;
    assert.deepEqual(
      billingEvents.map((event: { type: string }) => event.type),
      ['feature-removed', 'feature-updated', 'segment-updated', 'segment-removed'],
    );
    assert.equal(billingEvents[0].featureName, 'invoice');
    assert.equal(billingEvents[1].feature.name, 'receipts');
    const billingHydration = await call(run, 'GET', '/api/client/delta', auth(BILLING_CLIENT));
    assert.deepEqual(names(billingHydration.json().events[0]), ['beta-users', 'receipts']);
    assert.deepEqual(
      names(
        applyDelta(
          { version: 2, features: firstPayload.features.filter((f) => f.project === 'billing') },
          billingEvents,
        ),
      ),
      ['beta-users', 'receipts'],
    );
  });

  it('does not take another proxy’s event id for its own', async () => {
    const other = await startChangingProxy();
    try {
      await other.proxy.poller.ready;
      other.upstream.setPayload(structuredClone(secondPayload));
      const hydration = await call(other, 'GET', '/api/client/delta', auth(ALL_CLIENT));
      const foreign = String(hydration.headers.etag);
      assert.notEqual(foreign, hydrated.etag);
      const answer = await call(
        run,
        'GET',
        '/api/client/delta',
        auth(ALL_CLIENT, { 'if-none-match': foreign }),
      );
      assert.equal(answer.status, 200);
      assert.equal(answer.json().events[0].type, 'hydration');
    } finally {
      await other.close();
    }
  });

  it('keeps a bounded window: an id older than it gets a hydration', async () => {
    const small = await startChangingProxy({ deltaEventsRetained: 2 });
    try {
      await small.proxy.poller.ready;
      const first = await call(small, 'GET', '/api/client/delta', auth(ALL_CLIENT));
      small.upstream.setPayload(structuredClone(secondPayload));
      let latest = first;
      await waitFor(async () => {
        latest = await call(
          small,
          'GET',
          '/api/client/delta',
          auth(ALL_CLIENT, { 'if-none-match': String(first.headers.etag) }),
        );
        return latest.status === 200;
      });
      // Seven events happened, two are kept: the first id is too old.
      assert.equal(latest.json().events[0].type, 'hydration');
      assert.deepEqual(names(latest.json().events[0]), names(secondPayload));
      const id = Number(String(latest.headers.etag).slice(1, -1));
      const recent = await call(
        small,
        'GET',
        '/api/client/delta',
        auth(ALL_CLIENT, { 'if-none-match': `"${id - 2}"` }),
      );
      assert.deepEqual(
        recent.json().events.map((event: { eventId: number }) => event.eventId),
        [id - 1, id],
      );
    } finally {
      await small.close();
    }
  });

  it('answers 503 before the first sync, as the streaming route does', async () => {
    const cold = await startProxy(
      firstPayload,
      { flagsApiToken: [ALL_CLIENT] },
      {
        upstream: (upstream) => {
          upstream.mode = 'error500';
        },
      },
    );
    try {
      const answer = await call(cold, 'GET', '/api/client/delta', auth(ALL_CLIENT));
      assert.equal(answer.status, 503);
      const stream = await call(cold, 'GET', '/api/client/streaming', auth(ALL_CLIENT));
      assert.equal(stream.status, 503);
      assert.equal(stream.text, 'Not Ready');
    } finally {
      await cold.close();
    }
  });
});
