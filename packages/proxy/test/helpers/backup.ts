import assert from 'node:assert/strict';
import type { ProxyOptions } from '@flags/proxy';
import type { ClientFeatures } from '@flags/schemas';
import { smallPayload } from '../fixtures/small.js';
import { FakeUpstream } from './fake-upstream.js';
import { type Answer, call, startProxy, waitFor, withKey } from './proxy.js';

export const names = (answer: Answer): string[] =>
  answer.json().toggles.map((toggle: { name: string }) => toggle.name);

export async function deadUpstreamUrl(): Promise<string> {
  const upstream = await new FakeUpstream(smallPayload).start();
  await upstream.stop();
  return upstream.url;
}

export const changed: ClientFeatures = {
  version: 2,
  features: [{ name: 'only-upstream', enabled: true, strategies: [{ name: 'default' }] }],
};

/**
 * Acceptance 4: a proxy saves every new upstream payload; restarted while the upstream is down it
 * becomes ready from the saved one; once the upstream answers, the upstream wins.
 */
export async function restartWithUpstreamDown(
  options: ProxyOptions,
  saved: () => Promise<boolean>,
): Promise<void> {
  assert.equal(await saved(), false);
  const first = await startProxy(smallPayload, options);
  try {
    await first.proxy.poller.ready;
    // Saving is asynchronous to the sync.
    await waitFor(saved);
  } finally {
    await first.close();
  }
  const second = await startProxy(smallPayload, { ...options, flagsUrl: await deadUpstreamUrl() });
  try {
    await second.proxy.poller.ready;
    assert.equal((await call(second, 'GET', '/proxy/health')).status, 200);
    const answer = await call(second, 'GET', '/proxy', { headers: withKey() });
    assert.deepEqual(names(answer), ['simple-on', 'with-variants', 'json-variant']);
    assert.ok(second.log.text().includes('serving the backup payload'));
  } finally {
    await second.close();
  }
  // With a live upstream (and the backup still there), the upstream payload wins.
  const third = await startProxy(changed, options);
  try {
    await waitFor(() => third.upstream.featureRequests().length > 0);
    // Until then every request is 503 Not Ready, which is no list of toggles.
    await third.proxy.poller.ready;
    await waitFor(
      async () =>
        names(await call(third, 'GET', '/proxy', { headers: withKey() })).join() ===
        'only-upstream',
    );
  } finally {
    await third.close();
  }
}
