import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  bulkMetricsSchema,
  clientMetricsSchema,
  clientRegisterSchema,
  impactMetricSchema,
  instantMs,
  MAX_INSTANT_MS,
  MAX_NAME_LENGTH,
  MAX_REGISTERED_STRATEGIES,
  MAX_REPORT_FLAGS,
  MAX_REPORT_VARIANTS,
  MAX_TEXT_LENGTH,
  usageReportSchema,
} from '@flags/schemas';
import { Ajv } from 'ajv';

const ajv = new Ajv({ strict: false, allowUnionTypes: true, formats: { 'date-time': true } });

describe('usage report schema', () => {
  const bucket = {
    start: '2026-11-22T00:00:00.000Z',
    stop: '2026-11-22T00:01:00.000Z',
    toggles: { a: { yes: 1, no: 2, variants: { blue: 1 } } },
  };

  it('is a client metrics body that must carry its bucket', () => {
    const report = ajv.compile(usageReportSchema);
    const metrics = ajv.compile(clientMetricsSchema);
    assert.equal(report({ appName: 'web', bucket }), true, JSON.stringify(report.errors));
    assert.equal(report({ appName: 'web' }), false);
    assert.equal(report({ appName: 'web', bucket: null }), false);
    assert.equal(metrics({ appName: 'web' }), true);
    assert.equal(
      report({ appName: 'web', bucket: { ...bucket, toggles: { a: { yes: -1, no: 0 } } } }),
      false,
    );
  });
});

describe('impact metric schema', () => {
  const valid = ajv.compile(impactMetricSchema);
  const labels = { appName: 'web', featureName: 'checkout' };

  it('takes counters, gauges and histograms as the SDKs collect them', () => {
    for (const metric of [
      { name: 'clicks', help: 'Clicks', type: 'counter', samples: [{ labels, value: 3 }] },
      { name: 'cart', help: '', type: 'gauge', samples: [{ value: 1.5 }] },
      {
        name: 'latency',
        help: 'Seconds',
        type: 'histogram',
        samples: [
          {
            labels,
            count: 2,
            sum: 0.3,
            buckets: [
              { le: 0.1, count: 1 },
              { le: '+Inf', count: 2 },
            ],
          },
        ],
      },
      { name: 'empty', type: 'counter', samples: [] },
    ])
      assert.equal(valid(metric), true, JSON.stringify(valid.errors));
  });

  it('refuses samples of another kind than the metric, and unknown kinds', () => {
    for (const metric of [
      { name: 'latency', type: 'histogram', samples: [{ value: 1 }] },
      { name: 'clicks', type: 'counter', samples: [{ count: 1, sum: 1, buckets: [] }] },
      { name: 'x', type: 'summary', samples: [] },
      { name: '', type: 'counter', samples: [] },
      { name: 'x', type: 'counter', samples: [{ labels: { a: 1 }, value: 1 }] },
      {
        name: 'x',
        type: 'histogram',
        samples: [{ count: 1, sum: 1, buckets: [{ le: 'inf', count: 1 }] }],
      },
    ])
      assert.equal(valid(metric), false, JSON.stringify(metric));
  });
});

describe('bulk metrics schema', () => {
  const valid = ajv.compile(bulkMetricsSchema);
  const body = {
    applications: [
      {
        appName: 'checkout',
        instanceId: 'pod-1',
        environment: 'production',
        connectVia: [{ appName: 'unleash-edge', instanceId: 'edge-1' }],
        sdkType: 'backend',
        started: '2026-11-22T00:00:00.000Z',
        interval: 15000,
        strategies: ['default'],
      },
    ],
    metrics: [
      {
        featureName: 'a',
        appName: 'checkout',
        environment: 'production',
        timestamp: '2026-11-22T00:00:00.000Z',
        yes: 1,
        no: 2,
        variants: { blue: 1 },
      },
    ],
    impactMetrics: [{ name: 'clicks', help: '', type: 'counter', samples: [{ value: 1 }] }],
  };

  it('takes Edge’s batched body', () => {
    assert.equal(valid(body), true, JSON.stringify(valid.errors));
    assert.equal(valid({ applications: [], metrics: [] }), true);
  });

  it('refuses entries unleash-server would refuse', () => {
    assert.equal(valid({ metrics: [] }), false);
    // Edge leaves most registration fields null; only the application is required.
    assert.equal(valid({ ...body, applications: [{ instanceId: 'y' }] }), false);
    assert.equal(valid({ ...body, applications: [{ appName: 'x', environment: null }] }), true);
    assert.equal(valid({ ...body, metrics: [{ featureName: 'a', appName: 'b' }] }), false);
    assert.equal(
      valid({ ...body, metrics: [{ ...body.metrics[0], yes: -1 }] }),
      false,
      'counts are never negative',
    );
  });
});

/**
 * Issue 40: every string of a report or registration is bounded, names carry nothing PostgreSQL
 * refuses to store (NUL, lone surrogates), instants lie in 1970..9999, and a flag's counts name at
 * most `MAX_REPORT_VARIANTS` variants, so the proxy refuses what its upstream would refuse.
 */
