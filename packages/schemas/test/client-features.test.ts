import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { clientFeaturesSchema } from '@flags/schemas';
import { Ajv } from 'ajv';

const require = createRequire(import.meta.url);
const specDir = join(
  dirname(require.resolve('@unleash/client-specification/package.json')),
  'specifications',
);
const validate = new Ajv({ strict: false }).compile(clientFeaturesSchema);

describe('clientFeaturesSchema', () => {
  const files = readdirSync(specDir).filter((f) => /^\d\d-.*\.json$/.test(f));
  for (const file of files) {
    const spec = JSON.parse(readFileSync(join(specDir, file), 'utf8'));
    if (!spec.state?.features) continue; // delta files carry events, not a payload
    it(`accepts the payload of ${file}`, () => {
      assert.equal(validate(spec.state), true, JSON.stringify(validate.errors));
    });
  }

  it('rejects a payload without features', () => {
    assert.equal(validate({ version: 2 }), false);
  });

  it('rejects a feature whose enabled is not a boolean', () => {
    assert.equal(validate({ version: 2, features: [{ name: 'a', enabled: 'yes' }] }), false);
  });

  it('rejects a constraint without an operator', () => {
    const feature = {
      name: 'a',
      enabled: true,
      strategies: [{ name: 'default', constraints: [{ contextName: 'userId' }] }],
    };
    assert.equal(validate({ version: 2, features: [feature] }), false);
  });
});
