import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { createProxy, type ProxyApp } from '@flags/proxy';
import { ALL_CLIENT, secondPayload, startChangingProxy } from './helpers/changing-proxy.js';
import { type Listening, waitFor } from './helpers/proxy.js';
import { RecordingLogger } from './helpers/recording-logger.js';

/** The flag names a proxy's client API serves, sorted. */
async function served(proxy: ProxyApp | Listening): Promise<string[]> {
  const app = 'app' in proxy ? proxy.app : proxy.proxy.app;
  const answer = await app.inject({
    method: 'GET',
    url: '/api/client/features',
    headers: { authorization: ALL_CLIENT },
  });
  const body = answer.json() as { features: Array<{ name: string; enabled: boolean }> };
  return body.features.map((feature) => `${feature.name}:${feature.enabled}`).sort();
}

// A proxy chain (Edge's "daisy chaining"): a downstream flags-proxy syncs from an upstream
// flags-proxy by streaming, so one stream from flags-server fans out through the chain.
describe('flags-proxy behind flags-proxy', () => {
  let upstream: Listening | undefined;
  let downstream: ProxyApp | undefined;
  after(async () => {
    await downstream?.app.close();
    await upstream?.close();
  });

  it('syncs by streaming from the upstream proxy and follows its changes without polling', async () => {
    upstream = await startChangingProxy({}, true);
    await upstream.proxy.poller.ready;
    const paths: string[] = [];
    upstream.proxy.app.server.on('request', (request) => {
      paths.push((request.url ?? '').split('?')[0] as string);
    });
    const log = new RecordingLogger();
    downstream = await createProxy({
      flagsUrl: `${upstream.base}/api`,
      flagsApiToken: [ALL_CLIENT],
      refreshInterval: 50,
      metricsInterval: 0,
      logger: log,
    });
    await downstream.poller.ready;
    assert.deepEqual(await served(downstream), await served(upstream));

    const first = await served(upstream);
    upstream.upstream.setPayload(structuredClone(secondPayload));
    await waitFor(async () => (await served(upstream as Listening)).join() !== first.join());
    await waitFor(async () => (await served(downstream as ProxyApp)).join() !== first.join());
    assert.deepEqual(await served(downstream), await served(upstream));
    assert.ok(paths.includes('/api/client/streaming'));
    assert.ok(!paths.includes('/api/client/features'), 'the downstream proxy never polled');

    // Its own SDK-facing routes answer from what came through the chain: `invoice` moved to the
    // default project in the second payload.
    const invoice = await downstream.app.inject({
      method: 'GET',
      url: '/api/client/features/invoice',
      headers: { authorization: ALL_CLIENT },
    });
    assert.equal(invoice.statusCode, 200);
    assert.equal((invoice.json() as { project?: string }).project ?? 'default', 'default');
  });
});
