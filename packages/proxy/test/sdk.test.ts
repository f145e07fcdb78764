import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InMemoryStorageProvider, UnleashClient } from 'unleash-proxy-client';
import { smallPayload } from './fixtures/small.js';
import { CLIENT_KEY, startProxy, waitFor } from './helpers/proxy.js';

/** The real browser SDK (`unleash-proxy-client`) against a real proxy, in Node (global fetch). */
describe('unleash-proxy-client against the proxy', () => {
  for (const usePOSTrequests of [false, true]) {
    it(`fetches, answers isEnabled/getVariant, and sees an upstream change on its next poll (${usePOSTrequests ? 'POST' : 'GET'})`, async () => {
      const run = await startProxy(smallPayload, {}, { listen: true });
      const client = new UnleashClient({
        url: `${run.base}/proxy`,
        clientKey: CLIENT_KEY,
        appName: 'web-app',
        refreshInterval: 1,
        disableMetrics: true,
        usePOSTrequests,
        storageProvider: new InMemoryStorageProvider(),
        context: { userId: '123', properties: { region: 'eu' } },
      });
      try {
        await run.proxy.poller.ready;
        await client.start();
        assert.equal(client.isEnabled('simple-on'), true);
        assert.equal(client.isEnabled('simple-off'), false);
        assert.equal(client.isEnabled('user-123'), true);
        assert.equal(client.isEnabled('region-eu'), true);
        assert.equal(client.isEnabled('app-foo'), false);
        assert.equal(client.isEnabled('does-not-exist'), false);
        const variant = client.getVariant('with-variants');
        assert.equal(variant.name, 'blue');
        assert.equal(variant.enabled, true);
        assert.deepEqual(variant.payload, { type: 'string', value: 'blue-payload' });
        assert.equal(client.getVariant('simple-on').name, 'disabled');
        assert.equal(client.getVariant('simple-on').enabled, false);

        await client.updateContext({ userId: '999', properties: { region: 'us' } });
        assert.equal(client.isEnabled('user-123'), false);
        assert.equal(client.isEnabled('region-eu'), false);

        const updated = new Promise<void>((resolve) => client.on('update', () => resolve()));
        run.upstream.setPayload({
          version: 2,
          features: [
            ...smallPayload.features.filter((feature) => feature.name !== 'simple-on'),
            { name: 'late-arrival', enabled: true, strategies: [{ name: 'default' }] },
          ],
        });
        await waitFor(() => run.proxy.state.current?.snapshot.has('late-arrival') ?? false);
        await updated;
        assert.equal(client.isEnabled('late-arrival'), true);
        assert.equal(client.isEnabled('simple-on'), false);
      } finally {
        client.stop();
        await run.close();
      }
    });
  }
});
