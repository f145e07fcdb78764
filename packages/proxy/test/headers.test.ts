import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { smallPayload } from './fixtures/small.js';
import {
  type Answer,
  CLIENT_KEY,
  call,
  type Running,
  startProxy,
  withKey,
} from './helpers/proxy.js';

const SERVER_TOKEN = 'server-side-token-for-headers-test';
const JSON_TYPE = { 'content-type': 'application/json' };

/** The names a `Vary` header lists, lowercased (header names are case-insensitive). */
function varies(answer: Answer): string[] {
  return String(answer.headers.vary ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== '');
}

describe('cache headers of keyed answers (shared caches must not serve them to others)', () => {
  let run: Running;
  before(async () => {
    run = await startProxy(smallPayload, {
      enableAllEndpoint: true,
      expServerSideSdkConfig: { tokens: [SERVER_TOKEN] },
      metricsInterval: 0,
    });
    await run.proxy.poller.ready;
  });
  after(() => run.close());

  it('evaluation answers keep public, max-age=2 and vary on the key header: fresh, cached and 304', async () => {
    const requests: [string, string, string | undefined][] = [
      ['GET', '/proxy?userId=123', undefined],
      ['POST', '/proxy', JSON.stringify({ context: { userId: '123' } })],
      ['POST', '/proxy', JSON.stringify({ context: {}, toggles: ['simple-on'] })],
      ['GET', '/proxy/all?userId=5', undefined],
      ['POST', '/proxy/all', JSON.stringify({ context: { userId: '5' } })],
    ];
    for (const [method, path, body] of requests) {
      // The first answer is evaluated, the second one comes from the answer cache.
      for (const round of ['fresh', 'cached']) {
        const answer = await call(run, method, path, {
          headers: withKey(JSON_TYPE),
          body,
        });
        const label = `${method} ${path} ${body ?? ''} (${round})`;
        assert.equal(answer.status, 200, label);
        assert.equal(answer.headers['cache-control'], 'public, max-age=2', label);
        assert.deepEqual(varies(answer), ['accept-encoding', 'authorization'], label);
        if (method === 'GET') {
          const again = await call(run, method, path, {
            headers: withKey({ 'if-none-match': String(answer.headers.etag) }),
          });
          assert.equal(again.status, 304, label);
          assert.equal(again.headers['cache-control'], 'public, max-age=2', label);
          assert.deepEqual(varies(again), ['accept-encoding', 'authorization'], label);
        }
      }
    }
  });

  it('OFREP answers vary on every header that may carry the key, 304 included', async () => {
    const expected = ['authorization', 'x-api-key'];
    const single = await call(run, 'POST', '/ofrep/v1/evaluate/flags/simple-on', {
      headers: withKey(JSON_TYPE),
      body: '{"context":{}}',
    });
    assert.equal(single.status, 200);
    assert.deepEqual(varies(single), expected);
    const bulk = await call(run, 'POST', '/ofrep/v1/evaluate/flags', {
      headers: { 'x-api-key': CLIENT_KEY, ...JSON_TYPE },
      body: '{"context":{}}',
    });
    assert.equal(bulk.status, 200);
    assert.deepEqual(varies(bulk), expected);
    const notModified = await call(run, 'POST', '/ofrep/v1/evaluate/flags', {
      headers: withKey({ ...JSON_TYPE, 'if-none-match': String(bulk.headers.etag) }),
      body: '{"context":{}}',
    });
    assert.equal(notModified.status, 304);
    assert.deepEqual(varies(notModified), expected);
  });

  it('/proxy/client/features (the whole configuration) is private and varies on the key header', async () => {
    const answer = await call(run, 'GET', '/proxy/client/features', {
      headers: { authorization: SERVER_TOKEN },
    });
    assert.equal(answer.status, 200);
    assert.equal(answer.headers['cache-control'], 'private, max-age=2');
    assert.deepEqual(varies(answer), ['authorization']);
    const again = await call(run, 'GET', '/proxy/client/features', {
      headers: { authorization: SERVER_TOKEN, 'if-none-match': String(answer.headers.etag) },
    });
    assert.equal(again.status, 304);
    assert.equal(again.headers['cache-control'], 'private, max-age=2');
    assert.deepEqual(varies(again), ['authorization']);
  });
});

