import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ClientFeatures } from '@flags/schemas';
import { call, startProxy, withKey } from './helpers/proxy.js';

/** One flag on for everyone, with one variant: `variant` names it (the tests use names of one length, so bodies differ in content only). */
function payload(variant: string): ClientFeatures {
  return {
    version: 2,
    features: [
      {
        name: 'checkout',
        enabled: true,
        strategies: [{ name: 'default', parameters: {} }],
        variants: [{ name: variant, weight: 1000, weightType: 'variable', stickiness: 'default' }],
      },
    ],
  };
}

const json = withKey({ 'content-type': 'application/json' });

/**
 * Two proxies behind one load balancer, or one proxy before and after a restart, while the flags
 * change: the same request gets different answers, which must never share an ETag, or a client
 * revalidating with the first answer's ETag gets 304 for the second and keeps the stale answer.
 */
describe('ETags across proxy processes', () => {
  const routes = [
    { name: 'GET /proxy', method: 'GET', path: '/proxy?userId=7', body: undefined },
    {
      name: 'POST /proxy with toggle names',
      method: 'POST',
      path: '/proxy',
      body: JSON.stringify({ context: { userId: '7' }, toggles: ['checkout'] }),
    },
    {
      name: 'OFREP bulk',
      method: 'POST',
      path: '/ofrep/v1/evaluate/flags',
      body: JSON.stringify({ context: { targetingKey: '7' } }),
    },
  ] as const;

  for (const route of routes) {
    it(`${route.name}: different answers get different ETags, equal answers equal ones`, async () => {
      const before = await startProxy(payload('blue'));
      const after = await startProxy(payload('gray'));
      const again = await startProxy(payload('blue'));
      try {
        const ask = async (run: typeof before, etag?: string) => {
          await run.proxy.poller.ready;
          const headers = etag === undefined ? json : { ...json, 'if-none-match': etag };
          return call(run, route.method, route.path, { headers, body: route.body });
        };
        const first = await ask(before);
        assert.equal(first.status, 200, first.text);
        const etag = String(first.headers.etag);
        const second = await ask(after, etag);
        // GET revalidates; a POST never answers 304, so compare the tags themselves too.
        assert.equal(second.status, 200, 'a changed answer is sent whole');
        assert.notEqual(second.text, first.text);
        assert.notEqual(String(second.headers.etag), etag);
        const third = await ask(again);
        assert.equal(third.text, first.text);
        assert.equal(String(third.headers.etag), etag, 'the same answer, the same tag');
      } finally {
        await before.close();
        await after.close();
        await again.close();
      }
    });
  }
});
