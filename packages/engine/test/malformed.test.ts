// Odd upstream data never throws at evaluation: it is reported once, at compile time, and the
// affected constraint (or strategy, or flag) does not match.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ClientFeatures } from '@flags/schemas';
import { type Context, compile, type EngineWarning } from '../src/index.js';

type Row = {
  readonly case: string;
  readonly strategies?: unknown;
  readonly feature?: Record<string, unknown>;
  readonly context: Context;
  readonly enabled: boolean;
  readonly reason: string;
  readonly warning: RegExp;
};

const constraint = (fields: Record<string, unknown>) => [
  { name: 'default', constraints: [fields] },
];

const ROWS: readonly Row[] = [
  {
    case: 'unknown operator',
    strategies: constraint({ contextName: 'userId', operator: 'STR_SOUNDS_LIKE', values: ['a'] }),
    context: { userId: 'a' },
    enabled: false,
    reason: 'DISABLED',
    warning: /unknown constraint operator "STR_SOUNDS_LIKE"/,
  },
  {
    case: 'unknown operator, inverted: still never matches',
    strategies: constraint({ contextName: 'userId', operator: 'NOPE', value: 'a', inverted: true }),
    context: { userId: 'b' },
    enabled: false,
    reason: 'DISABLED',
    warning: /unknown constraint operator "NOPE"/,
  },
  {
    case: 'malformed number',
    strategies: constraint({ contextName: 'age', operator: 'NUM_GT', value: 'eighteen' }),
    context: { properties: { age: '30' } },
    enabled: false,
    reason: 'DISABLED',
    warning: /"eighteen" is not a number/,
  },
  {
    case: 'malformed date',
    strategies: constraint({
      contextName: 'currentTime',
      operator: 'DATE_AFTER',
      value: '31/12/2020',
    }),
    context: {},
    enabled: false,
    reason: 'DISABLED',
    warning: /"31\/12\/2020" is not a date/,
  },
  {
    case: 'malformed semver',
    strategies: constraint({ contextName: 'version', operator: 'SEMVER_GT', value: '1.2' }),
    context: { properties: { version: '1.3.0' } },
    enabled: false,
    reason: 'DISABLED',
    warning: /"1.2" is not a semantic version/,
  },
  {
    case: 'malformed regex',
    strategies: constraint({ contextName: 'userId', operator: 'REGEX', value: '([a-z' }),
    context: { userId: 'abc' },
    enabled: false,
    reason: 'DISABLED',
    warning: /REGEX constraint on "userId"/,
  },
  {
    case: 'regex with a back-reference (not RE2)',
    strategies: constraint({ contextName: 'userId', operator: 'REGEX', value: '^(a)\\1$' }),
    context: { userId: 'aa' },
    enabled: false,
    reason: 'DISABLED',
    warning: /REGEX constraint on "userId": error parsing regexp: invalid escape sequence/,
  },
  {
    case: 'malformed CIDR (the valid range still works)',
    strategies: constraint({
      contextName: 'remoteAddress',
      operator: 'IN_CIDR',
      values: ['10.0.0.0/33', '192.168.0.0/16'],
    }),
    context: { remoteAddress: '192.168.4.2' },
    enabled: true,
    reason: 'TARGETING_MATCH',
    warning: /"10.0.0.0\/33" is not an address or range/,
  },
  {
    case: 'constraint without contextName',
    strategies: constraint({ operator: 'IN', values: ['a'] }),
    context: { userId: 'a' },
    enabled: false,
    reason: 'DISABLED',
    warning: /lacks "contextName"/,
  },
  {
    case: 'number constraint without a value',
    strategies: constraint({ contextName: 'age', operator: 'NUM_EQ' }),
    context: { properties: { age: '1' } },
    enabled: false,
    reason: 'DISABLED',
    warning: /has no value/,
  },
  {
    case: 'values that are not a list',
    strategies: constraint({ contextName: 'userId', operator: 'IN', values: 'a,b' }),
    context: { userId: 'a' },
    enabled: false,
    reason: 'DISABLED',
    warning: /"values" is "a,b", not a list/,
  },
  {
    case: 'constraints that are not a list',
    strategies: [{ name: 'default', constraints: { contextName: 'userId' } }],
    context: { userId: 'a' },
    enabled: false,
    reason: 'DISABLED',
    warning: /"constraints" is an object, not a list/,
  },
  {
    case: 'unknown segment id',
    strategies: [{ name: 'default', segments: [404] }],
    context: {},
    enabled: false,
    reason: 'DISABLED',
    warning: /unknown segment 404/,
  },
  {
    case: 'unknown strategy',
    strategies: [{ name: 'fancyNewStrategy' }],
    context: {},
    enabled: false,
    reason: 'DISABLED',
    warning: /unknown strategy "fancyNewStrategy"/,
  },
  {
    case: 'strategy that is not an object (the next one applies)',
    strategies: [42, { name: 'default' }],
    context: {},
    enabled: true,
    reason: 'STATIC',
    warning: /strategy is 42/,
  },
  {
    case: 'rollout percentage that is not a number',
    strategies: [
      { name: 'flexibleRollout', parameters: { rollout: 'all', stickiness: 'default' } },
    ],
    context: { userId: '1' },
    enabled: false,
    reason: 'DISABLED',
    warning: /"rollout" is not a number/,
  },
  {
    case: 'strategies that are not a list',
    strategies: { name: 'default' },
    context: {},
    enabled: false,
    reason: 'ERROR',
    warning: /"strategies" is an object, not a list/,
  },
  {
    case: 'missing strategies',
    feature: { name: 'f', enabled: true },
    context: {},
    enabled: false,
    reason: 'ERROR',
    warning: /"strategies" is undefined/,
  },
  {
    case: 'variants that are not a list (the flag stays on)',
    feature: { name: 'f', enabled: true, strategies: [{ name: 'default' }], variants: 'blue' },
    context: {},
    enabled: true,
    reason: 'STATIC',
    warning: /"variants" is "blue", not a list/,
  },
  {
    case: 'dependency on a missing flag',
    feature: {
      name: 'f',
      enabled: true,
      strategies: [{ name: 'default' }],
      dependencies: [{ feature: 'ghost' }],
    },
    context: {},
    enabled: false,
    reason: 'DISABLED',
    warning: /depends on missing flag "ghost"/,
  },
];

