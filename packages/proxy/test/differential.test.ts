import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { realisticContexts, realisticPayload } from './fixtures/realistic.js';
import { CLIENT_KEY, call, type Running, startProxy, waitFor } from './helpers/proxy.js';

const require = createRequire(import.meta.url);

interface Toggle {
  name: string;
  enabled: boolean;
  variant: Record<string, unknown>;
}

/**
 * Differential test (acceptance 4): the same upstream payload and 500 deterministic contexts,
 * evaluated by flags-proxy and by the reference @unleash/proxy 1.4.19 running in this process.
 */
describe('POST /proxy equals @unleash/proxy for 500 contexts and 200 flags', () => {
  const payload = realisticPayload(200);
  const contexts = realisticContexts(500);
  const flagNames = payload.features.map((feature) => feature.name);
  let ours: Running;
  let reference: Server;
  let referenceBase: string;

  before(async () => {
    // Results kept per user on (evaluationMemoBytes), so that returning users get them from it.
    ours = await startProxy(payload, {
      refreshInterval: 60_000,
      flagsAppName: 'differential',
      evaluationMemoBytes: 1 << 20,
    });
    await ours.proxy.poller.ready;
    const { createApp } = require('@unleash/proxy') as {
      createApp: (options: Record<string, unknown>) => {
        listen(port: number, host: string, cb: () => void): Server;
      };
    };
    const app = createApp({
      unleashUrl: ours.upstream.url,
      unleashApiToken: 'upstream-token',
      clientKeys: [CLIENT_KEY],
      unleashAppName: 'differential',
      refreshInterval: 60_000,
      metricsInterval: 0,
      logLevel: 'fatal',
      clientMode: 'new',
      storageProvider: { get: async () => undefined, set: async () => {} },
    });
    reference = await new Promise<Server>((resolve) => {
      const server = app.listen(0, '127.0.0.1', () => resolve(server));
    });
    referenceBase = `http://127.0.0.1:${(reference.address() as AddressInfo).port}`;
    await waitFor(
      async () => (await call(referenceBase, 'GET', '/proxy/health')).status === 200,
      10_000,
    );
  });

  after(async () => {
    reference.closeAllConnections();
    await new Promise((resolve) => reference.close(resolve));
    await ours.close();
  });

  /** Ours through `inject`, the reference over HTTP (its base URL). */
  async function evaluate(
    target: Running | string,
    context: unknown,
    toggles?: string[],
  ): Promise<Toggle[]> {
    const answer = await call(target, 'POST', '/proxy', {
      headers: { authorization: CLIENT_KEY, 'content-type': 'application/json' },
      body: JSON.stringify(toggles === undefined ? { context } : { context, toggles }),
    });
    assert.equal(answer.status, 200);
    return answer.json().toggles;
  }

  const shape = (toggle: Toggle) => ({
    name: toggle.name,
    enabled: toggle.enabled,
    variant: toggle.variant,
  });

  it('agrees on enabled and variant of every flag (toggles list) and on the enabled list', async () => {
    let enabledSeen = 0;
    let variantsSeen = 0;
    for (const context of contexts) {
      const [mine, theirs] = await Promise.all([
        evaluate(ours, context, flagNames),
        evaluate(referenceBase, context, flagNames),
      ]);
      assert.deepEqual(mine.map(shape), theirs.map(shape), `context ${JSON.stringify(context)}`);
      enabledSeen += mine.filter((toggle) => toggle.enabled).length;
      variantsSeen += mine.filter((toggle) => toggle.variant.enabled).length;
    }
    // The fixture must exercise both answers, or the comparison proves little.
    assert.ok(enabledSeen > 500 * 20 && enabledSeen < 500 * 180, `enabled answers: ${enabledSeen}`);
    assert.ok(variantsSeen > 500 * 10, `variant answers: ${variantsSeen}`);
    for (const context of contexts.slice(0, 100)) {
      const [mine, theirs] = await Promise.all([
        evaluate(ours, context),
        evaluate(referenceBase, context),
      ]);
      assert.deepEqual(mine.map(shape), theirs.map(shape));
    }
  });

  it('agrees for users back in new sessions with other fields (the evaluation memo answers)', async () => {
    const before = ours.proxy.state.current?.snapshot.memoHits ?? 0;
    for (let session = 0; session < 3; session++) {
      for (const [i, context] of contexts.slice(0, 100).entries()) {
        // Another context's fields under this user: a memo keyed on too little would answer wrong.
        const back = {
          ...contexts[(i + 1) % 100],
          userId: context.userId,
          sessionId: `back-${session}-${i}`,
        };
        const [mine, theirs] = await Promise.all([
          evaluate(ours, back),
          evaluate(referenceBase, back),
        ]);
        assert.deepEqual(mine.map(shape), theirs.map(shape), `context ${JSON.stringify(back)}`);
      }
    }
    const hits = (ours.proxy.state.current?.snapshot.memoHits ?? 0) - before;
    assert.ok(hits >= 90, `${hits} answers took kept results from the memo`);
  });
});
