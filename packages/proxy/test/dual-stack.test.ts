// Listening on `::` (dual stack), an IPv4 client's socket address is `::ffff:127.0.0.1`. IP rules
// written for IPv4 must still match it: Unleash Proxy compares that text with IPv4 rules and
// silently turns them off.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createProxy, type ProxyApp } from '@flags/proxy';
import type { ClientFeatures } from '@flags/schemas';
import { FakeUpstream } from './helpers/fake-upstream.js';
import { API_TOKEN, CLIENT_KEY, call, waitFor } from './helpers/proxy.js';
import { RecordingLogger } from './helpers/recording-logger.js';

const payload: ClientFeatures = {
  version: 2,
  features: [
    {
      name: 'local-strategy',
      enabled: true,
      strategies: [{ name: 'remoteAddress', parameters: { IPs: '10.9.9.9, 127.0.0.1' } }],
    },
    {
      name: 'local-cidr',
      enabled: true,
      strategies: [
        {
          name: 'default',
          constraints: [
            { contextName: 'remoteAddress', operator: 'IN_CIDR', values: ['127.0.0.0/8'] },
          ],
        },
      ],
    },
    {
      name: 'elsewhere',
      enabled: true,
      strategies: [{ name: 'remoteAddress', parameters: { IPs: '10.0.0.0/8' } }],
    },
  ],
};

describe('a proxy listening on :: (dual stack)', () => {
  let upstream: FakeUpstream;
  let proxy: ProxyApp;
  let port: number;

  before(async () => {
    upstream = await new FakeUpstream(payload).start();
    proxy = await createProxy({
      flagsUrl: upstream.url,
      flagsApiToken: API_TOKEN,
      clientKeys: [CLIENT_KEY],
      refreshInterval: 60_000,
      metricsInterval: 0,
      logger: new RecordingLogger(),
    });
    await proxy.app.listen({ port: 0, host: '::' });
    port = (proxy.app.server.address() as AddressInfo).port;
    await waitFor(() => proxy.state.ready);
  });

  after(async () => {
    await proxy.app.close();
    await upstream.stop();
  });

  it('applies IPv4 rules to a client connecting over IPv4', async () => {
    const response = await call(`http://127.0.0.1:${port}`, 'GET', '/proxy', {
      headers: { authorization: CLIENT_KEY },
    });
    assert.equal(response.status, 200);
    const names = response.json().toggles.map((toggle: { name: string }) => toggle.name);
    assert.deepEqual(names, ['local-strategy', 'local-cidr']);
  });
});
