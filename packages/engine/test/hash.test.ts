// The engine's MurmurHash3 must give the Node SDK's answers, non-ASCII identifiers included:
// every vector is checked against `murmurhash3js`, the library unleash-client hashes with.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';
import { murmur3 } from '../src/index.js';

const require = createRequire(import.meta.url);
// Resolved from unleash-client, so the test uses exactly the copy the SDK uses.
const fromSdk = createRequire(require.resolve('unleash-client'));
const reference = fromSdk('murmurhash3js') as {
  x86: { hash32(key: string, seed?: number): number };
};

const VECTORS = [
  '',
  'a',
  'ab',
  'abc',
  'abcd',
  'abcde',
  'Feature.flexibleRollout.10:174',
  'groupId:user-123456789',
  'ünïcödé',
  'straße:ß',
  'Ελληνικά',
  'кириллица:пользователь',
  '日本語のユーザー',
  '😀',
  'user:👩‍👩‍👧‍👦',
  'mixed ascii + é + 😀 + 中',
];

describe('murmur3 (x86, 32-bit)', () => {
  for (const key of VECTORS) {
    for (const seed of [0, 86028157]) {
      it(`${JSON.stringify(key)} seed ${seed} matches murmurhash3js`, () => {
        assert.equal(murmur3(key, seed), reference.x86.hash32(key, seed));
      });
    }
  }

  it('hashes the low byte of each UTF-16 code unit, like the Node SDK', () => {
    // 'é' is U+00E9 and 'ǩ' U+01E9: both low bytes are 0xE9 → the same hash, by design.
    assert.equal(murmur3('é'), murmur3('\u01e9'));
    // UTF-8 hashing would differ from Latin-1 hashing of the same text; the engine does not.
    assert.notEqual(murmur3('é'), murmur3('\u00c3\u00a9'));
  });

  it('returns unsigned 32-bit integers', () => {
    for (const key of VECTORS) {
      const hash = murmur3(key, 86028157);
      assert.ok(Number.isInteger(hash) && hash >= 0 && hash <= 0xffffffff);
    }
  });
});
