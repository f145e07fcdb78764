import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { ClientFeatures } from '@flags/schemas';
import type { CompiledState } from '@flags/serving';
import { EventCredentials, signingSecretOf } from '../src/auth/event-credential.js';
import { type OpenedStream, openEventStream } from './helpers/event-stream-client.js';
import {
  API_TOKEN,
  CLIENT_KEY,
  call,
  type Listening,
  startProxy,
  waitFor,
} from './helpers/proxy.js';

const BULK = '/ofrep/v1/evaluate/flags';

function payloadWith(names: readonly string[]): ClientFeatures {
  return {
    version: 2,
    features: [
      ...names.map((name) => ({ name, enabled: true, strategies: [{ name: 'default' }] })),
      {
        name: 'pro-only',
        enabled: true,
        strategies: [
          {
            name: 'default',
            constraints: [{ contextName: 'plan', operator: 'IN' as const, values: ['pro'] }],
          },
        ],
      },
    ],
  };
}

const JSON_HEADERS = { authorization: CLIENT_KEY, 'content-type': 'application/json' };

function bulk(
  target: Listening | string,
  context: Record<string, unknown>,
  headers: Record<string, string> = {},
  key = CLIENT_KEY,
) {
  return call(target, 'POST', BULK, {
    headers: { ...JSON_HEADERS, authorization: key, ...headers },
    body: JSON.stringify({ context }),
  });
}

/** The stream URL of a bulk answer, as the web provider resolves it (`endpoint` against the base). */
function streamUrl(base: string, answer: { json(): { eventStreams?: unknown } }): string {
  const streams = answer.json().eventStreams as Array<{
    type: string;
    endpoint: { requestUri: string };
  }>;
  const sse = streams.find((stream) => stream.type === 'sse');
  assert.ok(sse, 'an sse event stream');
  return new URL(sse.endpoint.requestUri, base).href;
}

function tokenOf(url: string): string {
  return new URL(url).searchParams.get('token') as string;
}

/** Counts the evaluations of bulk answers on the snapshot a request would be served from now. */
function countEvaluations(compiled: CompiledState): { readonly calls: number } {
  const counter = { calls: 0 };
  const evaluateEach = compiled.evaluateEach.bind(compiled);
  compiled.evaluateEach = (context, visitor) => {
    counter.calls++;
    return evaluateEach(context, visitor);
  };
  return counter;
}

