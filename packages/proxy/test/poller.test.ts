import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadConfig } from '@flags/proxy';
import { EnvironmentState } from '@flags/serving';
import { createUpstreamClient } from '../src/sync/http-client.js';
import { Poller } from '../src/sync/poller.js';
import { smallPayload } from './fixtures/small.js';
import { FakeUpstream } from './helpers/fake-upstream.js';
import { RecordingLogger } from './helpers/recording-logger.js';

function poller(upstreamUrl: string, random: () => number) {
  const config = loadConfig(
    {},
    { flagsUrl: upstreamUrl, flagsApiToken: 't', clientKeys: ['k'], refreshInterval: 100 },
  );
  const state = new EnvironmentState();
  const client = createUpstreamClient(config);
  return {
    poller: new Poller(config, state, new RecordingLogger(), client, { random }),
    state,
    client,
  };
}

describe('poller delays', () => {
  it('doubles the delay per failure with jitter up to 32 intervals, and resets on success', () => {
    const { poller: low } = poller('http://127.0.0.1:1/api', () => 0);
    assert.deepEqual(
      Array.from({ length: 7 }, () => low.nextDelay('failed')),
      [100, 200, 400, 800, 1600, 1600, 1600],
    );
    assert.equal(low.nextDelay('updated'), 100);
    assert.equal(low.nextDelay('failed'), 100, 'first failure after a success');
    const { poller: high } = poller('http://127.0.0.1:1/api', () => 0.999999);
    assert.deepEqual(
      Array.from({ length: 3 }, () => Math.round(high.nextDelay('failed'))),
      [200, 400, 800],
    );
    assert.ok(high.nextDelay('unauthorized') >= 3200 * 0.99, 'token problems wait the longest');
  });

  it('honours Retry-After on 429 and keeps the snapshot', async () => {
    const upstream = await new FakeUpstream(smallPayload).start();
    const { poller: p, state, client } = poller(upstream.url, () => 0);
    try {
      assert.equal(await p.poll(), 'updated');
      assert.equal(await p.poll(), 'unchanged');
      upstream.mode = 'throttle';
      upstream.retryAfter = '7';
      assert.equal(await p.poll(), 'failed');
      assert.equal(p.nextDelay('failed'), 7000);
      assert.ok(state.ready);
      assert.equal(state.current?.payload.features.length, smallPayload.features.length);
    } finally {
      await client.close();
      await upstream.stop();
    }
  });
});