describe('report bounds', () => {
  const report = ajv.compile(usageReportSchema);
  const bulk = ajv.compile(bulkMetricsSchema);
  const register = ajv.compile(clientRegisterSchema);
  const bucket = {
    start: '2026-11-22T00:00:00.000Z',
    stop: '2026-11-22T00:01:00.000Z',
    toggles: { a: { yes: 1, no: 0, variants: { blue: 1 } } },
  };
  const variants = (count: number) =>
    Object.fromEntries(Array.from({ length: count }, (_, i) => [`v${i}`, 1]));
  const withToggles = (toggles: Record<string, unknown>) => ({
    appName: 'web',
    bucket: { ...bucket, toggles },
  });
  const metric = {
    featureName: 'a',
    appName: 'checkout',
    environment: 'production',
    timestamp: '2026-11-22T00:00:00.000Z',
    yes: 1,
    no: 0,
  };

  it(`takes ${MAX_REPORT_VARIANTS} variant names on a flag, and refuses one more`, () => {
    const at = withToggles({ a: { yes: 1, no: 0, variants: variants(MAX_REPORT_VARIANTS) } });
    assert.equal(report(at), true, JSON.stringify(report.errors));
    const over = withToggles({ a: { yes: 1, no: 0, variants: variants(MAX_REPORT_VARIANTS + 1) } });
    assert.equal(report(over), false);
    assert.equal(
      bulk({ applications: [], metrics: [{ ...metric, variants: variants(101) }] }),
      false,
    );
  });

  it(`refuses more than ${MAX_REPORT_FLAGS} flag names, and names over ${MAX_NAME_LENGTH} characters`, () => {
    const flags = Object.fromEntries(
      Array.from({ length: MAX_REPORT_FLAGS + 1 }, (_, i) => [`f${i}`, { yes: 1, no: 0 }]),
    );
    assert.equal(report(withToggles(flags)), false);
    const long = 'x'.repeat(MAX_NAME_LENGTH + 1);
    assert.equal(report(withToggles({ [long]: { yes: 1, no: 0 } })), false);
    assert.equal(report(withToggles({ a: { yes: 1, no: 0, variants: { [long]: 1 } } })), false);
    assert.equal(report({ appName: long, bucket }), false);
    assert.equal(report(withToggles({ ['x'.repeat(MAX_NAME_LENGTH)]: { yes: 1, no: 0 } })), true);
  });

  it('refuses NUL, control characters and lone surrogates in names, and NUL in any text', () => {
    for (const name of ['we\u0000b', 'web\n', '\u007f', 'x\ud800', '\udc00x'])
      assert.equal(report({ appName: name, bucket }), false, JSON.stringify(name));
    // A surrogate pair is one character, and welcome.
    assert.equal(
      report({ appName: 'web 🚀 ünïcödé', bucket }),
      true,
      JSON.stringify(report.errors),
    );
    assert.equal(report(withToggles({ 'a\u0000': { yes: 1, no: 0 } })), false);
    assert.equal(report(withToggles({ a: { yes: 1, no: 0, variants: { 'b\u0000': 1 } } })), false);
    assert.equal(report({ appName: 'web', platformName: 'node\u0000', bucket }), false);
    assert.equal(bulk({ applications: [], metrics: [{ ...metric, appName: 'c\u0000' }] }), false);
    assert.equal(
      bulk({ applications: [{ appName: 'c', instanceId: 'p\u0000' }], metrics: [] }),
      false,
    );
    assert.equal(register({ appName: 'web', strategies: ['default\u0000'] }), false);
  });

  it('bounds every string of a registration', () => {
    const long = 'x'.repeat(MAX_TEXT_LENGTH + 1);
    for (const field of [
      'platformName',
      'platformVersion',
      'yggdrasilVersion',
      'specVersion',
      'sdkVersion',
      'instanceId',
      'connectionId',
    ])
      assert.equal(register({ appName: 'web', [field]: long }), false, field);
    assert.equal(register({ appName: 'web', strategies: [long] }), false);
    assert.equal(
      register({
        appName: 'web',
        strategies: Array.from({ length: MAX_REGISTERED_STRATEGIES + 1 }, (_, i) => `s${i}`),
      }),
      false,
    );
    assert.equal(
      bulk({ applications: [{ appName: 'c', platformName: long }], metrics: [] }),
      false,
    );
    assert.equal(bulk({ applications: [{ appName: 'c', projects: [long] }], metrics: [] }), false);
  });

  it('refuses instants PostgreSQL cannot hold or that are no measurement', () => {
    // Epoch numbers by the schema; strings (their format passes) by `instantMs`, which both
    // services check before they store or forward an instant.
    for (const instant of [-1, MAX_INSTANT_MS, 1e300])
      assert.equal(
        report({ appName: 'web', bucket: { ...bucket, stop: instant } }),
        false,
        String(instant),
      );
    assert.equal(bulk({ applications: [], metrics: [{ ...metric, timestamp: -5 }] }), false);
    assert.equal(register({ appName: 'web', started: 1e17 }), false);
    for (const instant of [
      '0000-01-01T00:00:00.000Z',
      '1969-12-31T23:59:59.000Z',
      '+010000-01-01T00:00:00.000Z',
      'not a date',
    ])
      assert.equal(instantMs(instant), Number.NaN, instant);
    assert.equal(report({ appName: 'web', bucket: { ...bucket, stop: 1_790_000_000_000 } }), true);
    assert.equal(
      instantMs('1970-01-01T00:30:00+01:00'),
      Number.NaN,
      'an offset moves it before 1970',
    );
    assert.equal(
      instantMs('9999-12-31T23:30:00-01:00'),
      Number.NaN,
      'an offset moves it past 9999',
    );
    assert.equal(instantMs('2026-11-22T00:00:00.000Z'), Date.UTC(2026, 10, 22));
  });
});
