import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { clientMetricsSchema, usageReportSchema } from '@flags/schemas';
import { Ajv } from 'ajv';

const ajv = new Ajv({ strict: false, allowUnionTypes: true });

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
