import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  bulkMetricsSchema,
  clientMetricsSchema,
  impactMetricSchema,
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
