import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { generateFlagSet } from './differential.js';
import { importParts, UNLEASH_IMPORT_BODY_BYTES } from './import-parts.js';

const body = (data: unknown) =>
  Buffer.byteLength(JSON.stringify({ project: 'default', environment: 'development', data }));

describe('importParts (documents over unleash-server import body limit)', () => {
  const document = generateFlagSet(7, 1200).documents.development;

  it('answers a document that fits as it is', () => {
    const small = generateFlagSet(7, 50).documents.development;
    assert.deepEqual(importParts(small), [small]);
  });

  it('splits a larger one into bodies that fit, every flag once with all its entries, in order', () => {
    assert.ok(body(document) > UNLEASH_IMPORT_BODY_BYTES);
    const parts = importParts(document);
    assert.ok(parts.length >= 2);
    for (const part of parts) {
      assert.ok(body(part) <= UNLEASH_IMPORT_BODY_BYTES, `${body(part)} bytes`);
      const names = new Set(part.features.map((feature) => feature.name));
      for (const strategy of part.featureStrategies) {
        assert.ok(names.has(strategy.featureName as string));
      }
      for (const entry of part.featureEnvironments ?? [])
        assert.ok(names.has(entry.name as string));
      for (const tag of part.featureTags ?? []) assert.ok(names.has(tag.featureName));
      for (const entry of part.dependencies ?? []) assert.ok(names.has(entry.feature));
      assert.deepEqual(part.segments, document.segments);
      assert.deepEqual(part.contextFields, document.contextFields);
      assert.deepEqual(part.tagTypes, document.tagTypes);
    }
    const joined = (pick: (part: typeof document) => readonly unknown[] | undefined) =>
      parts.flatMap((part) => pick(part) ?? []);
    assert.deepEqual(
      joined((part) => part.features),
      document.features,
    );
    assert.deepEqual(
      joined((part) => part.featureStrategies),
      document.featureStrategies,
    );
    assert.deepEqual(
      joined((part) => part.featureEnvironments),
      document.featureEnvironments,
    );
    assert.deepEqual(
      joined((part) => part.featureTags),
      document.featureTags,
    );
    assert.deepEqual(
      joined((part) => part.dependencies),
      document.dependencies,
    );
  });

  it('fills each part: one flag more would not have fitted', () => {
    const parts = importParts(document);
    for (const [index, part] of parts.slice(0, -1).entries()) {
      const next = parts[index + 1]!;
      const name = next.features[0]!.name;
      const grown = {
        ...part,
        features: [...part.features, next.features[0]!],
        featureStrategies: [
          ...part.featureStrategies,
          ...next.featureStrategies.filter((strategy) => strategy.featureName === name),
        ],
        featureEnvironments: [
          ...(part.featureEnvironments ?? []),
          ...(next.featureEnvironments ?? []).filter((entry) => entry.name === name),
        ],
        featureTags: [
          ...(part.featureTags ?? []),
          ...(next.featureTags ?? []).filter((tag) => tag.featureName === name),
        ],
        dependencies: [
          ...(part.dependencies ?? []),
          ...(next.dependencies ?? []).filter((entry) => entry.feature === name),
        ],
      };
      assert.ok(body(grown) > UNLEASH_IMPORT_BODY_BYTES - 200, `part ${index}: ${body(grown)}`);
    }
  });

  it('refuses a flag that could never fit', () => {
    assert.throws(() => importParts(document, 2_000), /alone is over 2000 bytes/);
  });
});