describe('malformed data', () => {
  for (const row of ROWS) {
    it(`${row.case}: reported once at compile, never throws`, () => {
      const warnings: EngineWarning[] = [];
      const feature = row.feature ?? { name: 'f', enabled: true, strategies: row.strategies };
      const snapshot = compile({ version: 2, features: [feature] } as unknown as ClientFeatures, {
        onWarning: (warning) => warnings.push(warning),
      });
      assert.equal(warnings.length, 1, JSON.stringify(warnings));
      assert.equal(warnings[0]!.flag, 'f');
      assert.match(warnings[0]!.message, row.warning);
      for (let i = 0; i < 3; i++) {
        const result = snapshot.evaluate('f', row.context);
        assert.equal(result?.enabled, row.enabled);
        assert.equal(result?.reason, row.reason);
      }
      snapshot.evaluateAll({ properties: { odd: undefined } });
      assert.equal(warnings.length, 1);
    });
  }

  it('a feature without a name is skipped; the rest of the payload is used', () => {
    const warnings: EngineWarning[] = [];
    const snapshot = compile(
      {
        version: 2,
        features: [{ enabled: true }, { name: 'ok', enabled: true, strategies: [] }],
      } as unknown as ClientFeatures,
      { onWarning: (warning) => warnings.push(warning) },
    );
    assert.deepEqual(snapshot.names, ['ok']);
    assert.equal(warnings.length, 1);
  });

  it('a payload that is not an object compiles to an empty snapshot', () => {
    const warnings: EngineWarning[] = [];
    const snapshot = compile(null as unknown as ClientFeatures, {
      onWarning: (warning) => warnings.push(warning),
    });
    assert.deepEqual(snapshot.names, []);
    assert.deepEqual(snapshot.evaluateAll({}), []);
    assert.equal(warnings.length, 1);
  });

  it('odd contexts (null, numbers in properties) never throw', () => {
    const snapshot = compile({
      version: 2,
      features: [
        {
          name: 'n',
          enabled: true,
          strategies: [
            {
              name: 'default',
              constraints: [{ contextName: 'age', operator: 'NUM_GT', value: '3' }],
            },
          ],
        },
      ],
    });
    const numeric = { properties: { age: 4 } } as unknown as Context;
    assert.equal(snapshot.evaluate('n', numeric)?.enabled, true);
    assert.equal(snapshot.evaluate('n', null as unknown as Context)?.reason, 'ERROR');
    assert.equal(snapshot.evaluateAll(undefined as unknown as Context)[0]?.reason, 'ERROR');
  });
});
