import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ClientFeature, ClientFeatures } from '@flags/schemas';
import {
  type CompileOptions,
  type Context,
  compile,
  type Evaluation,
  type Snapshot,
} from '../src/index.js';
import { realisticWorkload } from './fixtures/realistic.js';

const MEMO = 1 << 20;

const payload = (features: ClientFeature[]): ClientFeatures => ({ version: 2, features });

/** Every flag's answer through `evaluateEach`, as wire JSON, and what the call returned. */
function answers(snapshot: Snapshot, context: Context, now?: number) {
  const results: Evaluation[] = [];
  const stableUntil = snapshot.evaluateEach(context, { visit: (_i, r) => results.push(r) }, now);
  return { json: results.map((result) => JSON.stringify(result)), stableUntil };
}

/** A snapshot with the memo and one without, over the same payload. */
function pair(features: ClientFeatures, options: CompileOptions = {}) {
  return {
    plain: compile(features, options),
    memo: compile(features, { ...options, memoBytes: MEMO }),
  };
}

describe('the evaluation memo (memoBytes)', () => {
  it('gives every answer the plain snapshot gives, for users back in new sessions with other fields', () => {
    const hostname = 'memo-host';
    const {
      payload: features,
      randomFlags,
      contexts,
    } = realisticWorkload({
      flags: 200,
      contexts: 150,
      hostname,
      seed: 11,
    });
    const { plain, memo } = pair(features, { hostname });
    const random = plain.names.map((name) => randomFlags.has(name));
    let compared = 0;
    for (let round = 0; round < 9; round++) {
      contexts.forEach((context, i) => {
        // The user of one context with the other fields of another, in a new session: a key that
        // left out a field the kept flags read would give the first user's answers to the second.
        const other = contexts[(i + Math.floor(round / 3)) % contexts.length] as Context;
        const mixed: Context = {
          ...other,
          userId: context.userId ?? `user-${i}`,
          sessionId: `s${round}-${i}`,
        };
        const ours = answers(memo, mixed, 1_700_000_000_000);
        const theirs = answers(plain, mixed, 1_700_000_000_000);
        ours.json.forEach((json, n) => {
          if (random[n]) return;
          assert.equal(json, theirs.json[n], `${plain.names[n]} for ${JSON.stringify(mixed)}`);
          compared++;
        });
        if (!random.some(Boolean)) assert.equal(ours.stableUntil, theirs.stableUntil);
      });
    }
    assert.ok(compared > 100_000, `compared ${compared}`);
    // Each mix of user and fields comes three times: kept on its second sighting, found on the third.
    assert.ok(memo.memoHits > 300, `${memo.memoHits} evaluations from the memo`);
    assert.equal(plain.memoHits, 0);
  });

  it('evaluates again the flags that read the session, the clock or chance, or run custom code', () => {
    let customCalls = 0;
    const features = payload([
      {
        name: 'by-user',
        enabled: true,
        strategies: [{ name: 'gradualRolloutUserId', parameters: { percentage: '50' } }],
      },
      {
        name: 'by-session',
        enabled: true,
        strategies: [{ name: 'gradualRolloutSessionId', parameters: { percentage: '50' } }],
      },
      {
        name: 'sticky-session',
        enabled: true,
        strategies: [
          { name: 'flexibleRollout', parameters: { rollout: '50', stickiness: 'sessionId' } },
        ],
      },
      {
        name: 'chance',
        enabled: true,
        strategies: [{ name: 'gradualRolloutRandom', parameters: { percentage: '50' } }],
      },
      {
        name: 'dated',
        enabled: true,
        strategies: [
          {
            name: 'default',
            constraints: [
              {
                contextName: 'currentTime',
                operator: 'DATE_AFTER',
                value: '2030-01-01T00:00:00.000Z',
              },
            ],
          },
        ],
      },
      { name: 'custom', enabled: true, strategies: [{ name: 'counted', parameters: {} }] },
      {
        name: 'child-of-session',
        enabled: true,
        strategies: [{ name: 'default', parameters: {} }],
        dependencies: [{ feature: 'by-session' }],
      },
    ]);
    const draws = [0.1, 0.9];
    let draw = 0;
    const options: CompileOptions = {
      random: () => draws[draw++ % 2] as number,
      strategies: [{ name: 'counted', isEnabled: () => ++customCalls % 2 === 0 }],
    };
    const memo = compile(features, { ...options, memoBytes: MEMO });
    const plain = compile(features, { ...options, random: () => 0.5 });
    const seen = new Map<string, Set<boolean>>();
    const times = [Date.parse('2029-01-01'), Date.parse('2031-01-01')];
    for (let i = 0; i < 40; i++) {
      const context: Context = { userId: 'returning', sessionId: `session-${i}` };
      const now = times[i % 2];
      const ours = new Map<string, Evaluation>();
      memo.evaluateEach(context, { visit: (n, r) => ours.set(memo.names[n] as string, r) }, now);
      for (const name of ['by-user', 'by-session', 'sticky-session', 'dated', 'child-of-session']) {
        assert.equal(ours.get(name)?.enabled, plain.evaluate(name, context, now)?.enabled, name);
      }
      for (const [name, result] of ours) {
        if (!seen.has(name)) seen.set(name, new Set());
        seen.get(name)?.add(result.enabled);
      }
    }
    assert.ok(memo.memoHits > 30, `${memo.memoHits} evaluations from the memo`);
    // Only the user's own flag stays put; every other one still answers both ways.
    assert.deepEqual([...(seen.get('by-user') ?? [])].length, 1);
    for (const name of [
      'by-session',
      'sticky-session',
      'chance',
      'dated',
      'custom',
      'child-of-session',
    ]) {
      assert.equal(seen.get(name)?.size, 2, `${name} answered both ways`);
    }
    assert.equal(customCalls, 40);
  });

  it('keeps nothing when a variant stickiness field is missing (a random pick)', () => {
    const features = payload([
      {
        name: 'split',
        enabled: true,
        strategies: [{ name: 'default', parameters: {} }],
        variants: [
          { name: 'a', weight: 500, weightType: 'variable', stickiness: 'tenantId' },
          { name: 'b', weight: 500, weightType: 'variable', stickiness: 'tenantId' },
        ],
      },
    ]);
    let draw = 0;
    const memo = compile(features, {
      random: () => (draw++ % 2 === 0 ? 0.1 : 0.9),
      memoBytes: MEMO,
    });
    const picked: string[] = [];
    for (let i = 0; i < 8; i++) {
      const { json, stableUntil } = answers(memo, { userId: 'u1', sessionId: `s${i}` });
      picked.push(JSON.parse(json[0] as string).variant.name);
      assert.equal(stableUntil, 0);
    }
    assert.deepEqual(picked, ['a', 'b', 'a', 'b', 'a', 'b', 'a', 'b']);
    assert.equal(memo.memoHits, 0);
    // With the field, the pick is a function of it and is kept.
    for (let i = 0; i < 4; i++) answers(memo, { userId: 'u1', properties: { tenantId: 't1' } });
    assert.equal(memo.memoHits, 2);
  });

  it('tells a named field from the property of the same name, and values that hold its marks', () => {
    const features = payload([
      {
        name: 'office',
        enabled: true,
        strategies: [{ name: 'remoteAddress', parameters: { IPs: '10.0.0.1' } }],
      },
      {
        name: 'by-a',
        enabled: true,
        strategies: [
          {
            name: 'default',
            constraints: [{ contextName: 'a', operator: 'IN', values: ['p\u0001q'] }],
          },
        ],
      },
      {
        name: 'by-b',
        enabled: true,
        strategies: [
          { name: 'default', constraints: [{ contextName: 'b', operator: 'IN', values: ['z'] }] },
        ],
      },
    ]);
    const { plain, memo } = pair(features);
    const contexts: Context[] = [
      { userId: 'u', remoteAddress: '10.0.0.1' },
      { userId: 'u', properties: { remoteAddress: '10.0.0.1' } },
      // Joined with marks and nothing else, these two would make the same key.
      { userId: 'u', properties: { a: 'p\u0001q' } },
      { userId: 'u', properties: { a: 'p', b: 'q\u0002' } },
      { userId: 'u', properties: { a: 'p' } },
    ];
    for (let round = 0; round < 4; round++) {
      for (const context of contexts) {
        assert.deepEqual(
          answers(memo, context).json,
          answers(plain, context).json,
          JSON.stringify(context),
        );
      }
    }
    assert.deepEqual(
      contexts.map((context) =>
        answers(plain, context).json.map((json) => JSON.parse(json).enabled),
      ),
      [
        [true, false, false],
        [false, false, false],
        [false, true, false],
        [false, false, false],
        [false, false, false],
      ],
    );
    assert.ok(memo.memoHits > 0);
  });

  it('answers an evaluation started inside a visit, and drops old users when its budget is full', () => {
    const {
      payload: features,
      randomFlags,
      contexts,
    } = realisticWorkload({
      flags: 50,
      contexts: 300,
      hostname: 'h',
      seed: 3,
    });
    // Room for a few dozen users: the generations turn over many times.
    const small = compile(features, { hostname: 'h', memoBytes: 16 * 1024 });
    const plain = compile(features, { hostname: 'h' });
    const now = 1_700_000_000_000;
    const chosen = (json: string[]) =>
      json.filter((_, n) => !randomFlags.has(plain.names[n] as string));
    contexts.forEach((context, i) => {
      for (let session = 0; session < 3; session++) {
        const user = {
          ...context,
          userId: context.userId ?? `user-${i}`,
          sessionId: `s${session}`,
        };
        const inner = contexts[(i + 1) % contexts.length] as Context;
        let nested: string[] = [];
        const outer: string[] = [];
        small.evaluateEach(
          user,
          {
            visit: (n, result) => {
              if (n === 0) nested = answers(small, inner, now).json;
              outer.push(JSON.stringify(result));
            },
          },
          now,
        );
        assert.deepEqual(chosen(outer), chosen(answers(plain, user, now).json));
        assert.deepEqual(chosen(nested), chosen(answers(plain, inner, now).json));
      }
    });
    assert.ok(small.memoHits > 0);
    // A budget too small for one user keeps nothing, and says so by finding nothing.
    const none = compile(features, { hostname: 'h', memoBytes: 1 });
    for (let i = 0; i < 3; i++) answers(none, { userId: 'u' });
    assert.equal(none.memoHits, 0);
  });

  it('keeps a share of the users when more come back than it holds, instead of none', () => {
    const features = payload(
      Array.from({ length: 20 }, (_, i) => ({
        name: `rollout-${i}`,
        enabled: true,
        strategies: [
          { name: 'flexibleRollout', parameters: { rollout: '50', stickiness: 'userId' } },
        ],
      })),
    );
    const plain = compile(features);
    // Room for about 40 users a generation; 400 users come back in turn, 30 times each. Kept in
    // order of arrival, each would be pushed out before its return and none ever found.
    const memo = compile(features, { memoBytes: 8 * 1024 });
    let evaluations = 0;
    for (let round = 0; round < 30; round++) {
      for (let user = 0; user < 400; user++) {
        const context = { userId: `user-${user}`, sessionId: `s${round}` };
        assert.deepEqual(answers(memo, context).json, answers(plain, context).json);
        evaluations++;
      }
    }
    assert.ok(memo.memoHits > evaluations / 20, `${memo.memoHits} of ${evaluations} from the memo`);
  });
});