describe('OFREP event streams', () => {
  let run: Listening;
  const streams: OpenedStream[] = [];
  before(async () => {
    run = await startProxy(
      payloadWith(['first']),
      { metricsInterval: 0, refreshInterval: 50 },
      { listen: true },
    );
    await run.proxy.poller.ready;
  });
  after(async () => {
    for (const stream of streams) stream.close();
    await run.close();
  });

  it('points bulk answers at a stream whose credential is not the key', async () => {
    const answer = await bulk(run, { targetingKey: 'u1' });
    assert.equal(answer.status, 200);
    const [stream] = answer.json().eventStreams;
    assert.equal(stream.type, 'sse');
    assert.equal(stream.inactivityDelaySec, 120);
    assert.match(stream.endpoint.requestUri, /^\/ofrep\/v1\/events\?token=[\w.-]+$/);
    const token = tokenOf(streamUrl(run.base, answer));
    for (const form of [
      CLIENT_KEY,
      Buffer.from(CLIENT_KEY).toString('base64'),
      Buffer.from(CLIENT_KEY).toString('base64url'),
      Buffer.from(CLIENT_KEY).toString('hex'),
    ]) {
      assert.ok(!token.includes(form), `the credential holds the key as ${form}`);
      assert.ok(
        !Buffer.from(token.split('.')[1] ?? '', 'base64url')
          .toString()
          .includes(form),
      );
    }
    // Evaluating again within the credential's window gives the same URL: the stream is kept.
    assert.equal(
      streamUrl(run.base, await bulk(run, { targetingKey: 'u2' })),
      streamUrl(run.base, answer),
    );
  });

  it('sends refetchEvaluation when the upstream payload changes, and the new flags follow', async () => {
    const first = await bulk(run, { targetingKey: 'u1' });
    const stream = await openEventStream(streamUrl(run.base, first), {
      origin: 'https://app.example',
    });
    streams.push(stream);
    assert.equal(stream.status, 200);
    assert.match(String(stream.headers['content-type']), /^text\/event-stream/);
    assert.equal(stream.headers['access-control-allow-origin'], '*');
    run.upstream.setPayload(payloadWith(['first', 'second']));
    await waitFor(() => stream.events.length > 0, 10_000);
    const [event] = stream.events;
    assert.equal(event?.event, 'message');
    assert.ok(event?.id, 'the event has an id');
    assert.deepEqual(JSON.parse(event?.data ?? ''), { type: 'refetchEvaluation', etag: event?.id });
    // The refetch with the old ETag (and the provider's query parameter) gets the new flags.
    const again = await call(run, 'POST', `${BULK}?flagConfigEtag=${event?.id}`, {
      headers: { ...JSON_HEADERS, 'if-none-match': String(first.headers.etag) },
      body: JSON.stringify({ context: { targetingKey: 'u1' } }),
    });
    assert.equal(again.status, 200);
    assert.deepEqual(
      again.json().flags.map((flag: { key: string }) => flag.key),
      ['first', 'second'],
    );
    // A stream opened with the old answer's credential after the change hears of it at once.
    const late = await openEventStream(streamUrl(run.base, first));
    streams.push(late);
    await waitFor(() => late.events.length > 0, 10_000);
    assert.equal(late.events[0]?.id, event?.id);
    // A reconnect that already heard of the change is told nothing; the next change reaches it.
    const resumed = await openEventStream(streamUrl(run.base, first), {
      'last-event-id': event?.id ?? '',
    });
    streams.push(resumed);
    run.upstream.setPayload(payloadWith(['first', 'second', 'third']));
    await waitFor(() => resumed.events.length > 0, 10_000);
    assert.equal(resumed.events.length, 1);
    assert.notEqual(resumed.events[0]?.id, event?.id);
  });

  it('refuses missing, garbage, forged and expired credentials with 401 JSON', async () => {
    const url = streamUrl(run.base, await bulk(run, { targetingKey: 'u1' }));
    const token = tokenOf(url);
    const [id, body, signature] = token.split('.') as [string, string, string];
    const scope = JSON.parse(Buffer.from(body, 'base64url').toString());
    const forgedScope = Buffer.from(JSON.stringify({ ...scope, e: 'production' })).toString(
      'base64url',
    );
    const flipped = `${signature.slice(0, -2)}${signature.endsWith('AA') ? 'BB' : 'AA'}`;
    // Signed correctly, with the proxy's own secret (from its upstream token), but two hours ago.
    const secret = signingSecretOf(undefined, [API_TOKEN]);
    const expired = new EventCredentials({
      secret,
      keys: [CLIENT_KEY],
      lifetimeMs: 15 * 60_000,
    }).issue(
      CLIENT_KEY,
      { environment: scope.e, projects: scope.p, revision: scope.r },
      Date.now() - 2 * 3_600_000,
    );
    const otherKey = new EventCredentials({
      secret,
      keys: ['some-other-key'],
      lifetimeMs: 60_000,
    }).issue('some-other-key', { environment: scope.e, projects: scope.p, revision: scope.r });
    const cases: Array<[string, string, RegExp]> = [
      ['missing', '/ofrep/v1/events', /not valid/],
      ['empty', '/ofrep/v1/events?token=', /not valid/],
      ['garbage', '/ofrep/v1/events?token=%00%ff..', /not valid/],
      ['the key itself', `/ofrep/v1/events?token=${CLIENT_KEY}`, /not valid/],
      ['forged scope', `/ofrep/v1/events?token=${id}.${forgedScope}.${signature}`, /not valid/],
      ['forged signature', `/ofrep/v1/events?token=${id}.${body}.${flipped}`, /not valid/],
      ['unknown key', `/ofrep/v1/events?token=${otherKey}`, /not valid/],
      ['expired', `/ofrep/v1/events?token=${expired}`, /expired/],
    ];
    for (const [name, path, details] of cases) {
      const refused = await openEventStream(`${run.base}${path}`);
      assert.equal(refused.status, 401, name);
      const error = JSON.parse(refused.text);
      assert.equal(error.name, 'AuthenticationRequired', name);
      assert.match(error.details[0].message, details, name);
    }
    // A repeated parameter is a malformed request.
    const repeated = await openEventStream(
      `${run.base}/ofrep/v1/events?token=${token}&token=${token}`,
    );
    assert.equal(repeated.status, 400);
    assert.equal(JSON.parse(repeated.text).name, 'BadDataError');
  });

  it('answers a matching ETag for the same context with 304 without evaluating', async () => {
    const compiled = run.proxy.state.current as CompiledState;
    const counter = countEvaluations(compiled);
    const context = { targetingKey: 'u1', plan: 'free', country: 'NO' };
    const first = await bulk(run, context);
    assert.equal(first.status, 200);
    assert.equal(counter.calls, 1);
    const etag = String(first.headers.etag);
    const same = await bulk(run, context, { 'if-none-match': etag });
    assert.equal(same.status, 304);
    assert.equal(same.headers.etag, etag);
    assert.equal(counter.calls, 1, 'a 304 evaluates nothing');
    // Another attribute (the provider keeps its ETag when targetingKey stays): a new answer.
    const pro = await bulk(run, { ...context, plan: 'pro' }, { 'if-none-match': etag });
    assert.equal(pro.status, 200);
    assert.equal(counter.calls, 2);
    assert.ok(pro.json().flags.some((flag: { key: string }) => flag.key === 'pro-only'));
    assert.ok(!first.json().flags.some((flag: { key: string }) => flag.key === 'pro-only'));
    assert.notEqual(pro.headers.etag, etag);
    // An attribute that changes no flag still changes the tag: the context is the key.
    const country = await bulk(run, { ...context, country: 'SE' }, { 'if-none-match': etag });
    assert.equal(country.status, 200);
    // A configuration change: the same context and tag get a 200 with the new flags.
    run.upstream.setPayload(payloadWith(['first', 'second', 'third', 'fourth']));
    await waitFor(() => run.proxy.state.current !== compiled, 10_000);
    const changed = await bulk(run, context, { 'if-none-match': etag });
    assert.equal(changed.status, 200);
    assert.ok(changed.json().flags.some((flag: { key: string }) => flag.key === 'fourth'));
    assert.equal(counter.calls, 3, 'the old snapshot evaluated nothing more');
  });
});

