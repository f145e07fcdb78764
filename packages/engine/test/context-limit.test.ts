// A context value longer than `maxContextValueLength` is never compared: the constraints and
// strategies that would compare it do not match (`inverted` and NOT_IN included), a variant override
// does not apply, and a variant's stickiness falls back as for a missing value. Each row's flag is
// enabled for both values when the limit is out of the way, so each row shows the limit at work.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type Context,
  compile,
  DEFAULT_MAX_CONTEXT_VALUE_LENGTH,
  type Evaluation,
} from '../src/index.js';

const LIMIT = 20;
/** `prefix` padded with `filler` to `length` characters. */
const sized = (prefix: string, length: number, filler = 'x'): string =>
  prefix + filler.repeat(length - prefix.length);
const FITS = sized('user-', LIMIT);
const TOO_LONG = sized('user-', LIMIT + 1);

type Row = {
  readonly case: string;
  /** The flag's strategies, given both values. */
  readonly strategies: (fits: string, tooLong: string) => unknown[];
  readonly context: (value: string) => Context;
  /** Defaults to FITS and TOO_LONG. */
  readonly values?: readonly [fits: string, tooLong: string];
};

const constrained = (constraint: Record<string, unknown>) => [
  { name: 'default', constraints: [constraint] },
];
const property = (value: string): Context => ({ properties: { field: value } });

const FIELDS: readonly [name: string, context: (value: string) => Context][] = [
  ['userId', (value) => ({ userId: value })],
  ['sessionId', (value) => ({ sessionId: value })],
  ['remoteAddress', (value) => ({ remoteAddress: value })],
  ['appName', (value) => ({ appName: value })],
  ['environment', (value) => ({ environment: value })],
  ['userId', (value) => ({ properties: { userId: value } })],
  ['field', property],
];

const ROWS: readonly Row[] = [
  ...FIELDS.map(
    ([name, context]): Row => ({
      case: `IN on ${name} (${JSON.stringify(context('v'))})`,
      strategies: (fits, tooLong) =>
        constrained({ contextName: name, operator: 'IN', values: [fits, tooLong] }),
      context,
    }),
  ),
  {
    case: 'NOT_IN',
    strategies: () => constrained({ contextName: 'field', operator: 'NOT_IN', values: ['other'] }),
    context: property,
  },
  {
    case: 'inverted STR_ENDS_WITH',
    strategies: () =>
      constrained({
        contextName: 'field',
        operator: 'STR_ENDS_WITH',
        values: ['zzz'],
        inverted: true,
      }),
    context: property,
  },
  {
    case: 'STR_CONTAINS, caseInsensitive',
    strategies: () =>
      constrained({
        contextName: 'field',
        operator: 'STR_CONTAINS',
        values: ['USER'],
        caseInsensitive: true,
      }),
    context: property,
  },
  {
    case: 'STR_STARTS_WITH',
    strategies: () =>
      constrained({ contextName: 'field', operator: 'STR_STARTS_WITH', values: ['user-'] }),
    context: property,
  },
  {
    case: 'NUM_GT',
    strategies: () => constrained({ contextName: 'field', operator: 'NUM_GT', value: '0' }),
    context: property,
    values: [sized('1', LIMIT, '0'), sized('1', LIMIT + 1, '0')],
  },
  {
    case: 'SEMVER_LT',
    strategies: () => constrained({ contextName: 'field', operator: 'SEMVER_LT', value: '2.0.0' }),
    context: property,
    values: [sized('1.0.0-', LIMIT, 'a'), sized('1.0.0-', LIMIT + 1, 'a')],
  },
  {
    case: 'REGEX (native)',
    strategies: () => constrained({ contextName: 'field', operator: 'REGEX', value: '^user-x+$' }),
    context: property,
  },
  {
    case: 'REGEX (re2js)',
    strategies: () => constrained({ contextName: 'field', operator: 'REGEX', value: '(x+)+$' }),
    context: property,
  },
  {
    case: 'IN_CIDR',
    strategies: () =>
      constrained({ contextName: 'remoteAddress', operator: 'IN_CIDR', values: ['2001:db8::/32'] }),
    context: (value) => ({ remoteAddress: value }),
    values: ['2001:db8:0:0:0:0:0:1', '2001:0db8:0:0:0:0:0:1'],
  },
  {
    case: 'userWithId',
    strategies: (fits, tooLong) => [
      { name: 'userWithId', parameters: { userIds: `${fits},${tooLong}` } },
    ],
    context: (value) => ({ userId: value }),
  },
  {
    case: 'remoteAddress',
    strategies: (fits, tooLong) => [
      { name: 'remoteAddress', parameters: { IPs: `${fits},${tooLong}` } },
    ],
    context: (value) => ({ remoteAddress: value }),
  },
  {
    case: 'flexibleRollout, custom stickiness',
    strategies: () => [
      { name: 'flexibleRollout', parameters: { rollout: '100', stickiness: 'field' } },
    ],
    context: property,
  },
  {
    case: 'flexibleRollout, default stickiness (userId)',
    // 99 %, so the strategy hashes the id; both ids below are in the 99 %.
    strategies: () => [
      {
        name: 'flexibleRollout',
        parameters: { rollout: '99', stickiness: 'default', groupId: 'g' },
      },
    ],
    context: (value) => ({ userId: value }),
  },
  {
    case: 'gradualRolloutSessionId',
    strategies: () => [{ name: 'gradualRolloutSessionId', parameters: { percentage: '100' } }],
    context: (value) => ({ sessionId: value }),
  },
];

