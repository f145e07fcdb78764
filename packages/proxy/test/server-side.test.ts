import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { InMemStorageProvider, Unleash } from 'unleash-client';
import { realisticContexts, realisticPayload } from './fixtures/realistic.js';
import { call, type Listening, startProxy, waitFor, withKey } from './helpers/proxy.js';

const TOKEN = 'server-side-token-1';

describe('server-side SDK endpoint', () => {
  const payload = realisticPayload(60);
  let run: Listening;

  before(async () => {
    // Listening for unleash-client, which syncs from a URL; the other requests inject.
    run = await startProxy(
      payload,
      {
        expServerSideSdkConfig: { tokens: [TOKEN] },
        metricsInterval: 3_600_000,
        refreshInterval: 60_000,
      },
      { listen: true },
    );
    await run.proxy.poller.ready;
  });
  after(() => run.close());

  it('serves the synced payload, segments included, to server-side tokens only, with ETag/304', async () => {
    assert.equal((await call(run, 'GET', '/proxy/client/features')).status, 401);
    const withClientKey = await call(run, 'GET', '/proxy/client/features', {
      headers: withKey(),
    });
    assert.equal(withClientKey.status, 401);
    assert.equal(withClientKey.text, 'Unauthorized');
    const other = await call(run, 'GET', '/proxy/client/features', {
      headers: { authorization: 'server-side-token-2' },
    });
    assert.equal(other.status, 401);
    // Server-side tokens are not client keys.
    assert.equal(
      (await call(run, 'GET', '/proxy', { headers: { authorization: TOKEN } })).status,
      401,
    );

    const answer = await call(run, 'GET', '/proxy/client/features', {
      headers: { authorization: TOKEN },
    });
    assert.equal(answer.status, 200);
    assert.equal(answer.headers['content-type'], 'application/json; charset=utf-8');
    assert.equal(answer.headers['cache-control'], 'private, max-age=2');
    assert.equal(answer.headers.vary, 'Authorization');
    assert.deepEqual(answer.json(), {
      version: payload.version,
      features: payload.features,
      segments: payload.segments,
    });
    const etag = String(answer.headers.etag);
    assert.match(etag, /^"[^"]+"$/, 'a strong validator');
    for (const ifNoneMatch of [etag, `W/${etag}`, `"other", ${etag}`]) {
      const again = await call(run, 'GET', '/proxy/client/features', {
        headers: { authorization: TOKEN, 'if-none-match': ifNoneMatch },
      });
      assert.equal(again.status, 304, ifNoneMatch);
      assert.equal(again.text, '');
    }
    const stale = await call(run, 'GET', '/proxy/client/features', {
      headers: { authorization: TOKEN, 'if-none-match': '"stale"' },
    });
    assert.equal(stale.status, 200);
  });

  it('is the upstream of unleash-client, which evaluates the same as the proxy and reports through it', async () => {
    const unleash = new Unleash({
      url: `${run.base}/proxy`,
      appName: 'checkout-service',
      instanceId: 'pod-1',
      customHeaders: { Authorization: TOKEN },
      refreshInterval: 60_000,
      metricsInterval: 60_000,
      storageProvider: new InMemStorageProvider(),
      skipInstanceCountWarning: true,
    });
    unleash.on('error', () => {});
    try {
      await new Promise<void>((resolve) => unleash.once('synchronized', () => resolve()));
      const names = payload.features.map((feature) => feature.name);
      let compared = 0;
      let enabledSeen = 0;
      let variantsSeen = 0;
      for (const context of realisticContexts(60)) {
        const answer = await call(run, 'POST', '/proxy', {
          headers: withKey({ 'content-type': 'application/json' }),
          body: JSON.stringify({
            context: { ...context, appName: 'checkout-service' },
            toggles: names,
          }),
        });
        for (const toggle of answer.json().toggles) {
          const sdkContext = { ...context, appName: 'checkout-service' };
          const enabled = unleash.isEnabled(toggle.name, sdkContext);
          const variant = unleash.getVariant(toggle.name, sdkContext);
          assert.equal(enabled, toggle.enabled, `${toggle.name} for ${context.userId}`);
          assert.equal(
            variant.name,
            toggle.variant.name,
            `${toggle.name} variant for ${context.userId}`,
          );
          assert.equal(variant.enabled, toggle.variant.enabled);
          assert.deepEqual(variant.payload, toggle.variant.payload);
          compared++;
          if (enabled) enabledSeen++;
          if (variant.enabled) variantsSeen++;
        }
      }
      assert.equal(compared, 60 * names.length);
      assert.ok(enabledSeen > 0 && enabledSeen < compared, 'answers vary');
      assert.ok(variantsSeen > 0, 'variants are compared');

      // Its registration reaches the upstream under its own name, through the proxy.
      await waitFor(() =>
        run.upstream.registrations().some((body) => body.appName === 'checkout-service'),
      );
      assert.equal(
        run.upstream.registrations().find((body) => body.appName === 'checkout-service').instanceId,
        'pod-1',
      );
      // So do its usage metrics, once it flushes and the proxy reports.
      await unleash.destroyWithFlush();
      await run.proxy.reporter.flush();
      const report = run.upstream
        .acceptedMetrics()
        .find((body) => body.appName === 'checkout-service');
      assert.ok(report, 'the SDK metrics were forwarded under its appName');
      const first = names[0] as string;
      const counted = report.bucket.toggles[first];
      assert.ok(counted.yes + counted.no >= 60, 'every isEnabled call of the SDK is in the report');
    } finally {
      unleash.destroy();
    }
  });
});