describe('OFREP event streams of several environments', () => {
  const DEV = `*:development.dev-client-${'a'.repeat(32)}`;
  const PROD = `*:production.prod-client-${'a'.repeat(32)}`;
  let run: Listening;
  const streams: OpenedStream[] = [];
  before(async () => {
    run = await startProxy(
      payloadWith(['shared']),
      {
        flagsApiToken: [DEV, PROD],
        clientKeys: [],
        pretrustedTokens: ['dev-key@development', 'prod-key@production'],
        metricsInterval: 0,
        refreshInterval: 50,
      },
      {
        listen: true,
        upstream: (upstream) => {
          upstream.serveToken(DEV, payloadWith(['dev']));
          upstream.serveToken(PROD, payloadWith(['prod']));
        },
      },
    );
    await Promise.all(run.proxy.environments.all().map((environment) => environment.ready));
  });
  after(async () => {
    for (const stream of streams) stream.close();
    await run.close();
  });

  it('sends each stream the changes of its own environment only', async () => {
    const dev = await openEventStream(
      streamUrl(run.base, await bulk(run, { targetingKey: 'u' }, {}, 'dev-key')),
    );
    const prod = await openEventStream(
      streamUrl(run.base, await bulk(run, { targetingKey: 'u' }, {}, 'prod-key')),
    );
    streams.push(dev, prod);
    assert.equal(dev.status, 200);
    assert.equal(prod.status, 200);
    run.upstream.serveToken(PROD, payloadWith(['prod', 'prod-2']));
    await waitFor(() => prod.events.length > 0, 10_000);
    run.upstream.serveToken(DEV, payloadWith(['dev', 'dev-2']));
    await waitFor(() => dev.events.length > 0, 10_000);
    // The development stream heard one change, its own, after production's was announced.
    assert.equal(dev.events.length, 1);
    assert.equal(prod.events.length, 1);
    assert.notEqual(dev.events[0]?.id, prod.events[0]?.id);
    const devAnswer = await bulk(run, { targetingKey: 'u' }, {}, 'dev-key');
    assert.deepEqual(
      devAnswer.json().flags.map((flag: { key: string }) => flag.key),
      ['dev', 'dev-2'],
    );
  });
});

