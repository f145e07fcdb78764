import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  contextFieldProperties,
  contextQuerySchema,
  contextSchema,
  ofrepBulkResponseSchema,
  ofrepErrorSchema,
  ofrepRequestSchema,
} from '@flags/schemas';
import { Ajv } from 'ajv';

const ajv = new Ajv({ strict: false, allowUnionTypes: true });

describe('OFREP schemas', () => {
  it('accept the answers the protocol defines and refuse other error codes', () => {
    const bulk = ajv.compile(ofrepBulkResponseSchema);
    assert.equal(
      bulk({
        flags: [
          { key: 'a', value: { limit: 3 }, reason: 'SPLIT', variant: 'v', metadata: { x: 1 } },
          { key: 'b', value: false, reason: 'DISABLED', variant: 'disabled' },
        ],
      }),
      true,
      JSON.stringify(bulk.errors),
    );
    assert.equal(
      bulk({ flags: [{ key: 'a', value: true, reason: 'MAYBE', variant: 'v' }] }),
      false,
    );
    const error = ajv.compile(ofrepErrorSchema);
    assert.equal(error({ key: 'a', errorCode: 'FLAG_NOT_FOUND', errorDetails: 'no' }), true);
    assert.equal(error({ errorCode: 'NOPE' }), false);
  });

  it('document the context with the fields of the evaluation context, plus targetingKey', () => {
    const fields = Object.keys(contextFieldProperties);
    assert.deepEqual(Object.keys(ofrepRequestSchema.properties.context.properties), [
      'targetingKey',
      ...fields,
    ]);
    assert.deepEqual(Object.keys(contextQuerySchema.properties), fields);
    assert.deepEqual(Object.keys(contextSchema.properties), [...fields, 'properties']);
  });
});
