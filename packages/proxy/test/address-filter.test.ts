import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { createProxy, loadConfig } from '@flags/proxy';
import { request } from 'undici';
import { smallPayload } from './fixtures/small.js';
import { FakeUpstream } from './helpers/fake-upstream.js';
import { API_TOKEN, CLIENT_KEY, type Listening, startProxy, waitFor } from './helpers/proxy.js';

/**
 * `allowList` and `denyList` (Unleash Edge's `ALLOW_LIST` and `DENY_LIST`): over real sockets, so
 * that the evaluation front, which answers before Fastify, is filtered as the routes are.
 */

async function get(
  running: Listening,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string }> {
  const response = await request(`${running.base}${path}`, {
    headers: { authorization: CLIENT_KEY, ...headers },
  });
  return { status: response.statusCode, body: await response.body.text() };
}

function assertRefused(seen: { status: number; body: string }): void {
  assert.equal(seen.status, 403);
  assert.equal(JSON.parse(seen.body).name, 'ForbiddenError');
}

async function withProxy(
  options: Parameters<typeof startProxy>[1],
  test: (running: Listening) => Promise<void>,
): Promise<void> {
  const running = await startProxy(smallPayload, options, { listen: true });
  try {
    await waitFor(() => running.proxy.environments.ready);
    await test(running);
  } finally {
    await running.close();
  }
}

describe('address lists', () => {
  it('answers only the addresses of allowList, on every route, the evaluation front included', async () => {
    await withProxy({ allowList: ['10.0.0.0/8'] }, async (running) => {
      assertRefused(await get(running, '/proxy?userId=1'));
      assertRefused(await get(running, '/api/frontend'));
      assertRefused(await get(running, '/proxy/health'));
      assert.equal(running.proxy.app.evaluationFront?.answered, 0);
    });
    await withProxy({ allowList: ['192.0.2.1', 'loopback'] }, async (running) => {
      const seen = await get(running, '/proxy?userId=1');
      assert.equal(seen.status, 200);
      assert.ok(JSON.parse(seen.body).toggles.length > 0);
      assert.equal(running.proxy.app.evaluationFront?.answered, 1);
    });
  });

  it('refuses the addresses of denyList, even where allowList has them', async () => {
    await withProxy({ allowList: ['loopback'], denyList: ['127.0.0.0/8'] }, async (running) => {
      assertRefused(await get(running, '/proxy?userId=1'));
      assertRefused(await get(running, '/proxy/health'));
    });
    await withProxy({ denyList: ['192.0.2.0/24'] }, async (running) => {
      assert.equal((await get(running, '/proxy?userId=1')).status, 200);
    });
  });

  it('filters the forwarded address when trustProxy trusts the sender', async () => {
    await withProxy(
      { trustProxy: ['loopback'], allowList: ['203.0.113.0/24'], denyList: ['203.0.113.9'] },
      async (running) => {
        const from = (address: string) => ({ 'x-forwarded-for': address });
        assert.equal((await get(running, '/proxy', from('203.0.113.7'))).status, 200);
        assertRefused(await get(running, '/proxy', from('198.51.100.1')));
        assertRefused(await get(running, '/proxy', from('203.0.113.9')));
        // The socket's own address is not on the list.
        assertRefused(await get(running, '/proxy'));
      },
    );
  });

  it('trusts the forwarded address of PROXY_TRUSTED_SERVERS only, as Unleash Edge reads TRUST_PROXY=true with it', async () => {
    const upstream = new FakeUpstream(smallPayload);
    await upstream.start();
    // The proxy's own sender (loopback) is not a trusted server: its X-Forwarded-For is not read.
    const proxy = await createProxy(
      {
        flagsUrl: upstream.url,
        flagsApiToken: API_TOKEN,
        clientKeys: [CLIENT_KEY],
        refreshInterval: 50,
      },
      { TRUST_PROXY: 'true', PROXY_TRUSTED_SERVERS: '192.0.2.1', ALLOW_LIST: '203.0.113.0/24' },
    );
    try {
      assert.deepEqual(proxy.config.trustProxy, ['192.0.2.1']);
      await proxy.app.listen({ port: 0, host: '127.0.0.1' });
      await waitFor(() => proxy.environments.ready);
      const { port } = proxy.app.server.address() as AddressInfo;
      const response = await request(`http://127.0.0.1:${port}/proxy`, {
        headers: { authorization: CLIENT_KEY, 'x-forwarded-for': '203.0.113.7' },
      });
      assertRefused({ status: response.statusCode, body: await response.body.text() });
    } finally {
      await proxy.app.close();
      await upstream.stop();
    }
    const base = {
      FLAGS_URL: 'http://upstream.test/api',
      FLAGS_API_TOKEN: 't',
      FLAGS_PROXY_CLIENT_KEYS: 'k',
    };
    // Without TRUST_PROXY=true, Edge trusts no sender whatever the list says.
    assert.equal(loadConfig({ ...base, PROXY_TRUSTED_SERVERS: '10.0.0.0/8' }).trustProxy, false);
    assert.deepEqual(
      loadConfig({ ...base, TRUST_PROXY: 'TRUE', PROXY_TRUSTED_SERVERS: '10.0.0.0/8, ::1' })
        .trustProxy,
      ['10.0.0.0/8', '::1'],
    );
  });

  it('reads ALLOW_LIST, DENY_LIST and TOKEN_HEADER as Unleash Edge names them, and refuses a bad entry', () => {
    const base = {
      FLAGS_URL: 'http://upstream.test/api',
      FLAGS_API_TOKEN: 'token',
      FLAGS_PROXY_CLIENT_KEYS: 'key',
    };
    const config = loadConfig({
      ...base,
      ALLOW_LIST: '10.0.0.0/8, 192.168.1.1',
      DENY_LIST: '10.9.0.0/16',
      TOKEN_HEADER: 'X-Flags-Key',
    });
    assert.deepEqual(config.allowList, ['10.0.0.0/8', '192.168.1.1']);
    assert.deepEqual(config.denyList, ['10.9.0.0/16']);
    assert.equal(config.clientKeysHeaderName, 'x-flags-key');
    assert.throws(() => loadConfig({ ...base, ALLOW_LIST: '10.0.0.0/33' }), /ALLOW_LIST/);
    assert.throws(() => loadConfig({ ...base, DENY_LIST: 'not-an-address' }), /DENY_LIST/);
  });
});
