// Operator tables: each row is a constraint, a context value and the expected answer. Semantic
// versions are also checked against the `semver` package the Node SDK uses.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';
import { CONSTRAINT_OPERATORS } from '@flags/schemas';
import { compile } from '../src/index.js';
import { OPERATORS } from '../src/operators/index.js';

const require = createRequire(import.meta.url);
const semver = createRequire(require.resolve('unleash-client'))('semver') as {
  compare(a: string, b: string): number;
};

/** Evaluates one constraint on `field` for one context value. */
function matches(constraint: Record<string, unknown>, value: string | undefined): boolean {
  const snapshot = compile({
    version: 2,
    features: [
      {
        name: 'f',
        enabled: true,
        strategies: [{ name: 'default', constraints: [{ contextName: 'field', ...constraint }] }],
      },
    ],
  } as never);
  return snapshot.evaluate('f', { properties: { field: value } })?.enabled ?? false;
}

type Row = readonly [
  operator: Record<string, unknown>,
  value: string | undefined,
  expected: boolean,
];

const TABLE: Record<string, readonly Row[]> = {
  'IN / NOT_IN': [
    [{ operator: 'IN', values: ['a', ' b '] }, 'b', true],
    [{ operator: 'IN', values: ['a'] }, 'A', false],
    [{ operator: 'IN', values: ['a'], caseInsensitive: true }, 'A', false],
    [{ operator: 'NOT_IN', values: ['a'] }, undefined, true],
    [{ operator: 'NOT_IN', values: ['a'], inverted: true }, 'a', true],
  ],
  'STR_*': [
    [{ operator: 'STR_STARTS_WITH', values: ['Ab'] }, 'abc', false],
    [{ operator: 'STR_STARTS_WITH', values: ['Ab'], caseInsensitive: true }, 'ABC', true],
    [{ operator: 'STR_ENDS_WITH', values: ['x', '.COM'], caseInsensitive: true }, 'a@b.com', true],
    [{ operator: 'STR_CONTAINS', values: ['@'] }, undefined, false],
    [{ operator: 'STR_CONTAINS', values: ['@'], inverted: true }, undefined, true],
  ],
  'NUM_*': [
    [{ operator: 'NUM_EQ', value: '1.50' }, '1.5', true],
    [{ operator: 'NUM_GT', value: '-1' }, '0', true],
    [{ operator: 'NUM_LTE', value: '10' }, '1e1', true],
    [{ operator: 'NUM_LT', value: '10' }, 'ten', false],
    [{ operator: 'NUM_GTE', value: '3' }, undefined, false],
  ],
  REGEX: [
    [{ operator: 'REGEX', value: '^[[:upper:]][[:digit:]]+$' }, 'A12', true],
    [{ operator: 'REGEX', value: '^[[:upper:]][[:digit:]]+$' }, 'a12', false],
    [{ operator: 'REGEX', value: '\\Aabc\\z' }, 'abc', true],
    [{ operator: 'REGEX', value: '\\Aabc\\z' }, 'abc\n', false],
    [{ operator: 'REGEX', value: '^\\Q1+1=2\\E$' }, '1+1=2', true],
    [{ operator: 'REGEX', value: '^(?P<word>\\w+)$' }, 'word', true],
    [{ operator: 'REGEX', value: '(?i:abc)' }, 'xABCx', true],
    [{ operator: 'REGEX', value: 'b' }, 'abc', true],
    [{ operator: 'REGEX', value: '^[]a]+$' }, ']a]', true],
  ],
  IN_CIDR: [
    [{ operator: 'IN_CIDR', values: ['10.0.0.0/8'] }, '10.200.3.4', true],
    [{ operator: 'IN_CIDR', values: ['10.0.0.0/8'] }, '11.0.0.1', false],
    [{ operator: 'IN_CIDR', values: ['10.1.2.3/0'] }, '200.1.1.1', true],
    [{ operator: 'IN_CIDR', values: ['10.0.0.7'] }, '10.0.0.7', true],
    [{ operator: 'IN_CIDR', values: ['10.0.0.0/8'] }, '10.0.0.256', false],
    [{ operator: 'IN_CIDR', values: ['fe80::/10'] }, 'fe80::1:2', true],
    [{ operator: 'IN_CIDR', values: ['fe80::/10'] }, 'fec0::1', false],
    [{ operator: 'IN_CIDR', values: ['::ffff:0:0/96'] }, '::ffff:192.0.2.1', true],
    [
      { operator: 'IN_CIDR', values: ['2001:db8::/32'] },
      '2001:0db8:0000:0000:0000:0000:0000:0001',
      true,
    ],
    [{ operator: 'IN_CIDR', values: ['2001:db8::/32'] }, '10.0.0.1', false],
    [{ operator: 'IN_CIDR', values: ['10.0.0.0/8'] }, '2001:db8::1', false],
  ],
};

describe('operators', () => {
  it('evaluates every operator a flag can be written with (CONSTRAINT_OPERATORS)', () => {
    assert.deepEqual(
      CONSTRAINT_OPERATORS.filter((operator) => !OPERATORS.has(operator)),
      [],
    );
  });

  for (const [family, rows] of Object.entries(TABLE)) {
    describe(family, () => {
      for (const [constraint, value, expected] of rows) {
        it(`${JSON.stringify(constraint)} on ${JSON.stringify(value)} → ${expected}`, () => {
          assert.equal(matches(constraint, value), expected);
        });
      }
    });
  }

  describe('SEMVER_* agrees with the semver package', () => {
    // semver.org §11 ordering, plus build metadata, large numbers and invalid forms.
    const versions = [
      '1.0.0-alpha',
      '1.0.0-alpha.1',
      '1.0.0-alpha.beta',
      '1.0.0-beta',
      '1.0.0-beta.2',
      '1.0.0-beta.11',
      '1.0.0-rc.1',
      '1.0.0',
      '1.0.0+build.5',
      '1.0.1-0',
      '1.0.1-1a',
      '1.0.1',
      '1.10.0',
      '2.0.0-x-y.7',
      '10.0.0',
      '12345678901.0.0',
    ];
    for (const op of ['EQ', 'GT', 'GTE', 'LT', 'LTE'] as const) {
      it(`SEMVER_${op}`, () => {
        for (const target of versions) {
          for (const value of versions) {
            const order = semver.compare(value, target);
            const expected = {
              EQ: order === 0,
              GT: order > 0,
              GTE: order >= 0,
              LT: order < 0,
              LTE: order <= 0,
            }[op];
            const got = matches({ operator: `SEMVER_${op}`, value: target }, value);
            assert.equal(got, expected, `${value} ${op} ${target}`);
          }
        }
      });
    }

    it('rejects invalid context versions', () => {
      for (const bad of ['1.0', '01.0.0', '1.0.0-01', 'v1.0.0', '1.0.0-', '1.0.0+', 'x']) {
        assert.equal(matches({ operator: 'SEMVER_GTE', value: '0.0.0-0' }, bad), false, bad);
      }
    });
  });
});