describe('OFREP event streams turned off', () => {
  let run: Listening;
  before(async () => {
    run = await startProxy(
      payloadWith(['first']),
      { metricsInterval: 0, ofrepEventStreams: false },
      { listen: true },
    );
    await run.proxy.poller.ready;
  });
  after(() => run.close());

  it('answers bulk without eventStreams and has no stream route', async () => {
    const answer = await bulk(run, { targetingKey: 'u1' });
    assert.equal(answer.status, 200);
    assert.equal(answer.json().eventStreams, undefined);
    const stream = await call(run.base, 'GET', '/ofrep/v1/events?token=x');
    assert.equal(stream.status, 404);
  });
});

describe('OFREP bulk ETags of answers that time or chance decide', () => {
  let run: Listening;
  const flipsAt = Date.now() + 3_600_000;
  before(async () => {
    run = await startProxy(
      {
        version: 2,
        features: [
          {
            name: 'launch',
            enabled: true,
            strategies: [
              {
                name: 'default',
                constraints: [
                  {
                    contextName: 'currentTime',
                    operator: 'DATE_AFTER',
                    value: new Date(flipsAt).toISOString(),
                  },
                ],
              },
            ],
          },
        ],
      },
      { metricsInterval: 0, ofrepEventStreams: false },
      { listen: true },
    );
    await run.proxy.poller.ready;
  });
  after(() => run.close());

  it('tags an answer a date constraint will flip with that time, and matches it only until then', async () => {
    const answer = await bulk(run, { targetingKey: 'u1' });
    assert.equal(answer.status, 200);
    const etag = String(answer.headers.etag);
    const match = /^W\/"(c[\w-]{22})-([0-9a-z]+)"$/.exec(etag);
    assert.ok(match, `a time-limited tag: ${etag}`);
    assert.equal(
      Number.parseInt(match[2] as string, 36),
      Date.parse(new Date(flipsAt).toISOString()),
    );
    assert.equal((await bulk(run, { targetingKey: 'u1' }, { 'if-none-match': etag })).status, 304);
    // The same tag once its time has passed: evaluated again.
    const past = `W/"${match[1]}-${(Date.now() - 1000).toString(36)}"`;
    assert.equal((await bulk(run, { targetingKey: 'u1' }, { 'if-none-match': past })).status, 200);
    // A context that names the time depends on nothing else: the tag has no time.
    const fixed = await bulk(run, {
      targetingKey: 'u1',
      currentTime: new Date(flipsAt + 1).toISOString(),
    });
    assert.match(String(fixed.headers.etag), /^W\/"c[\w-]{22}"$/);
    assert.deepEqual(
      fixed.json().flags.map((flag: { key: string }) => flag.key),
      ['launch'],
    );
  });

  it('tags an answer a custom strategy decided by its results, checked after evaluating', async () => {
    // A custom strategy may read anything (a clock, a draw): its answers are never taken on trust.
    const custom = await startProxy(
      {
        version: 2,
        features: [
          {
            name: 'monday',
            enabled: true,
            strategies: [{ name: 'weekday', parameters: { day: 'monday' } }],
          },
        ],
      },
      {
        metricsInterval: 0,
        ofrepEventStreams: false,
        customStrategies: [fileURLToPath(new URL('./fixtures/strategies.mjs', import.meta.url))],
      },
      { listen: true },
    );
    try {
      await custom.proxy.poller.ready;
      const counter = countEvaluations(custom.proxy.state.current as CompiledState);
      const context = { targetingKey: 'u1', day: 'monday' };
      const answer = await bulk(custom, context);
      assert.deepEqual(
        answer.json().flags.map((flag: { key: string }) => flag.key),
        ['monday'],
      );
      const etag = String(answer.headers.etag);
      assert.doesNotMatch(etag, /^W\/"c/);
      const again = await bulk(custom, context, { 'if-none-match': etag });
      assert.equal(again.status, 304);
      assert.equal(counter.calls, 2, 'evaluated, then found unchanged');
    } finally {
      await custom.close();
    }
  });
});

describe('OFREP event stream limits', () => {
  let run: Listening;
  before(async () => {
    run = await startProxy(
      payloadWith(['first']),
      { metricsInterval: 0, ofrepEventStreamsMax: 1, streamingKeepAliveMs: 20 },
      { listen: true },
    );
    await run.proxy.poller.ready;
  });
  after(() => run.close());

  it('sends keep-alive comments, refuses streams beyond the bound and ends streams on close', async () => {
    const url = streamUrl(run.base, await bulk(run, { targetingKey: 'u1' }));
    const open = await openEventStream(url);
    assert.equal(open.status, 200);
    await waitFor(() => open.comments.length >= 2, 10_000);
    assert.ok(open.comments.every((comment) => comment === 'keep-alive'));
    const refused = await openEventStream(url);
    assert.equal(refused.status, 429);
    assert.equal(refused.headers['retry-after'], '5');
    assert.equal(JSON.parse(refused.text).name, 'RateLimitError');
    // Closing the app ends the open stream instead of waiting for its client.
    await run.proxy.app.close();
    await waitFor(() => open.ended, 10_000);
  });
});

describe('OFREP event streams of a token scoped to projects', () => {
  const SECRET = 'b'.repeat(32);
  const CLIENT = `*:development.client-${SECRET}`;
  const BILLING = `billing:development.billing-${SECRET}`;
  const EVERY = `*:development.every-${SECRET}`;
  const flags = (billing: string, other: string): ClientFeatures => ({
    version: 2,
    features: [
      { name: billing, project: 'billing', enabled: true, strategies: [{ name: 'default' }] },
      { name: other, project: 'default', enabled: true, strategies: [{ name: 'default' }] },
    ],
  });
  let run: Listening;
  const streams: OpenedStream[] = [];
  before(async () => {
    run = await startProxy(
      flags('invoice', 'banner'),
      { flagsApiToken: [CLIENT], clientKeys: [], metricsInterval: 0, refreshInterval: 50 },
      {
        listen: true,
        upstream: (upstream) => {
          upstream.knownTokens.set(BILLING, {
            type: 'frontend',
            environment: 'development',
            projects: ['billing'],
          });
          upstream.knownTokens.set(EVERY, {
            type: 'frontend',
            environment: 'development',
            projects: ['*'],
          });
        },
      },
    );
    await run.proxy.poller.ready;
  });
  after(async () => {
    for (const stream of streams) stream.close();
    await run.close();
  });

  it('tells a stream only of changes to its projects’ flags', async () => {
    const billingAnswer = await bulk(run, { targetingKey: 'u' }, {}, BILLING);
    assert.deepEqual(
      billingAnswer.json().flags.map((flag: { key: string }) => flag.key),
      ['invoice'],
    );
    const billing = await openEventStream(streamUrl(run.base, billingAnswer));
    const every = await openEventStream(
      streamUrl(run.base, await bulk(run, { targetingKey: 'u' }, {}, EVERY)),
    );
    streams.push(billing, every);
    assert.equal(billing.status, 200);
    assert.equal(every.status, 200);
    // A flag of another project changes: the billing stream hears nothing of it.
    run.upstream.setPayload(flags('invoice', 'banner-2'));
    await waitFor(() => every.events.length === 1, 10_000);
    run.upstream.setPayload(flags('invoice-2', 'banner-2'));
    await waitFor(() => every.events.length === 2, 10_000);
    await waitFor(() => billing.events.length === 1, 10_000);
    const again = await bulk(run, { targetingKey: 'u' }, {}, BILLING);
    assert.deepEqual(
      again.json().flags.map((flag: { key: string }) => flag.key),
      ['invoice-2'],
    );
    assert.equal(billing.events.length, 1);
  });
});
