import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ProxyOptions } from '@flags/proxy';
import { smallPayload } from './fixtures/small.js';
import { type Answer, call, startProxy } from './helpers/proxy.js';

/** One OPTIONS request to a proxy started with `options`. */
async function preflight(options: ProxyOptions, headers: Record<string, string>): Promise<Answer> {
  const run = await startProxy(smallPayload, options);
  try {
    await run.proxy.poller.ready;
    return await call(run, 'OPTIONS', '/proxy', { headers });
  } finally {
    await run.close();
  }
}

// The CORS answers of the `cors` package that Unleash Proxy uses, kept with @fastify/cors.
describe('CORS as Unleash Proxy answers it', () => {
  it('answers every OPTIONS request as a preflight, with or without Origin', async () => {
    const answer = await preflight({}, {});
    assert.equal(answer.status, 204);
    assert.equal(answer.headers['access-control-allow-origin'], '*');
    assert.equal(answer.headers['access-control-allow-methods'], 'GET, POST');
    assert.equal(answer.headers['access-control-max-age'], '172800');
    assert.equal(answer.text, '');
  });

  it('leaves OPTIONS to the routes with preflightContinue: none answers it (404), CORS headers on', async () => {
    const answer = await preflight(
      { cors: { preflightContinue: true } },
      { origin: 'https://a.example', 'access-control-request-method': 'GET' },
    );
    assert.equal(answer.status, 404);
    assert.equal(answer.json().name, 'NotFoundError');
    assert.equal(answer.headers['access-control-allow-origin'], '*');
    assert.equal(answer.headers['access-control-allow-methods'], undefined);
  });

  it('sends no Access-Control-Expose-Headers when exposedHeaders is empty', async () => {
    const answer = await preflight(
      { cors: { exposedHeaders: [] } },
      { origin: 'https://a.example', 'access-control-request-method': 'GET' },
    );
    assert.equal(answer.status, 204);
    assert.equal('access-control-expose-headers' in answer.headers, false);
  });
});