function evaluate(strategies: unknown[], context: Context, limit: number): Evaluation {
  const snapshot = compile(
    { version: 2, features: [{ name: 'f', enabled: true, strategies }] } as never,
    { maxContextValueLength: limit },
  );
  return snapshot.evaluate('f', context)!;
}

describe('context values longer than maxContextValueLength', () => {
  for (const row of ROWS) {
    it(`${row.case}: matches up to the limit, not above`, () => {
      const [fits, tooLong] = row.values ?? [FITS, TOO_LONG];
      assert.equal(fits.length, LIMIT);
      assert.equal(tooLong.length, LIMIT + 1);
      const strategies = row.strategies(fits, tooLong);
      assert.ok(evaluate(strategies, row.context(tooLong), 10 * LIMIT).enabled, 'without limit');
      assert.ok(evaluate(strategies, row.context(fits), LIMIT).enabled, 'at the limit');
      assert.equal(evaluate(strategies, row.context(tooLong), LIMIT).enabled, false);
    });
  }

  it('variant override: does not apply to a value above the limit', () => {
    const strategies = [{ name: 'default' }];
    const variants = [
      { name: 'vip', weight: 0, overrides: [{ contextName: 'userId', values: [FITS, TOO_LONG] }] },
      { name: 'other', weight: 100 },
    ];
    const snapshot = (limit: number) =>
      compile(
        { version: 2, features: [{ name: 'f', enabled: true, strategies, variants }] } as never,
        { maxContextValueLength: limit },
      );
    assert.equal(snapshot(10 * LIMIT).evaluate('f', { userId: TOO_LONG })?.variant.name, 'vip');
    assert.equal(snapshot(LIMIT).evaluate('f', { userId: FITS })?.variant.name, 'vip');
    assert.equal(snapshot(LIMIT).evaluate('f', { userId: TOO_LONG })?.variant.name, 'other');
  });

  it('variant stickiness: a value above the limit is not hashed (a random pick, as when missing)', () => {
    const variants = [
      { name: 'a', weight: 50, stickiness: 'userId' },
      { name: 'b', weight: 50, stickiness: 'userId' },
    ];
    const snapshot = compile(
      {
        version: 2,
        features: [{ name: 'f', enabled: true, strategies: [{ name: 'default' }], variants }],
      } as never,
      { maxContextValueLength: LIMIT, random: () => 0.99 },
    );
    const visitor = { visit() {} };
    // evaluateEach returns 0 when a random number was drawn, Infinity when the answer is fixed.
    assert.equal(snapshot.evaluateEach({ userId: FITS }, visitor), Number.POSITIVE_INFINITY);
    assert.equal(snapshot.evaluateEach({ userId: TOO_LONG }, visitor), 0);
    assert.equal(snapshot.evaluate('f', { userId: TOO_LONG })?.variant.name, 'b');
  });

  it(`defaults to ${DEFAULT_MAX_CONTEXT_VALUE_LENGTH} characters; a huge value never throws`, () => {
    assert.equal(DEFAULT_MAX_CONTEXT_VALUE_LENGTH, 4096);
    const strategies = constrained({
      contextName: 'field',
      operator: 'STR_STARTS_WITH',
      values: ['a'],
    });
    const snapshot = compile({
      version: 2,
      features: [{ name: 'f', enabled: true, strategies }],
    } as never);
    assert.ok(snapshot.evaluate('f', property(sized('a', 4096)))?.enabled);
    assert.equal(snapshot.evaluate('f', property(sized('a', 4097)))?.enabled, false);
    assert.equal(snapshot.evaluateAll(property('a'.repeat(1_000_000)))[0]?.enabled, false);
  });
});
