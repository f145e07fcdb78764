import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ClientFeatures } from '@flags/schemas';
import { OFREPProvider } from '@openfeature/ofrep-provider';
import { OpenFeature } from '@openfeature/server-sdk';
import { smallPayload } from './fixtures/small.js';
import { CLIENT_KEY, call, type Listening, type Running, startProxy } from './helpers/proxy.js';

const payload: ClientFeatures = {
  ...smallPayload,
  features: [
    ...smallPayload.features,
    {
      name: 'limit',
      enabled: true,
      strategies: [{ name: 'default' }],
      variants: [
        {
          name: 'high',
          weight: 1000,
          weightType: 'variable',
          stickiness: 'default',
          payload: { type: 'number', value: '42.5' },
        },
      ],
    },
  ],
};

const JSON_HEADERS = { authorization: CLIENT_KEY, 'content-type': 'application/json' };

const notFound = (key: string) => ({
  key,
  errorCode: 'FLAG_NOT_FOUND',
  errorDetails: `flag "${key}" was not found`,
});

function evaluate(
  run: Running,
  key: string,
  body: unknown,
  headers: Record<string, string> = JSON_HEADERS,
) {
  return call(run, 'POST', `/ofrep/v1/evaluate/flags/${key}`, {
    headers,
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

describe('OFREP', () => {
  let run: Listening;
  before(async () => {
    // Listening for the OpenFeature provider, which needs a URL; the other tests inject.
    run = await startProxy(
      payload,
      { metricsInterval: 0, refreshInterval: 60_000 },
      { listen: true },
    );
    await run.proxy.poller.ready;
  });
  after(() => run.close());

  it('evaluates one flag: values by payload type, variants and reasons', async () => {
    const cases: [string, unknown, unknown][] = [
      ['simple-on', {}, { key: 'simple-on', value: true, reason: 'STATIC', variant: 'enabled' }],
      [
        'with-variants',
        {},
        { key: 'with-variants', value: 'blue-payload', reason: 'SPLIT', variant: 'blue' },
      ],
      [
        'json-variant',
        {},
        { key: 'json-variant', value: { a: 1 }, reason: 'SPLIT', variant: 'cfg' },
      ],
      ['limit', {}, { key: 'limit', value: 42.5, reason: 'SPLIT', variant: 'high' }],
      [
        'user-123',
        { targetingKey: '123' },
        { key: 'user-123', value: true, reason: 'TARGETING_MATCH', variant: 'enabled' },
      ],
      // Attributes other than the known context fields are properties.
      [
        'region-eu',
        { region: 'eu' },
        { key: 'region-eu', value: true, reason: 'TARGETING_MATCH', variant: 'enabled' },
      ],
      [
        'region-eu',
        { properties: { region: 'eu' } },
        { key: 'region-eu', value: true, reason: 'TARGETING_MATCH', variant: 'enabled' },
      ],
      [
        'app-foo',
        { appName: 'foo' },
        { key: 'app-foo', value: true, reason: 'TARGETING_MATCH', variant: 'enabled' },
      ],
    ];
    for (const [key, context, expected] of cases) {
      const answer = await evaluate(run, key, { context });
      assert.equal(answer.status, 200, key);
      const { metadata, ...rest } = answer.json();
      assert.deepEqual(rest, expected, `${key} ${JSON.stringify(context)}`);
      assert.equal(typeof metadata.impressionData, 'boolean');
    }
  });

  it('answers a flag that is off for the context exactly as an unknown flag (enableAllEndpoint off)', async () => {
    const answers = [
      ['nope', await evaluate(run, 'nope', { context: {} })],
      ['simple-off', await evaluate(run, 'simple-off', { context: {} })],
      ['user-123', await evaluate(run, 'user-123', { context: { targetingKey: '999' } })],
    ] as const;
    for (const [key, answer] of answers) {
      assert.equal(answer.status, 404, key);
      assert.equal(answer.headers['content-type'], 'application/json; charset=utf-8');
      assert.equal(answer.text, JSON.stringify(notFound(key)), key);
    }
    const bulk = await call(run, 'POST', '/ofrep/v1/evaluate/flags', {
      headers: JSON_HEADERS,
      body: JSON.stringify({ context: {} }),
    });
    const keys = bulk.json().flags.map((flag: { key: string }) => flag.key);
    assert.ok(!keys.includes('simple-off') && !keys.includes('user-123'), keys.join());
  });

  it('answers protocol errors in the protocol shape', async () => {
    const missing = await evaluate(run, 'nope', { context: {} });
    assert.equal(missing.status, 404);
    assert.deepEqual(missing.json(), {
      key: 'nope',
      errorCode: 'FLAG_NOT_FOUND',
      errorDetails: 'flag "nope" was not found',
    });
    const nested = await evaluate(run, 'simple-on', { context: { user: { id: 1 } } });
    assert.equal(nested.status, 400);
    assert.equal(nested.json().errorCode, 'INVALID_CONTEXT');
    assert.equal(nested.json().key, 'simple-on');
    const badContext = await evaluate(run, 'simple-on', { context: 'abc' });
    assert.equal(badContext.json().errorCode, 'INVALID_CONTEXT');
    const malformed = await evaluate(run, 'simple-on', '{"context": {');
    assert.equal(malformed.status, 400);
    assert.equal(malformed.json().errorCode, 'PARSE_ERROR');
    const bulkMalformed = await call(run, 'POST', '/ofrep/v1/evaluate/flags', {
      headers: JSON_HEADERS,
      body: '[1',
    });
    assert.equal(bulkMalformed.status, 400);
    assert.equal(bulkMalformed.json().errorCode, 'PARSE_ERROR');
    assert.equal(bulkMalformed.json().key, undefined);
  });

  it('accepts the key in the key header, as a bearer token or as X-API-Key', async () => {
    const body = { context: {} };
    assert.equal(
      (await evaluate(run, 'simple-on', body, { 'content-type': 'application/json' })).status,
      401,
    );
    assert.equal(
      (await evaluate(run, 'simple-on', body, { authorization: 'Bearer wrong' })).status,
      401,
    );
    const accepted: Record<string, string>[] = [
      { authorization: CLIENT_KEY },
      { authorization: `Bearer ${CLIENT_KEY}` },
      { 'x-api-key': CLIENT_KEY },
    ];
    for (const headers of accepted) {
      const answer = await evaluate(run, 'simple-on', body, {
        ...headers,
        'content-type': 'application/json',
      });
      assert.equal(answer.status, 200, JSON.stringify(headers));
    }
  });

  it('evaluates the enabled flags in bulk with an ETag (304 on a match)', async () => {
    const bulk = (
      headers: Record<string, string> = {},
      context: unknown = { targetingKey: '123' },
    ) =>
      call(run, 'POST', '/ofrep/v1/evaluate/flags', {
        headers: { ...JSON_HEADERS, ...headers },
        body: JSON.stringify({ context }),
      });
    const answer = await bulk();
    assert.equal(answer.status, 200);
    const flags = answer.json().flags;
    const keys = flags.map((flag: { key: string }) => flag.key);
    assert.deepEqual(keys, ['simple-on', 'with-variants', 'json-variant', 'user-123', 'limit']);
    // The same list `/proxy` gives that context: the public key learns nothing more here.
    const proxy = await call(run, 'POST', '/proxy', {
      headers: JSON_HEADERS,
      body: JSON.stringify({ context: { userId: '123' } }),
    });
    assert.deepEqual(
      keys,
      proxy.json().toggles.map((toggle: { name: string }) => toggle.name),
    );
    for (const flag of flags) {
      const single = await evaluate(run, flag.key, { context: { targetingKey: '123' } });
      assert.deepEqual(flag, single.json(), flag.key);
    }
    const etag = String(answer.headers.etag);
    const again = await bulk({ 'if-none-match': etag });
    assert.equal(again.status, 304);
    assert.equal(again.text, '');
    const otherContext = await bulk({ 'if-none-match': etag }, { targetingKey: '999' });
    assert.equal(otherContext.status, 200, 'a different answer is not 304');
    assert.notEqual(otherContext.headers.etag, etag);
  });

  it('resolves boolean, string, number and object flags through the OpenFeature server SDK', async () => {
    await OpenFeature.setProviderAndWait(
      new OFREPProvider({ baseUrl: run.base, headers: { Authorization: `Bearer ${CLIENT_KEY}` } }),
    );
    try {
      const client = OpenFeature.getClient();
      assert.equal(await client.getBooleanValue('simple-on', false), true);
      assert.equal(await client.getBooleanValue('user-123', false, { targetingKey: '123' }), true);
      // A flag off for the context is not found, like an unknown one: the default is used.
      const off = await client.getBooleanDetails('user-123', false, { targetingKey: '5' });
      assert.equal(off.value, false);
      assert.equal(off.errorCode, 'FLAG_NOT_FOUND');
      const string = await client.getStringDetails('with-variants', 'fallback');
      assert.equal(string.value, 'blue-payload');
      assert.equal(string.variant, 'blue');
      assert.equal(string.reason, 'SPLIT');
      assert.equal(await client.getNumberValue('limit', 0), 42.5);
      assert.deepEqual(await client.getObjectValue('json-variant', {}), { a: 1 });
      const missing = await client.getBooleanDetails('nope', false);
      assert.equal(missing.value, false);
      assert.equal(missing.errorCode, 'FLAG_NOT_FOUND');
    } finally {
      await OpenFeature.close();
    }
  });

  it('is behind readiness', async () => {
    const cold = await startProxy(
      payload,
      { metricsInterval: 0 },
      {
        upstream: (upstream) => {
          upstream.mode = 'error500';
        },
      },
    );
    try {
      const answer = await evaluate(cold, 'simple-on', { context: {} });
      assert.equal(answer.status, 503);
    } finally {
      await cold.close();
    }
  });
});

describe('OFREP with enableAllEndpoint', () => {
  let run: Running;
  before(async () => {
    run = await startProxy(payload, {
      metricsInterval: 0,
      refreshInterval: 60_000,
      enableAllEndpoint: true,
    });
    await run.proxy.poller.ready;
  });
  after(() => run.close());

  it('answers flags that are off for the context as DISABLED, and lists every flag in bulk', async () => {
    const cases: [string, unknown, unknown][] = [
      [
        'simple-off',
        {},
        { key: 'simple-off', value: false, reason: 'DISABLED', variant: 'disabled' },
      ],
      [
        'user-123',
        { targetingKey: '999' },
        { key: 'user-123', value: false, reason: 'DISABLED', variant: 'disabled' },
      ],
    ];
    for (const [key, context, expected] of cases) {
      const answer = await evaluate(run, key, { context });
      assert.equal(answer.status, 200, key);
      const { metadata: _, ...rest } = answer.json();
      assert.deepEqual(rest, expected);
    }
    const unknown = await evaluate(run, 'nope', { context: {} });
    assert.equal(unknown.status, 404);
    assert.deepEqual(unknown.json(), notFound('nope'));

    const bulk = await call(run, 'POST', '/ofrep/v1/evaluate/flags', {
      headers: JSON_HEADERS,
      body: JSON.stringify({ context: { targetingKey: '123' } }),
    });
    const flags = bulk.json().flags;
    assert.deepEqual(
      flags.map((flag: { key: string }) => flag.key),
      payload.features.map((feature) => feature.name),
    );
    for (const flag of flags) {
      const single = await evaluate(run, flag.key, { context: { targetingKey: '123' } });
      assert.deepEqual(flag, single.json(), flag.key);
    }
  });
});
