import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { frontendResponseSchema } from '@flags/schemas';
import { ALL_DISABLED_MESSAGE } from '@flags/serving';
import { Ajv } from 'ajv';
import { smallPayload } from './fixtures/small.js';
import {
  type Answer,
  API_TOKEN,
  CLIENT_KEY,
  call,
  type Running,
  startProxy,
  waitFor,
  withKey,
} from './helpers/proxy.js';

const names = (answer: Answer) =>
  answer.json().toggles.map((toggle: { name: string }) => toggle.name);

describe('readiness: 503 Not Ready on every route until the first sync', () => {
  let run: Running;
  before(async () => {
    run = await startProxy(
      smallPayload,
      {},
      {
        upstream: (upstream) => {
          upstream.mode = 'error500';
        },
      },
    );
  });
  after(() => run.close());

  it('answers 503 before the first sync, then serves once the upstream answers', async () => {
    await waitFor(() => run.upstream.featureRequests().length > 0);
    for (const [method, path, headers] of [
      ['GET', '/proxy/health', {}],
      ['GET', '/proxy', withKey()],
      ['GET', '/proxy', {}],
      ['POST', '/proxy', withKey({ 'content-type': 'application/json' })],
      ['GET', '/proxy/all', withKey()],
      ['GET', '/nowhere', {}],
    ] as const) {
      const answer = await call(run, method, path, {
        headers,
        body: method === 'POST' ? '{}' : undefined,
      });
      assert.equal(answer.status, 503, `${method} ${path}`);
      assert.equal(answer.text, 'Not Ready');
      assert.equal(answer.headers['content-type'], 'text/html; charset=utf-8');
    }
    run.upstream.mode = 'ok';
    await waitFor(() => run.proxy.state.ready);
    const health = await call(run, 'GET', '/proxy/health');
    assert.equal(health.status, 200);
    assert.equal(health.text, 'ok');
    assert.equal(health.headers['content-type'], 'text/html; charset=utf-8');
    assert.match(String(health.headers.etag), /^W\/"/);
    assert.equal((await call(run, 'GET', '/proxy', { headers: withKey() })).status, 200);
  });
});

describe('evaluation endpoints', () => {
  let run: Running;
  before(async () => {
    run = await startProxy(smallPayload, { proxySecrets: ['legacy-secret'], maxBodyBytes: 4096 });
    await run.proxy.poller.ready;
  });
  after(() => run.close());

  it('rejects missing and wrong keys with 401 Unauthorized, accepts clientKeys and proxySecrets', async () => {
    for (const headers of [
      {} as Record<string, string>,
      { authorization: 'wrong' },
      { authorization: `${CLIENT_KEY}x` },
      { authorization: '' },
    ]) {
      for (const path of ['/proxy', '/proxy/all']) {
        const answer = await call(run, 'GET', path, { headers });
        assert.equal(answer.status, 401);
        assert.equal(answer.text, 'Unauthorized');
        assert.equal(answer.headers['content-type'], 'text/plain; charset=utf-8');
      }
    }
    // Auth comes before input checks: a bad query without a key is a 401, not a 400.
    assert.equal((await call(run, 'GET', '/proxy?properties=x')).status, 401);
    assert.equal(
      (await call(run, 'GET', '/proxy', { headers: { authorization: 'legacy-secret' } })).status,
      200,
    );
  });

  it('GET /proxy lists the enabled toggles for the query context with the documented headers', async () => {
    const answer = await call(run, 'GET', '/proxy?userId=123&properties[region]=eu', {
      headers: withKey(),
    });
    assert.equal(answer.status, 200);
    assert.equal(answer.headers['content-type'], 'application/json; charset=utf-8');
    assert.equal(answer.headers['cache-control'], 'public, max-age=2');
    assert.equal(answer.headers['access-control-allow-origin'], '*');
    assert.equal(answer.headers['access-control-expose-headers'], 'ETag');
    assert.equal(answer.headers.vary, 'Accept-Encoding, Authorization');
    assert.match(String(answer.headers.etag), /^W\/".+"$/);
    assert.deepEqual(names(answer), [
      'simple-on',
      'with-variants',
      'json-variant',
      'user-123',
      'region-eu',
    ]);
    const toggles = answer.json().toggles;
    assert.deepEqual(toggles[0], {
      name: 'simple-on',
      enabled: true,
      variant: { name: 'disabled', enabled: false, feature_enabled: true, featureEnabled: true },
      impressionData: false,
    });
    assert.deepEqual(toggles[1], {
      name: 'with-variants',
      enabled: true,
      variant: {
        name: 'blue',
        enabled: true,
        payload: { type: 'string', value: 'blue-payload' },
        feature_enabled: true,
        featureEnabled: true,
      },
      impressionData: true,
    });
    assert.deepEqual(toggles[2].variant.payload, { type: 'json', value: '{"a":1}' });
  });

  it('moves unknown top-level query fields into properties; explicit properties win', async () => {
    const moved = await call(run, 'GET', '/proxy?region=eu', { headers: withKey() });
    assert.ok(names(moved).includes('region-eu'));
    const explicit = await call(run, 'GET', '/proxy?region=eu&properties[region]=us', {
      headers: withKey(),
    });
    assert.ok(!names(explicit).includes('region-eu'));
    const polluted = await call(
      run,
      'GET',
      '/proxy?properties[__proto__]=x&__proto__=y&constructor=z',
      {
        headers: withKey(),
      },
    );
    assert.equal(polluted.status, 200);
    assert.equal(({} as Record<string, unknown>).x, undefined);
    const repeated = await call(run, 'GET', '/proxy?userId=1&userId=2', {
      headers: withKey(),
    });
    assert.equal(repeated.status, 400);
    assert.equal(repeated.json().name, 'BadDataError');
  });

  it('answers 304 to a GET whose If-None-Match matches, never to a POST', async () => {
    const first = await call(run, 'GET', '/proxy?userId=123', { headers: withKey() });
    const etag = String(first.headers.etag);
    const again = await call(run, 'GET', '/proxy?userId=123', {
      headers: withKey({ 'if-none-match': etag }),
    });
    assert.equal(again.status, 304);
    assert.equal(again.text, '');
    assert.equal(again.headers.etag, etag);
    const other = await call(run, 'GET', '/proxy?userId=999', {
      headers: withKey({ 'if-none-match': etag }),
    });
    assert.equal(other.status, 200);
    assert.notEqual(other.headers.etag, etag);
    const post = await call(run, 'POST', '/proxy', {
      headers: withKey({ 'content-type': 'application/json', 'if-none-match': etag }),
      body: JSON.stringify({ context: { userId: '123' } }),
    });
    assert.equal(post.status, 200);
    assert.equal(post.headers.etag, etag, 'same toggles, same validator');
  });

  it('HEAD /proxy answers the headers without a body', async () => {
    const answer = await call(run, 'HEAD', '/proxy?userId=123', { headers: withKey() });
    assert.equal(answer.status, 200);
    assert.equal(answer.text, '');
    assert.equal(answer.headers['cache-control'], 'public, max-age=2');
  });

  it('POST /proxy without toggles lists enabled toggles; with toggles lists each name, unknown ones disabled', async () => {
    const all = await call(run, 'POST', '/proxy', {
      headers: withKey({ 'content-type': 'application/json' }),
      body: JSON.stringify({ context: { userId: '456', appName: 'foo' } }),
    });
    assert.deepEqual(names(all), [
      'simple-on',
      'with-variants',
      'json-variant',
      'user-123',
      'app-foo',
    ]);
    const named = await call(run, 'POST', '/proxy', {
      headers: withKey({ 'content-type': 'application/json' }),
      body: JSON.stringify({
        context: { userId: '1' },
        toggles: ['simple-off', 'simple-on', 'nope', 'simple-on'],
      }),
    });
    assert.equal(named.status, 200);
    assert.equal(named.headers['cache-control'], 'public, max-age=2');
    assert.deepEqual(named.json().toggles, [
      {
        name: 'simple-off',
        enabled: false,
        variant: {
          name: 'disabled',
          enabled: false,
          feature_enabled: false,
          featureEnabled: false,
        },
        impressionData: true,
      },
      {
        name: 'simple-on',
        enabled: true,
        variant: { name: 'disabled', enabled: false, feature_enabled: true, featureEnabled: true },
        impressionData: false,
      },
      {
        name: 'nope',
        enabled: false,
        variant: {
          name: 'disabled',
          enabled: false,
          feature_enabled: false,
          featureEnabled: false,
        },
        impressionData: false,
      },
      {
        name: 'simple-on',
        enabled: true,
        variant: { name: 'disabled', enabled: false, feature_enabled: true, featureEnabled: true },
        impressionData: false,
      },
    ]);
  });

  it('reads a body without Content-Type as JSON; an empty POST evaluates the default context', async () => {
    const noType = await call(run, 'POST', '/proxy', {
      headers: withKey(),
      body: JSON.stringify({ context: { appName: 'foo' } }),
    });
    assert.equal(noType.status, 200);
    assert.ok(names(noType).includes('app-foo'));
    const empty = await call(run, 'POST', '/proxy', { headers: withKey() });
    assert.equal(empty.status, 200);
    assert.deepEqual(names(empty), ['simple-on', 'with-variants', 'json-variant']);
  });

  it('rejects non-JSON types (415), malformed JSON (400), bad shapes (400) and large bodies (413) as JSON errors', async () => {
    const cases: Array<[Record<string, string>, string, number]> = [
      [{ 'content-type': 'text/plain' }, '{}', 415],
      [{ 'content-type': 'application/html' }, '{}', 415],
      [{ 'content-type': 'application/json' }, '{ toggles": [] }', 400],
      [{ 'content-type': 'application/json' }, '[]', 400],
      [{ 'content-type': 'application/json' }, '{"toggles":"x"}', 400],
      [{ 'content-type': 'application/json' }, '{"context":"abc"}', 400],
      [{ 'content-type': 'application/json' }, '{"context":{"properties":["x"]}}', 400],
      [{ 'content-type': 'application/json' }, '{"context":{"properties":{"a":{"b":1}}}}', 400],
      [{ 'content-type': 'application/json' }, '{"__proto__":{"x":1}}', 400],
      [
        { 'content-type': 'application/json' },
        JSON.stringify({ toggles: Array(1000).fill('a-long-name') }),
        413,
      ],
    ];
    for (const [headers, body, status] of cases) {
      const answer = await call(run, 'POST', '/proxy', { headers: withKey(headers), body });
      assert.equal(answer.status, status, body.slice(0, 40));
      assert.equal(answer.headers['content-type'], 'application/json; charset=utf-8');
      const error = answer.json();
      assert.equal(typeof error.name, 'string');
      assert.equal(typeof error.message, 'string');
      assert.ok(Array.isArray(error.details) && typeof error.details[0].message === 'string');
    }
    // Input is checked after auth: no key → 401 even with a bad body.
    const unauthenticated = await call(run, 'POST', '/proxy', {
      headers: { 'content-type': 'text/plain' },
      body: 'x',
    });
    assert.equal(unauthenticated.status, 401);
  });

  it('coerces numbers in the POST context to strings', async () => {
    const answer = await call(run, 'POST', '/proxy', {
      headers: withKey({ 'content-type': 'application/json' }),
      body: JSON.stringify({ context: { userId: 123 }, toggles: ['user-123'] }),
    });
    assert.equal(answer.json().toggles[0].enabled, true);
  });

  it('/proxy/all is 501 with the enabling hint when enableAllEndpoint is off', async () => {
    for (const method of ['GET', 'POST']) {
      const answer = await call(run, method, '/proxy/all', {
        headers: withKey(),
        body: method === 'POST' ? '{}' : undefined,
      });
      assert.equal(answer.status, 501);
      assert.equal(answer.text, ALL_DISABLED_MESSAGE);
      assert.equal(answer.headers['content-type'], 'text/html; charset=utf-8');
    }
  });

  it('answers CORS preflights on any path without key or readiness', async () => {
    for (const path of ['/proxy', '/anything/else']) {
      const answer = await call(run, 'OPTIONS', path, {
        headers: {
          origin: 'https://app.example',
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'authorization,content-type',
        },
      });
      assert.equal(answer.status, 204);
      assert.equal(answer.headers['access-control-allow-origin'], '*');
      assert.equal(answer.headers['access-control-allow-methods'], 'GET, POST');
      assert.equal(answer.headers['access-control-allow-headers'], 'authorization,content-type');
      assert.equal(answer.headers['access-control-max-age'], '172800');
      assert.equal(answer.headers['access-control-expose-headers'], 'ETag');
      assert.equal(answer.headers['content-length'], '0');
    }
  });

  it('evaluates remoteAddress from the caller when given, from the peer address otherwise, and currentTime', async () => {
    const given = await call(run, 'GET', '/proxy?remoteAddress=10.1.2.3', {
      headers: withKey(),
    });
    assert.ok(names(given).includes('from-10'));
    const forwarded = await call(run, 'GET', '/proxy', {
      headers: withKey({ 'x-forwarded-for': '10.1.2.3' }),
    });
    assert.ok(
      !names(forwarded).includes('from-10'),
      'X-Forwarded-For is ignored without trustProxy',
    );
    const future = await call(run, 'GET', '/proxy?currentTime=2031-01-01T00:00:00Z', {
      headers: withKey(),
    });
    assert.ok(names(future).includes('after-2030'));
    const invalid = await call(run, 'GET', '/proxy?currentTime=not-a-date', {
      headers: withKey(),
    });
    assert.equal(invalid.status, 200);
  });

  it('answers conform to the frontend response schema', async () => {
    const validate = new Ajv({ strict: false }).compile({
      ...frontendResponseSchema,
      additionalProperties: false,
    });
    const answers = [
      await call(run, 'GET', '/proxy?userId=123&currentTime=2031-01-01T00:00:00Z', {
        headers: withKey(),
      }),
      await call(run, 'POST', '/proxy', {
        headers: withKey({ 'content-type': 'application/json' }),
        body: JSON.stringify({ context: {}, toggles: ['simple-off', 'json-variant', 'unknown'] }),
      }),
    ];
    for (const answer of answers)
      assert.ok(validate(answer.json()), JSON.stringify(validate.errors));
  });

  it('answers unknown paths with a JSON 404', async () => {
    const answer = await call(run, 'PUT', '/proxy', { headers: withKey() });
    assert.equal(answer.status, 404);
    assert.equal(answer.json().name, 'NotFoundError');
  });
});

describe('options that shape requests', () => {
  it('serves /proxy/all with enableAllEndpoint, under proxyBasePath, with the environment fixed', async () => {
    const run = await startProxy(smallPayload, {
      enableAllEndpoint: true,
      proxyBasePath: 'base/path/',
      environment: 'production',
    });
    try {
      await run.proxy.poller.ready;
      assert.equal((await call(run, 'GET', '/proxy', { headers: withKey() })).status, 404);
      assert.equal((await call(run, 'GET', '/proxy/health')).status, 404);
      assert.equal((await call(run, 'GET', '/base/path/proxy/health')).text, 'ok');
      const all = await call(run, 'GET', '/base/path/proxy/all?environment=dev', {
        headers: withKey(),
      });
      assert.equal(all.status, 200);
      assert.equal(all.json().toggles.length, smallPayload.features.length);
      const off = all
        .json()
        .toggles.find((toggle: { name: string }) => toggle.name === 'simple-off');
      assert.deepEqual(off.variant, {
        name: 'disabled',
        enabled: false,
        feature_enabled: false,
        featureEnabled: false,
      });
      assert.equal(off.enabled, false);
      // environment=dev from the caller is overridden by the configured production.
      assert.equal(
        all.json().toggles.find((toggle: { name: string }) => toggle.name === 'env-prod').enabled,
        true,
      );
      const named = await call(run, 'POST', '/base/path/proxy/all', {
        headers: withKey({ 'content-type': 'application/json' }),
        body: JSON.stringify({ context: {}, toggles: ['simple-on'] }),
      });
      assert.deepEqual(names(named), ['simple-on']);
    } finally {
      await run.close();
    }
  });

  it('uses a custom client key header and restricted CORS origins', async () => {
    const run = await startProxy(smallPayload, {
      clientKeysHeaderName: 'X-Client-Key',
      cors: { origin: ['https://a.example', 'https://b.example'], credentials: true },
    });
    try {
      await run.proxy.poller.ready;
      assert.equal((await call(run, 'GET', '/proxy', { headers: withKey() })).status, 401);
      const allowed = await call(run, 'GET', '/proxy', {
        headers: { 'x-client-key': CLIENT_KEY, origin: 'https://b.example' },
      });
      assert.equal(allowed.status, 200);
      assert.equal(allowed.headers['access-control-allow-origin'], 'https://b.example');
      assert.equal(allowed.headers['access-control-allow-credentials'], 'true');
      const other = await call(run, 'GET', '/proxy', {
        headers: { 'x-client-key': CLIENT_KEY, origin: 'https://evil.example' },
      });
      assert.equal(other.status, 200);
      assert.equal(other.headers['access-control-allow-origin'], undefined);
    } finally {
      await run.close();
    }
  });

  for (const [label, trustProxy, trusted] of [
    ['true', true, true],
    ['false', false, false],
    ['an IP', '127.0.0.1', true],
    ['a CIDR', '127.0.0.0/8', true],
    ['a list', ['192.168.0.1', '127.0.0.1/32'], true],
    ['a non-matching CIDR', '192.168.0.0/16', false],
  ] as const) {
    it(`trustProxy ${label}: forwarded-for ${trusted ? 'is' : 'is not'} the caller address`, async () => {
      const run = await startProxy(smallPayload, { trustProxy });
      try {
        await run.proxy.poller.ready;
        const answer = await call(run, 'GET', '/proxy', {
          headers: withKey({ 'x-forwarded-for': '10.1.2.3' }),
        });
        assert.equal(names(answer).includes('from-10'), trusted);
      } finally {
        await run.close();
      }
    });
  }
});

describe('ignoreCallerRemoteAddress', () => {
  const fromTen = async (run: Running, path: string, forwardedFor: string, body?: unknown) => {
    const answer = await call(run, body === undefined ? 'GET' : 'POST', path, {
      headers: withKey({ 'x-forwarded-for': forwardedFor, 'content-type': 'application/json' }),
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    assert.equal(answer.status, 200);
    return names(answer).includes('from-10');
  };

  it('is on by default with trustProxy: the request address wins over the caller’s, cached or not', async () => {
    const run = await startProxy(smallPayload, { trustProxy: '127.0.0.1' });
    try {
      await run.proxy.poller.ready;
      assert.equal(run.proxy.config.ignoreCallerRemoteAddress, true);
      // Twice each: the second answer comes from the answer cache.
      for (let i = 0; i < 2; i++) {
        assert.equal(await fromTen(run, '/proxy?remoteAddress=10.1.2.3', '10.1.2.3'), true);
        assert.equal(await fromTen(run, '/proxy?remoteAddress=10.1.2.3', '10.9.9.9'), false);
        assert.equal(await fromTen(run, '/proxy?remoteAddress=10.9.9.9', '10.1.2.3'), true);
        const given = { context: { remoteAddress: '10.1.2.3' } };
        assert.equal(await fromTen(run, '/proxy', '10.9.9.9', given), false);
        assert.equal(await fromTen(run, '/proxy', '10.1.2.3', given), true);
      }
      const ofrep = await call(run, 'POST', '/ofrep/v1/evaluate/flags/from-10', {
        headers: withKey({ 'x-forwarded-for': '10.9.9.9', 'content-type': 'application/json' }),
        body: JSON.stringify({ context: { remoteAddress: '10.1.2.3' } }),
      });
      assert.equal(ofrep.status, 404, 'off for the request address');
    } finally {
      await run.close();
    }
  });

  it('can be turned off with trustProxy (the caller’s address wins, as in Unleash Proxy) and on without', async () => {
    const compatible = await startProxy(smallPayload, {
      trustProxy: true,
      ignoreCallerRemoteAddress: false,
    });
    try {
      await compatible.proxy.poller.ready;
      assert.equal(await fromTen(compatible, '/proxy?remoteAddress=10.1.2.3', '10.9.9.9'), true);
    } finally {
      await compatible.close();
    }
    const strict = await startProxy(smallPayload, { ignoreCallerRemoteAddress: true });
    try {
      await strict.proxy.poller.ready;
      // No trustProxy: the peer address (127.0.0.1, as inject gives it) is the request address.
      assert.equal(await fromTen(strict, '/proxy?remoteAddress=10.1.2.3', '10.1.2.3'), false);
    } finally {
      await strict.close();
    }
  });
});

describe('upstream sync', () => {
  it('sends the token, identity headers, filters and If-None-Match; registers at start', async () => {
    const run = await startProxy(smallPayload, {
      projectName: 'web',
      namePrefix: 'simple',
      tags: [
        { name: 'simple', value: 'proxy' },
        { name: 'demo', value: 'test' },
      ],
      flagsAppName: 'my-proxy',
      flagsInstanceId: 'instance-7',
    });
    try {
      await waitFor(() => run.upstream.featureRequests().length >= 2);
      const [first, second] = run.upstream.featureRequests();
      assert.ok(first && second);
      assert.equal(first.query.get('project'), 'web');
      assert.equal(first.query.get('namePrefix'), 'simple');
      assert.deepEqual(first.query.getAll('tag'), ['simple:proxy', 'demo:test']);
      assert.equal(first.headers.authorization, API_TOKEN);
      assert.equal(first.headers['unleash-appname'], 'my-proxy');
      assert.equal(first.headers['unleash-instanceid'], 'instance-7');
      assert.match(String(first.headers['unleash-connection-id']), /^[0-9a-f-]{36}$/);
      assert.match(String(first.headers['user-agent']), /^flags-proxy\//);
      assert.equal(first.headers['if-none-match'], undefined);
      assert.match(String(second.headers['if-none-match']), /^".+"$/);
      await waitFor(() =>
        run.upstream.requests.some((request) => request.path === '/api/client/register'),
      );
      const register = run.upstream.requests.find(
        (request) => request.path === '/api/client/register',
      );
      const body = JSON.parse(register?.body ?? '{}');
      assert.equal(body.appName, 'my-proxy');
      assert.equal(body.instanceId, 'instance-7');
      assert.match(body.sdkVersion, /^flags-proxy:/);
      assert.ok(body.strategies.includes('flexibleRollout'));
      assert.equal(register?.headers.authorization, API_TOKEN);
      assert.ok(!run.log.text().includes(API_TOKEN), 'the token is never logged');
      assert.ok(!run.log.text().includes(CLIENT_KEY), 'client keys are never logged');
    } finally {
      await run.close();
    }
  });

  it('keeps serving the last good snapshot through outages, garbage and invalid payloads; picks up changes', async () => {
    // Six failed polls in a row back off to 32 intervals: a short interval keeps that wait short.
    const run = await startProxy(smallPayload, { refreshInterval: 10 });
    try {
      await run.proxy.poller.ready;
      const before = await call(run, 'GET', '/proxy', { headers: withKey() });
      for (const mode of ['garbage', 'invalid', 'error500'] as const) {
        run.upstream.mode = mode;
        const count = run.upstream.featureRequests().length;
        await waitFor(() => run.upstream.featureRequests().length > count + 1);
        const during = await call(run, 'GET', '/proxy', { headers: withKey() });
        assert.equal(during.status, 200);
        assert.equal(during.text, before.text, mode);
      }
      await run.upstream.stop();
      await new Promise((resolve) => setTimeout(resolve, 150));
      assert.equal((await call(run, 'GET', '/proxy', { headers: withKey() })).text, before.text);
      assert.equal((await call(run, 'GET', '/proxy/health')).status, 200);
      run.upstream.mode = 'ok';
      run.upstream.setPayload({
        version: 2,
        features: [{ name: 'brand-new', enabled: true, strategies: [] }],
      });
      await run.upstream.restart();
      await waitFor(async () =>
        names(await call(run, 'GET', '/proxy', { headers: withKey() })).includes('brand-new'),
      );
      assert.ok(
        run.log.lines.some((line) => line.level === 'warn' && /invalid JSON/.test(line.message)),
      );
      assert.ok(run.log.lines.some((line) => line.level === 'warn' && /schema/.test(line.message)));
    } finally {
      await run.close();
    }
  });

  it('backs off on 5xx and treats 401/403 as a token problem, retried slowly until fixed', async () => {
    const run = await startProxy(
      smallPayload,
      { refreshInterval: 20 },
      {
        upstream: (upstream) => {
          upstream.mode = 'unauthorized';
        },
      },
    );
    try {
      await waitFor(() => run.upstream.featureRequests().length >= 2, 8000);
      assert.ok(
        run.log.lines.some((line) => line.level === 'error' && /API token/.test(line.message)),
      );
      assert.equal((await call(run, 'GET', '/proxy/health')).status, 503);
      const times = run.upstream.featureRequests().map((request) => request.at);
      assert.ok(
        (times[1] as number) - (times[0] as number) >= 20 * 4,
        'token problems are retried slowly',
      );
      run.upstream.mode = 'ok';
      await waitFor(() => run.proxy.state.ready, 8000);
      run.upstream.mode = 'error500';
      const start = run.upstream.featureRequests().length;
      await waitFor(() => run.upstream.featureRequests().length >= start + 5, 8000);
      const failed = run.upstream
        .featureRequests()
        .slice(start)
        .map((request) => request.at);
      const gaps = failed.slice(1).map((at, i) => at - (failed[i] as number));
      assert.ok((gaps[3] as number) > (gaps[0] as number), `gaps grow: ${gaps.join(',')}`);
    } finally {
      await run.close();
    }
  });
});
