import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { UsageAggregator } from '../src/usage/aggregator.js';
import { appBatches, bulkBatches, type Sender } from '../src/usage/batches.js';
import {
  addReceived,
  type Expected,
  plain,
  received,
  receivedBulk,
} from './helpers/usage-counts.js';

const BUCKET = { start: '2026-11-22T00:00:00.000Z', stop: '2026-11-22T00:01:00.000Z' };
const SENDER: Sender = {
  appName: 'proxy',
  instanceId: 'proxy-1',
  sdkVersion: 'flags-proxy:0.1.0',
  started: BUCKET.start,
  interval: 60_000,
};
const PLATFORM = { name: 'node', version: '20' };
const STOP = Date.parse(BUCKET.stop);

/** An aggregator holding two applications' counts (many flags each), registrations and impact metrics. */
function filled(): { aggregator: UsageAggregator; expected: Expected } {
  const aggregator = new UsageAggregator({ appName: 'proxy', environment: 'production' });
  const expected: Expected = new Map();
  for (const app of ['web', 'mobile']) {
    const toggles: Record<string, { yes: number; no: number; variants: Record<string, number> }> =
      {};
    for (let i = 0; i < 200; i++) {
      toggles[`flag-${i}`] = { yes: i + 2, no: i, variants: { [`v${i % 2}`]: 1 } };
      addReceived(expected, app, `flag-${i}`, toggles[`flag-${i}`] as never);
    }
    aggregator.addReport({
      appName: app,
      bucket: { ...BUCKET, toggles },
      impactMetrics: [{ name: `${app}_clicks`, type: 'counter', samples: [{ value: 3 }] }],
    });
  }
  aggregator.addBulk({
    applications: [{ appName: 'web', instanceId: 'pod-1', environment: 'production' }],
    metrics: [],
  });
  return { aggregator, expected };
}

describe('usage batches', () => {
  it('cuts bulk bodies under the limit; their buckets put together are what was taken', () => {
    const { aggregator, expected } = filled();
    const batches = bulkBatches(aggregator.take(), 'production', SENDER, STOP, 4096);
    assert.ok(batches.length > 10);
    for (const batch of batches) assert.ok(Buffer.byteLength(batch.body) < 4096);
    const bodies = batches.map((batch) => JSON.parse(batch.body));
    assert.deepEqual(plain(receivedBulk(bodies)), plain(expected));
    const applications = bodies.flatMap((body) => body.applications);
    assert.deepEqual(applications.map((app) => `${app.appName}/${app.instanceId}`).sort(), [
      'mobile/proxy-1',
      'web/pod-1',
      'web/proxy-1',
    ]);
    assert.deepEqual(
      bodies.flatMap((body) => body.impactMetrics ?? []).map((metric) => metric.name),
      ['web_clicks', 'mobile_clicks'],
    );

    // Every batch failed: merged back, the aggregator holds exactly what it held.
    aggregator.restore(batches.flatMap((batch) => batch.buckets));
    const again = bulkBatches(aggregator.take(), 'production', SENDER, STOP);
    assert.equal(again.length, 1);
    const body = JSON.parse(again[0]?.body ?? '{}');
    assert.deepEqual(plain(receivedBulk([body])), plain(expected));
    assert.equal(body.applications.length, 3);
    assert.equal(body.impactMetrics.length, 2);
  });

  it('splits one application over several per-application bodies when it does not fit one', () => {
    const { aggregator, expected } = filled();
    const batches = appBatches(aggregator.take(), SENDER, PLATFORM, STOP, 4096);
    assert.ok(batches.length >= 6, `${batches.length} bodies`);
    for (const batch of batches) assert.ok(Buffer.byteLength(batch.body) < 4096);
    const bodies = batches.map((batch) => JSON.parse(batch.body));
    assert.deepEqual(plain(received(bodies)), plain(expected));
    for (const body of bodies) {
      assert.equal(body.instanceId, 'proxy-1');
      assert.equal(body.environment, 'production');
    }
    assert.deepEqual(
      bodies.flatMap((body) => body.impactMetrics ?? []).map((metric) => metric.name),
      ['web_clicks', 'mobile_clicks'],
    );
  });
});

describe('usage batches within the upstream’s entry limits', () => {
  it('cuts a bulk body at the most metrics and applications one body may carry, not only at its bytes', () => {
    const { aggregator } = filled();
    const limits = { toggles: 50, applications: 1, impact: 1 };
    const batches = bulkBatches(aggregator.take(), 'production', SENDER, STOP, 10_000_000, limits);
    assert.ok(batches.length >= 8, `${batches.length} bodies`);
    for (const batch of batches) {
      const body = JSON.parse(batch.body);
      assert.ok(body.metrics.length <= 50);
      assert.ok(body.applications.length <= 1);
      assert.ok((body.impactMetrics ?? []).length <= 1);
    }
    const metrics = batches.flatMap((batch) => JSON.parse(batch.body).metrics);
    assert.equal(metrics.length, 400);
  });
});
