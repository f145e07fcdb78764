import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ClientFeatures } from '@flags/schemas';
import { applyDelta, compile } from '../src/index.js';

const flag = (name: string, enabled = true) => ({
  name,
  enabled,
  strategies: [{ name: 'default' }],
});

describe('applyDelta', () => {
  const base: ClientFeatures = {
    version: 2,
    features: [flag('a'), flag('b'), flag('c')],
    segments: [{ id: 1, constraints: [] }],
    meta: { etag: '"x"' },
  };

  it('updates in place, appends new flags, removes, and leaves the base untouched', () => {
    const snapshotOfBase = structuredClone(base);
    const next = applyDelta(base, [
      { type: 'feature-updated', feature: flag('b', false) },
      { type: 'feature-updated', feature: flag('d') },
      { type: 'feature-removed', featureName: 'a', project: 'default' },
      {
        type: 'segment-updated',
        segment: {
          id: 2,
          constraints: [{ contextName: 'appName', operator: 'IN', values: ['x'] }],
        },
      },
      { type: 'segment-removed', segmentId: 1 },
    ]);
    assert.deepEqual(base, snapshotOfBase);
    assert.deepEqual(
      next.features.map((f) => [f.name, f.enabled]),
      [
        ['b', false],
        ['c', true],
        ['d', true],
      ],
    );
    assert.deepEqual(
      next.segments?.map((s) => s.id),
      [2],
    );
    assert.deepEqual(next.meta, base.meta);
  });

  it('hydration replaces everything; later events apply on top', () => {
    const next = applyDelta(base, [
      { type: 'hydration', features: [flag('x')], segments: [] },
      { type: 'feature-updated', feature: flag('y') },
    ]);
    assert.deepEqual(
      next.features.map((f) => f.name),
      ['x', 'y'],
    );
    assert.deepEqual(next.segments, []);
  });

  it('starts from an empty payload and ignores unknown event types', () => {
    const next = applyDelta(undefined, [
      { type: 'feature-updated', feature: flag('z') },
      { type: 'something-new' } as never,
    ]);
    assert.equal(next.version, 1);
    assert.equal(compile(next).evaluate('z', {})?.enabled, true);
  });
});
