import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { deltaEventSchema, deltaEventsSchema } from '@flags/schemas';
import { Ajv } from 'ajv';

const require = createRequire(import.meta.url);
const specDir = join(
  dirname(require.resolve('@unleash/client-specification/package.json')),
  'specifications',
);
const ajv = new Ajv({ strict: false });
const validateEvents = ajv.compile(deltaEventsSchema);
const validateEvent = ajv.compile(deltaEventSchema);

describe('deltaEventsSchema', () => {
  const files = readdirSync(specDir).filter((f) => /^\d\d-.*\.json$/.test(f));
  const deltaFiles = files.filter(
    (file) => JSON.parse(readFileSync(join(specDir, file), 'utf8')).state?.events,
  );

  it('finds the delta files of the client specification', () => {
    assert.ok(deltaFiles.length >= 2, deltaFiles.join());
  });

  for (const file of deltaFiles) {
    it(`accepts the events of ${file}`, () => {
      const spec = JSON.parse(readFileSync(join(specDir, file), 'utf8'));
      assert.equal(validateEvents(spec.state), true, JSON.stringify(validateEvents.errors));
    });
  }

  it('rejects events of a known type with the wrong shape', () => {
    for (const event of [
      { type: 'hydration' },
      { type: 'hydration', features: [{ name: 5, enabled: true }] },
      { type: 'feature-updated', feature: { name: 'a' } },
      { type: 'feature-removed' },
      { type: 'segment-updated', segment: { id: 'one', constraints: [] } },
      { type: 'segment-removed', segmentId: '1' },
      { type: 'feature-removed', featureName: 'a', eventId: 'seven' },
    ])
      assert.equal(validateEvent(event), false, JSON.stringify(event));
  });

  it('rejects a message without an events list', () => {
    assert.equal(validateEvents({}), false);
    assert.equal(validateEvents({ events: {} }), false);
  });
});
