import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compile } from '@flags/engine';
import { MAX_METRIC_COUNT, MAX_REPORT_VARIANTS } from '@flags/schemas';
import { CompiledState, EnvironmentState } from '@flags/serving';
import { UsageAggregator } from '../src/usage/aggregator.js';
import { PendingBudget } from '../src/usage/pending-budget.js';
import { smallPayload } from './fixtures/small.js';

const BUCKET = { start: '2026-11-22T00:00:00.000Z', stop: '2026-11-22T00:01:00.000Z' };

function toggles(aggregator: UsageAggregator) {
  return Object.fromEntries(
    aggregator
      .take()
      .map((bucket) => [
        bucket.appName,
        Object.fromEntries(
          [...bucket.toggles].map(([name, t]) => [
            name,
            { yes: t.yes, no: t.no, variants: Object.fromEntries(t.variants) },
          ]),
        ),
      ]),
  );
}

/** A new snapshot of `smallPayload` whose evaluations `aggregator` counts, as `EnvironmentState` makes it. */
function counted(aggregator: UsageAggregator): CompiledState {
  const snapshot = compile(smallPayload);
  return new CompiledState(snapshot, 0, { usage: aggregator.track(snapshot) });
}

describe('usage aggregator', () => {
  it('reports an announced application once, with or without counts, and at most maxApps of them', () => {
    const aggregator = new UsageAggregator({
      appName: 'proxy',
      environment: 'production',
      maxApps: 2,
    });
    aggregator.announce('web', 'development');
    aggregator.announce('web', undefined);
    aggregator.announce('shop', undefined);
    aggregator.announce('third', undefined);
    assert.equal(aggregator.empty, false);
    const taken = aggregator.take();
    assert.deepEqual(
      taken.map((bucket) => [bucket.appName, bucket.environment, bucket.toggles.size]),
      [
        ['web', 'production', 0],
        ['shop', 'production', 0],
      ],
    );
    assert.ok(aggregator.empty, 'announced once, not on every send');
    assert.deepEqual(aggregator.take(), []);
    // A failed send announces it again with the next one.
    aggregator.restore(taken);
    assert.deepEqual(
      aggregator.take().map((bucket) => bucket.appName),
      ['web', 'shop'],
    );
  });

  it('counts evaluations of the current and of a replaced snapshot, then forgets the idle one', () => {
    const aggregator = new UsageAggregator({ appName: 'proxy', environment: undefined });
    const first = counted(aggregator);
    first.evaluate('with-variants', {});
    first.evaluate('unknown-name', {});
    const second = counted(aggregator);
    // A request that still holds the old snapshot keeps counting into it.
    first.evaluate('simple-off', {});
    second.evaluate('simple-on', {});
    assert.deepEqual(toggles(aggregator), {
      proxy: {
        'with-variants': { yes: 1, no: 0, variants: { blue: 1 } },
        'unknown-name': { yes: 0, no: 1, variants: {} },
        'simple-off': { yes: 0, no: 1, variants: {} },
        'simple-on': { yes: 1, no: 0, variants: {} },
      },
    });
    assert.ok(aggregator.empty);
    first.evaluate('simple-on', {});
    assert.equal(aggregator.empty, false);
    assert.deepEqual(toggles(aggregator), {
      proxy: { 'simple-on': { yes: 1, no: 0, variants: {} } },
    });
  });

  it('keeps counting every snapshot still served, however long idle, and collects a swapped-out one a last time', () => {
    const aggregator = new UsageAggregator({ appName: 'proxy', environment: undefined });
    const state = new EnvironmentState({ usage: aggregator });
    state.update(smallPayload);
    const whole = state.serving();
    // A token's project scope: a second live snapshot of the same payload.
    const scoped = state.forProjects(['default']) as CompiledState;
    assert.notEqual(scoped, whole);
    whole.evaluate('simple-on', {});
    scoped.evaluate('simple-off', {});
    assert.deepEqual(toggles(aggregator), {
      proxy: {
        'simple-on': { yes: 1, no: 0, variants: {} },
        'simple-off': { yes: 0, no: 1, variants: {} },
      },
    });
    // A collection that finds both idle must not forget them: they are still served.
    assert.deepEqual(toggles(aggregator), {});
    whole.evaluate('simple-on', {});
    scoped.evaluate('simple-off', {});
    assert.equal(state.forProjects(['default']), scoped);
    assert.deepEqual(toggles(aggregator), {
      proxy: {
        'simple-on': { yes: 1, no: 0, variants: {} },
        'simple-off': { yes: 0, no: 1, variants: {} },
      },
    });
    // Swapped out by a new payload: requests still holding them finish, and are counted once.
    state.update(smallPayload);
    whole.evaluate('simple-on', {});
    scoped.evaluate('simple-off', {});
    state.serving().evaluate('with-variants', {});
    assert.deepEqual(toggles(aggregator), {
      proxy: {
        'simple-on': { yes: 1, no: 0, variants: {} },
        'simple-off': { yes: 0, no: 1, variants: {} },
        'with-variants': { yes: 1, no: 0, variants: { blue: 1 } },
      },
    });
    assert.ok(aggregator.empty);
  });

  it('counts answers sent again in full when collecting, also after their snapshot was replaced', () => {
    const aggregator = new UsageAggregator({ appName: 'proxy', environment: undefined });
    const snapshot = compile(smallPayload);
    const counter = aggregator.track(snapshot);
    const first = new CompiledState(snapshot, 0, { usage: counter });
    // An answer as the answer cache keeps it: every flag's result by position.
    const results = first.evaluateAll({ userId: '123' });
    const expected = (times: number) =>
      Object.fromEntries(
        results.map((result) => [
          result.name,
          {
            yes: result.enabled ? times : 0,
            no: result.enabled ? 0 : times,
            variants:
              result.enabled && result.variant.enabled ? { [result.variant.name]: times } : {},
          },
        ]),
      );
    const evaluatedOnce = toggles(aggregator);
    assert.deepEqual(evaluatedOnce, { proxy: expected(1) });
    assert.ok(Object.values(evaluatedOnce.proxy).some((t) => Object.keys(t.variants).length > 0));
    for (let i = 0; i < 3; i++) counter.countAgain(results);
    counted(aggregator);
    assert.deepEqual(toggles(aggregator), { proxy: expected(3) });
    assert.ok(aggregator.empty, 'folded once');
  });

  it('bounds memory: extra names per bucket and reporting apps are capped, known flags always kept', () => {
    const aggregator = new UsageAggregator({
      appName: 'proxy',
      environment: 'production',
      maxExtraNames: 2,
      maxApps: 2,
    });
    counted(aggregator);
    const names: Record<string, { yes: number; no: number }> = {};
    for (let i = 0; i < 20; i++) names[`unknown-${i}`] = { yes: 1, no: 0 };
    names['simple-on'] = { yes: 3, no: 0 };
    aggregator.addReport({ appName: 'web', bucket: { ...BUCKET, toggles: names } });
    for (const appName of ['mobile', 'tv']) {
      aggregator.addReport({
        appName,
        environment: 'ignored',
        bucket: { ...BUCKET, toggles: { 'simple-on': { yes: 1, no: 0 } } },
      });
    }
    const buckets = aggregator.take();
    assert.deepEqual(
      buckets.map((bucket) => [bucket.appName, bucket.environment]),
      [
        ['web', 'production'],
        ['mobile', 'production'],
        ['proxy', 'production'],
      ],
      'a third app is counted under the proxy; the environment option wins',
    );
    const web = buckets[0]?.toggles;
    // At most (known flags + 2) names, and the known flags always.
    assert.equal(web?.size, smallPayload.features.length + 2 + 1);
    assert.equal(web?.get('simple-on')?.yes, 3);
    assert.equal(buckets[2]?.toggles.get('simple-on')?.yes, 1);
    assert.equal(aggregator.dropped, 20 - smallPayload.features.length - 2);
  });

  it('bounds impact-metric series and downstream registrations per bucket; a kept gauge outlives an older one merged back', () => {
    const aggregator = new UsageAggregator({
      appName: 'proxy',
      environment: 'production',
      maxImpactSeries: 2,
      maxRegistrations: 1,
    });
    const gauge = (value: number) => ({
      name: 'cart',
      type: 'gauge' as const,
      samples: [{ labels: { app: 'web' }, value }],
    });
    aggregator.addReport({
      appName: 'web',
      bucket: { ...BUCKET, toggles: {} },
      impactMetrics: [
        gauge(1),
        {
          name: 'clicks',
          type: 'counter',
          samples: [{ value: 1 }, { labels: { a: 'b' }, value: 1 }],
        },
        { name: 'cart', type: 'counter', samples: [{ value: 5 }] },
      ],
    });
    assert.equal(aggregator.dropped, 2, 'one series over the bound, one sample of another type');
    const [taken] = aggregator.take();
    assert.deepEqual(
      taken?.impact.toWire().map((metric) => [metric.name, metric.samples.length]),
      [
        ['cart', 1],
        ['clicks', 1],
      ],
    );
    aggregator.addReport({
      appName: 'web',
      bucket: { ...BUCKET, toggles: {} },
      impactMetrics: [gauge(9)],
    });
    aggregator.restore(taken ? [taken] : []);
    const [again] = aggregator.take();
    assert.deepEqual(again?.impact.toWire()[0]?.samples, [{ labels: { app: 'web' }, value: 9 }]);

    const application = (instanceId: string, environment = 'production') => ({
      appName: 'svc',
      instanceId,
      environment,
    });
    aggregator.addBulk({
      applications: [application('a'), application('b'), application('c', 'development')],
      metrics: [],
    });
    assert.deepEqual([...(aggregator.take()[0]?.registrations.keys() ?? [])], ['a']);
  });

  it('sends at most the largest count a report may carry and keeps the rest', () => {
    const aggregator = new UsageAggregator({ appName: 'proxy', environment: undefined });
    const big = { yes: MAX_METRIC_COUNT, no: 5, variants: { a: MAX_METRIC_COUNT } };
    aggregator.addReport({ appName: 'web', bucket: { ...BUCKET, toggles: { f: big } } });
    aggregator.addReport({ appName: 'web', bucket: { ...BUCKET, toggles: { f: big } } });
    assert.deepEqual(toggles(aggregator), {
      web: { f: { yes: MAX_METRIC_COUNT, no: 10, variants: { a: MAX_METRIC_COUNT } } },
    });
    assert.deepEqual(toggles(aggregator), {
      web: { f: { yes: MAX_METRIC_COUNT, no: 0, variants: { a: MAX_METRIC_COUNT } } },
    });
    assert.ok(aggregator.empty);
  });
});

