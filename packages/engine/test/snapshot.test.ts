import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ClientFeature, ClientFeatures, Strategy } from '@flags/schemas';
import { type CustomStrategy, compile, type Evaluation, Reasons } from '../src/index.js';

const payload = (features: ClientFeature[]): ClientFeatures => ({ version: 2, features });

describe('snapshot', () => {
  it('compiles a 10,000-flag payload and answers every flag correctly', () => {
    const features: ClientFeature[] = Array.from({ length: 10_000 }, (_, i) => ({
      name: `flag-${i}`,
      enabled: i % 5 !== 0,
      strategies: [
        {
          name: 'default',
          constraints: [{ contextName: 'userId', operator: 'IN', values: [`user-${i % 7}`] }],
        },
      ],
      variants:
        i % 3 === 0
          ? [{ name: `v-${i}`, weight: 1000, payload: { type: 'string', value: String(i) } }]
          : [],
    }));
    const snapshot = compile(payload(features));
    assert.equal(snapshot.names.length, 10_000);
    const results = snapshot.evaluateAll({ userId: 'user-3' });
    assert.equal(results.length, 10_000);
    results.forEach((result, i) => {
      const on = i % 5 !== 0 && i % 7 === 3;
      assert.equal(result.name, `flag-${i}`);
      assert.equal(result.enabled, on);
      assert.equal(result.variant.name, on && i % 3 === 0 ? `v-${i}` : 'disabled');
    });
    assert.equal(snapshot.evaluate('flag-9999', { userId: 'user-3' })?.enabled, true); // 9999 % 7 = 3
    assert.equal(snapshot.evaluate('flag-9999', { userId: 'user-4' })?.enabled, false);
    assert.equal(snapshot.evaluate('flag-9995', { userId: 'user-6' })?.enabled, false); // switched off
  });

  it('evaluateEach visits the results of evaluateAll, with their positions', () => {
    const features: ClientFeature[] = Array.from({ length: 50 }, (_, i) => ({
      name: `flag-${i}`,
      enabled: i % 4 !== 0,
      strategies: [
        {
          name: 'flexibleRollout',
          parameters: { rollout: '50', stickiness: 'userId', groupId: `flag-${i}` },
        },
      ],
      variants: i % 3 === 0 ? [{ name: 'blue', weight: 1000, stickiness: 'userId' }] : [],
    }));
    const snapshot = compile(payload(features));
    for (const userId of ['a', 'b', 'c', 'd']) {
      const visited: Evaluation[] = [];
      snapshot.evaluateEach(
        { userId },
        {
          visit(index, result) {
            assert.equal(index, visited.length);
            visited.push(result);
          },
        },
      );
      const all = snapshot.evaluateAll({ userId });
      assert.equal(visited.length, 50);
      assert.deepEqual(visited, all);
      for (let i = 0; i < all.length; i++) assert.equal(visited[i], all[i]);
    }
    assert.ok(
      snapshot.evaluateAll({ userId: 'a' }).some((result) => result.enabled) &&
        snapshot.evaluateAll({ userId: 'a' }).some((result) => !result.enabled),
    );
    assert.throws(
      () =>
        snapshot.evaluateEach(
          {},
          {
            visit() {
              throw new Error('from the visitor');
            },
          },
        ),
      /from the visitor/,
    );
  });

  it('evaluateEach tells until when the results hold for the same context', () => {
    const flag = (name: string, strategy: Strategy, extra = {}) => ({
      name,
      enabled: true,
      strategies: [strategy],
      ...extra,
    });
    const rollout = (stickiness: string) => ({
      name: 'flexibleRollout',
      parameters: { rollout: '50', stickiness, groupId: 'g' },
    });
    const dated = (operator: string, value: string) => ({
      name: 'default',
      constraints: [{ contextName: 'currentTime', operator, value }],
    });
    const userVariants = {
      variants: [
        { name: 'a', weight: 500, stickiness: 'userId' },
        { name: 'b', weight: 500, stickiness: 'userId' },
      ],
    };
    const custom: CustomStrategy = { name: 'mine', isEnabled: () => true };
    const FOREVER = Number.POSITIVE_INFINITY;
    const future = new Date(Date.now() + 3_600_000).toISOString();
    const cases: Array<[string, ClientFeature, Record<string, unknown>, number]> = [
      ['plain default', flag('f', { name: 'default' }), {}, FOREVER],
      ['userId stickiness with a userId', flag('f', rollout('userId')), { userId: 'u' }, FOREVER],
      [
        'default stickiness with a sessionId',
        flag('f', rollout('default')),
        { sessionId: 's' },
        FOREVER,
      ],
      ['default stickiness with neither id', flag('f', rollout('default')), {}, 0],
      ['random stickiness', flag('f', rollout('random')), { userId: 'u' }, 0],
      [
        'gradualRolloutRandom',
        flag('f', { name: 'gradualRolloutRandom', parameters: { percentage: '50' } }),
        {},
        0,
      ],
      [
        'a date passed, on the clock',
        flag('f', dated('DATE_AFTER', '2020-01-01T00:00:00Z')),
        {},
        FOREVER,
      ],
      [
        'a date to come, on the clock',
        flag('f', dated('DATE_BEFORE', future)),
        {},
        Date.parse(future),
      ],
      [
        'a date to come, on currentTime',
        flag('f', dated('DATE_AFTER', future)),
        { currentTime: new Date('2021-01-01') },
        FOREVER,
      ],
      [
        'variants with their stickiness value',
        flag('f', { name: 'default' }, userVariants),
        { userId: 'u' },
        FOREVER,
      ],
      ['variants without it', flag('f', { name: 'default' }, userVariants), {}, 0],
      ['a custom strategy', flag('f', { name: 'mine' }), {}, 0],
    ];
    for (const [label, feature, context, until] of cases) {
      const snapshot = compile(payload([feature]), { strategies: [custom] });
      assert.equal(snapshot.evaluateEach(context, { visit() {} }), until, label);
    }
    // The earliest limit of any flag wins; the next evaluation starts afresh.
    const soon = new Date(Date.now() + 60_000).toISOString();
    const mixed = compile(
      payload([
        flag('a', dated('DATE_AFTER', future)),
        flag('b', dated('DATE_BEFORE', soon)),
        flag('c', { name: 'default' }),
      ]),
    );
    assert.equal(mixed.evaluateEach({}, { visit() {} }), Date.parse(soon));
    const coin = compile(
      payload([flag('a', dated('DATE_AFTER', future)), flag('b', rollout('random'))]),
    );
    assert.equal(coin.evaluateEach({ userId: 'u' }, { visit() {} }), 0);
    const plain = compile(payload([flag('a', { name: 'default' })]));
    assert.equal(plain.evaluateEach({}, { visit() {} }), FOREVER);
  });

  it('reuses interned, frozen results across calls', () => {
    const snapshot = compile(
      payload([
        { name: 'on', enabled: true, strategies: [] },
        {
          name: 'split',
          enabled: true,
          strategies: [],
          variants: [
            { name: 'a', weight: 500 },
            { name: 'b', weight: 500 },
          ],
        },
      ]),
    );
    const first = snapshot.evaluateAll({ userId: '1' });
    const second = snapshot.evaluateAll({ userId: '1' });
    assert.notEqual(first, second); // a new array per call …
    assert.equal(first[0], second[0]); // … of the same result objects
    assert.equal(first[1], second[1]);
    assert.equal(snapshot.evaluate('on', {}), first[0]);
    assert.ok(Object.isFrozen(first[0]) && Object.isFrozen(first[0]!.variant));
    const seen = new Set<Evaluation>();
    for (let i = 0; i < 200; i++) seen.add(snapshot.evaluate('split', { userId: String(i) })!);
    assert.equal(seen.size, 2, 'one object per variant');
  });

  it('names, has() and unknown flags', () => {
    const snapshot = compile(
      payload([
        { name: 'b', enabled: true, strategies: [] },
        { name: 'a', enabled: false, strategies: [] },
        { name: 'b', enabled: false, strategies: [] },
      ]),
    );
    assert.deepEqual(snapshot.names, ['b', 'a']);
    assert.equal(snapshot.has('a'), true);
    assert.equal(snapshot.has('zzz'), false);
    assert.equal(snapshot.evaluate('zzz', {}), undefined);
    assert.equal(snapshot.evaluate('b', {})?.enabled, true, 'the first of a duplicated name wins');
  });

  it('reports reasons', () => {
    const snapshot = compile(
      payload([
        { name: 'off', enabled: false, strategies: [{ name: 'default' }] },
        { name: 'static', enabled: true, strategies: [{ name: 'default' }] },
        {
          name: 'full-rollout',
          enabled: true,
          strategies: [
            { name: 'flexibleRollout', parameters: { rollout: '100', stickiness: 'default' } },
          ],
        },
        {
          name: 'targeted',
          enabled: true,
          strategies: [{ name: 'userWithId', parameters: { userIds: 'u1, u2' } }],
        },
        {
          name: 'split',
          enabled: true,
          strategies: [{ name: 'default' }],
          variants: [
            {
              name: 'x',
              weight: 1000,
              overrides: [{ contextName: 'userId', values: ['vip'] }],
            },
          ],
        },
      ]),
    );
    const reasons = (userId: string) =>
      Object.fromEntries(snapshot.evaluateAll({ userId }).map((r) => [r.name, r.reason]));
    assert.deepEqual(reasons('u2'), {
      off: Reasons.DISABLED,
      static: Reasons.STATIC,
      'full-rollout': Reasons.STATIC,
      targeted: Reasons.TARGETING_MATCH,
      split: Reasons.SPLIT,
    });
    assert.equal(reasons('u3').targeted, Reasons.DISABLED);
    assert.equal(reasons('vip').split, Reasons.TARGETING_MATCH, 'an override is targeting');
  });

  it('returns whole results in the wire shape', () => {
    const snapshot = compile(
      payload([
        { name: 'off', enabled: false, strategies: [], impressionData: true },
        { name: 'on', enabled: true, strategies: [] },
        {
          name: 'variant',
          enabled: true,
          strategies: [],
          variants: [{ name: 'blue', weight: 1, payload: { type: 'json', value: '{"a":1}' } }],
        },
      ]),
    );
    assert.deepEqual(snapshot.evaluateAll({}), [
      {
        name: 'off',
        enabled: false,
        variant: {
          name: 'disabled',
          enabled: false,
          feature_enabled: false,
          featureEnabled: false,
        },
        impressionData: true,
        reason: 'DISABLED',
      },
      {
        name: 'on',
        enabled: true,
        variant: { name: 'disabled', enabled: false, feature_enabled: true, featureEnabled: true },
        impressionData: false,
        reason: 'STATIC',
      },
      {
        name: 'variant',
        enabled: true,
        variant: {
          name: 'blue',
          enabled: true,
          payload: { type: 'json', value: '{"a":1}' },
          feature_enabled: true,
          featureEnabled: true,
        },
        impressionData: false,
        reason: 'SPLIT',
      },
    ]);
  });

  it('skips disabled strategies', () => {
    const snapshot = compile(
      payload([
        { name: 'all-off', enabled: true, strategies: [{ name: 'default', disabled: true }] },
        {
          name: 'second',
          enabled: true,
          strategies: [
            { name: 'default', disabled: true },
            { name: 'userWithId', parameters: { userIds: 'a' } },
          ],
        },
      ]),
    );
    assert.equal(snapshot.evaluate('all-off', {})?.enabled, false);
    assert.equal(snapshot.evaluate('second', { userId: 'a' })?.enabled, true);
    assert.equal(snapshot.evaluate('second', { userId: 'b' })?.enabled, false);
  });

  it('uses options.random for random stickiness and gradualRolloutRandom', () => {
    let next = 0.1;
    const features = payload([
      {
        name: 'r',
        enabled: true,
        strategies: [{ name: 'gradualRolloutRandom', parameters: { percentage: '50' } }],
      },
      {
        name: 'f',
        enabled: true,
        strategies: [
          { name: 'flexibleRollout', parameters: { rollout: '50', stickiness: 'random' } },
        ],
      },
    ]);
    const snapshot = compile(features, { random: () => next });
    assert.deepEqual(
      snapshot.evaluateAll({}).map((r) => r.enabled),
      [true, true],
    );
    next = 0.9;
    assert.deepEqual(
      snapshot.evaluateAll({}).map((r) => r.enabled),
      [false, false],
    );
  });

  it('matches applicationHostname against options.hostname', () => {
    const features = payload([
      {
        name: 'h',
        enabled: true,
        strategies: [{ name: 'applicationHostname', parameters: { hostNames: 'web-1, Web-2' } }],
      },
    ]);
    assert.equal(compile(features, { hostname: 'WEB-2' }).evaluate('h', {})?.enabled, true);
    assert.equal(compile(features, { hostname: 'web-3' }).evaluate('h', {})?.enabled, false);
    assert.equal(compile(features).evaluate('h', {})?.enabled, false);
  });

  it('answers a constraint shared by many flags per context, not per call', () => {
    let reads = 0;
    const properties = {
      get plan() {
        reads++;
        return 'pro';
      },
    } as unknown as Record<string, string>;
    const shared = { contextName: 'plan', operator: 'IN', values: ['pro'] };
    const snapshot = compile(
      payload(
        Array.from({ length: 50 }, (_, i) => ({
          name: `f${i}`,
          enabled: true,
          strategies: [{ name: 'default', constraints: [shared] }],
        })),
      ),
    );
    assert.ok(snapshot.evaluateAll({ properties }).every((r) => r.enabled));
    assert.equal(reads, 1);
    // A later call reads the context again (it may have changed).
    assert.ok(snapshot.evaluateAll({ properties }).every((r) => r.enabled));
    assert.equal(reads, 2);
  });

  it('keeps shared answers apart when a custom strategy evaluates another context', () => {
    const inEurope = { contextName: 'region', operator: 'IN', values: ['eu'] };
    let snapshot: ReturnType<typeof compile> | undefined;
    const nested: CustomStrategy = {
      name: 'nested',
      // Evaluates the same snapshot for a different context in the middle of an evaluation.
      isEnabled: () =>
        snapshot!.evaluate('first', { properties: { region: 'us' } })?.enabled === false,
    };
    snapshot = compile(
      payload([
        {
          name: 'first',
          enabled: true,
          strategies: [{ name: 'default', constraints: [inEurope] }],
        },
        { name: 'middle', enabled: true, strategies: [{ name: 'nested' }] },
        { name: 'last', enabled: true, strategies: [{ name: 'default', constraints: [inEurope] }] },
      ]),
      { strategies: [nested] },
    );
    assert.deepEqual(
      snapshot.evaluateAll({ properties: { region: 'eu' } }).map((r) => r.enabled),
      [true, true, true],
    );
  });

  it('uses the current time for date constraints when the context has none', () => {
    const features = payload([
      {
        name: 'd',
        enabled: true,
        strategies: [
          {
            name: 'default',
            constraints: [
              { contextName: 'currentTime', operator: 'DATE_AFTER', value: '2020-01-01T00:00:00Z' },
            ],
          },
        ],
      },
    ]);
    const snapshot = compile(features);
    assert.equal(snapshot.evaluate('d', {})?.enabled, true);
    assert.equal(snapshot.evaluate('d', { currentTime: new Date('2019-06-01') })?.enabled, false);
  });

  it('keeps the payload it was compiled from', () => {
    const source = payload([{ name: 'x', enabled: true, strategies: [] }]);
    assert.equal(compile(source).payload, source);
  });
});