describe('cache headers with a custom key header and an origin list', () => {
  it('vary on that header and on Origin (CORS echoes the origin)', async () => {
    const run = await startProxy(smallPayload, {
      clientKeysHeaderName: 'X-Client-Key',
      cors: { origin: ['https://a.example'] },
      expServerSideSdkConfig: { tokens: [SERVER_TOKEN] },
      metricsInterval: 0,
    });
    try {
      await run.proxy.poller.ready;
      for (const round of ['fresh', 'cached']) {
        const answer = await call(run, 'GET', '/proxy?userId=1', {
          headers: { 'x-client-key': CLIENT_KEY, origin: 'https://a.example' },
        });
        assert.equal(answer.status, 200, round);
        assert.equal(answer.headers['access-control-allow-origin'], 'https://a.example');
        assert.deepEqual(varies(answer), ['origin', 'accept-encoding', 'x-client-key'], round);
      }
      const ofrep = await call(run, 'POST', '/ofrep/v1/evaluate/flags', {
        headers: { 'x-client-key': CLIENT_KEY, ...JSON_TYPE },
        body: '{}',
      });
      assert.equal(ofrep.status, 200);
      assert.deepEqual(varies(ofrep), ['origin', 'x-client-key', 'authorization', 'x-api-key']);
      const features = await call(run, 'GET', '/proxy/client/features', {
        headers: { 'x-client-key': SERVER_TOKEN },
      });
      assert.equal(features.status, 200);
      assert.deepEqual(varies(features), ['origin', 'x-client-key']);
    } finally {
      await run.close();
    }
  });
});

describe('X-Content-Type-Options: nosniff', () => {
  it('is on every answer: JSON, text, errors, 304, 401, 404, 501 and preflights', async () => {
    const run = await startProxy(smallPayload, { metricsInterval: 0 });
    try {
      await run.proxy.poller.ready;
      const first = await call(run, 'GET', '/proxy?userId=1', { headers: withKey() });
      const answers: [string, Answer][] = [
        ['GET /proxy', first],
        ['GET /proxy (cached)', await call(run, 'GET', '/proxy?userId=1', { headers: withKey() })],
        [
          'GET /proxy 304',
          await call(run, 'GET', '/proxy?userId=1', {
            headers: withKey({ 'if-none-match': String(first.headers.etag) }),
          }),
        ],
        ['401', await call(run, 'GET', '/proxy')],
        ['400', await call(run, 'POST', '/proxy', { headers: withKey(JSON_TYPE), body: '[' })],
        ['404', await call(run, 'GET', '/nowhere')],
        ['501', await call(run, 'GET', '/proxy/all', { headers: withKey() })],
        ['health', await call(run, 'GET', '/proxy/health')],
        ['prometheus', await call(run, 'GET', '/proxy/internal-backstage/prometheus')],
        [
          'OFREP 404',
          await call(run, 'POST', '/ofrep/v1/evaluate/flags/nope', {
            headers: withKey(JSON_TYPE),
            body: '{}',
          }),
        ],
        [
          'metrics',
          await call(run, 'POST', '/proxy/client/metrics', {
            headers: withKey(JSON_TYPE),
            body: JSON.stringify({
              appName: 'web',
              bucket: {
                start: new Date().toISOString(),
                stop: new Date().toISOString(),
                toggles: {},
              },
            }),
          }),
        ],
        [
          'preflight',
          await call(run, 'OPTIONS', '/proxy', {
            headers: { origin: 'https://a.example', 'access-control-request-method': 'GET' },
          }),
        ],
      ];
      const statuses = answers.map(([, answer]) => answer.status);
      assert.deepEqual(statuses, [200, 200, 304, 401, 400, 404, 501, 200, 200, 404, 200, 204]);
      for (const [label, answer] of answers) {
        assert.equal(answer.headers['x-content-type-options'], 'nosniff', label);
      }
    } finally {
      await run.close();
    }
    const cold = await startProxy(
      smallPayload,
      { metricsInterval: 0 },
      {
        upstream: (upstream) => {
          upstream.mode = 'error500';
        },
      },
    );
    try {
      const notReady = await call(cold, 'GET', '/proxy', { headers: withKey() });
      assert.equal(notReady.status, 503);
      assert.equal(notReady.headers['x-content-type-options'], 'nosniff');
    } finally {
      await cold.close();
    }
  });
});