/** Issue 40: pending usage has a byte bound, and a flag keeps at most the schema's variant names. */
describe('usage aggregator bounds', () => {
  const variants = (prefix: string, count: number) =>
    Object.fromEntries(Array.from({ length: count }, (_, i) => [`${prefix}${i}`, 1]));

  it(`keeps at most ${MAX_REPORT_VARIANTS} variant names per flag, counting the ones dropped`, () => {
    const budget = new PendingBudget(16 * 1024 * 1024);
    const aggregator = new UsageAggregator({ appName: 'proxy', environment: undefined, budget });
    counted(aggregator);
    // Two reports that pass the schema, with different names: the flag fills up and stays full.
    for (const prefix of ['a', 'b'])
      aggregator.addReport({
        appName: 'web',
        bucket: {
          ...BUCKET,
          toggles: { 'simple-on': { yes: 1, no: 0, variants: variants(prefix, 80) } },
        },
      });
    const web = toggles(aggregator).web as Record<string, { variants: object }>;
    assert.equal(Object.keys(web['simple-on']!.variants).length, MAX_REPORT_VARIANTS);
    assert.equal(budget.dropped.variant, 160 - MAX_REPORT_VARIANTS);
  });

  it('drops new entries once pending usage reaches its bytes, keeps counting kept ones, and frees them once sent', () => {
    const budget = new PendingBudget(64 * 1024);
    const aggregator = new UsageAggregator({ appName: 'proxy', environment: undefined, budget });
    counted(aggregator);
    for (let n = 0; n < 50; n++)
      aggregator.addReport({
        appName: `app-${n % 5}`,
        bucket: {
          ...BUCKET,
          toggles: {
            [`flag-${n}`.padEnd(200, 'x')]: { yes: 1, no: 0, variants: variants(`${n}-`, 50) },
          },
        },
      });
    assert.ok(budget.bytes <= 64 * 1024, `${budget.bytes} bytes pending`);
    assert.ok(budget.dropped.variant + budget.dropped.flag > 0);
    // A flag already kept still counts.
    aggregator.addReport({
      appName: 'app-0',
      bucket: { ...BUCKET, toggles: { [`flag-0`.padEnd(200, 'x')]: { yes: 5, no: 0 } } },
    });
    const taken = aggregator.take();
    const kept = taken
      .find((bucket) => bucket.appName === 'app-0')
      ?.toggles.get('flag-0'.padEnd(200, 'x'));
    assert.equal(kept?.yes, 6);
    assert.ok(budget.bytes > 0, 'a send in flight still counts');
    aggregator.release(taken);
    assert.equal(budget.bytes, 0);
    // A failed send comes back within the bound.
    aggregator.restore(taken);
    assert.ok(budget.bytes > 0 && budget.bytes <= 64 * 1024);
  });
});
