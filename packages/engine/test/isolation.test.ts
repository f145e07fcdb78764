import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ClientFeature, ClientFeatures, Constraint } from '@flags/schemas';
import { type CompileOptions, type Context, compile, type Snapshot } from '../src/index.js';

/**
 * The engine keeps no state outside the snapshot: the time an evaluation runs at, how long its
 * answers hold and the one-entry parse caches belong to the snapshot that evaluates. These tests
 * interleave two snapshots, and nest one evaluation inside another (a visitor of `evaluateEach`
 * calling another snapshot, as a caller counting or rendering may), and check that each answers as
 * if it were alone.
 */

const payload = (features: ClientFeature[]): ClientFeatures => ({ version: 2, features });

const constrained = (name: string, ...constraints: Constraint[]): ClientFeature => ({
  name,
  enabled: true,
  strategies: [{ name: 'default', constraints }],
});

const LAUNCH = '2030-01-01T00:00:00Z';
const LAUNCH_MS = Date.parse(LAUNCH);
const FOREVER = Number.POSITIVE_INFINITY;

const afterLaunch = (name: string): ClientFeature =>
  constrained(name, { contextName: 'currentTime', operator: 'DATE_AFTER', value: LAUNCH });

const plain = (name: string): ClientFeature => ({
  name,
  enabled: true,
  strategies: [{ name: 'default' }],
});

/** `random` stickiness: every evaluation draws, so its answers never hold. */
const coin = (name: string): ClientFeature => ({
  name,
  enabled: true,
  strategies: [
    { name: 'flexibleRollout', parameters: { rollout: '50', stickiness: 'random', groupId: 'g' } },
  ],
});

const enabled = (results: readonly { enabled: boolean }[]) => results.map((r) => r.enabled);

/** `evaluateEach` collected into a list, plus what it returned. */
function each(
  snapshot: Snapshot,
  context: Context,
  now?: number,
  between?: () => void,
): { results: boolean[]; stableUntil: number } {
  const results: boolean[] = [];
  const stableUntil = snapshot.evaluateEach(
    context,
    {
      visit(_index, result) {
        results.push(result.enabled);
        between?.();
      },
    },
    now,
  );
  return { results, stableUntil };
}

describe('the time of an evaluation', () => {
  it('is the `now` the caller passes, for every evaluation method', () => {
    const snapshot = compile(payload([afterLaunch('launch'), plain('plain')]));
    assert.equal(snapshot.evaluate('launch', {}, LAUNCH_MS - 1)?.enabled, false);
    assert.equal(snapshot.evaluate('launch', {}, LAUNCH_MS + 1)?.enabled, true);
    assert.deepEqual(enabled(snapshot.evaluateAll({}, LAUNCH_MS - 1)), [false, true]);
    assert.deepEqual(enabled(snapshot.evaluateAll({}, LAUNCH_MS + 1)), [true, true]);
    // Before the launch the answers hold until it; after it, for good.
    assert.deepEqual(each(snapshot, {}, LAUNCH_MS - 1000), {
      results: [false, true],
      stableUntil: LAUNCH_MS,
    });
    assert.deepEqual(each(snapshot, {}, LAUNCH_MS + 1), {
      results: [true, true],
      stableUntil: FOREVER,
    });
    // The context's own currentTime still wins over the evaluation's time.
    const late = { currentTime: new Date(LAUNCH_MS + 1) };
    assert.equal(snapshot.evaluate('launch', late, LAUNCH_MS - 1)?.enabled, true);
  });

  it("is read from the snapshot's clock when the caller passes none: once, and only if needed", () => {
    let reads = 0;
    const options: CompileOptions = {
      clock: () => {
        reads++;
        return LAUNCH_MS + 1;
      },
    };
    const snapshot = compile(payload([afterLaunch('a'), plain('p'), afterLaunch('b')]), options);
    assert.deepEqual(enabled(snapshot.evaluateAll({})), [true, true, true]);
    assert.equal(reads, 1, 'one read for the two date constraints of one evaluation');
    assert.equal(snapshot.evaluate('a', {})?.enabled, true);
    assert.equal(reads, 2, 'a new evaluation reads the clock again');
    snapshot.evaluateAll({}, LAUNCH_MS - 1);
    snapshot.evaluateAll({ currentTime: new Date(LAUNCH_MS - 1) });
    snapshot.evaluate('p', {});
    assert.equal(
      reads,
      2,
      'not read when `now` is passed, the context has a time, or no date is compared',
    );
  });

  it('is kept apart for two snapshots with different clocks, also when one runs inside the other', () => {
    const features = payload([afterLaunch('a'), plain('p'), afterLaunch('b')]);
    const before = compile(features, { clock: () => LAUNCH_MS - 1000 });
    const after = compile(features, { clock: () => LAUNCH_MS + 1000 });
    const inside: boolean[][] = [];
    const outer = each(before, {}, undefined, () => {
      inside.push(enabled(after.evaluateAll({})));
    });
    assert.deepEqual(outer, { results: [false, true, false], stableUntil: LAUNCH_MS });
    assert.deepEqual(inside, [
      [true, true, true],
      [true, true, true],
      [true, true, true],
    ]);
    // The same with the times passed by the caller, the inner call on the outer's own snapshot.
    const nested = each(before, {}, LAUNCH_MS - 5, () => {
      assert.equal(before.evaluate('b', {}, LAUNCH_MS + 5)?.enabled, true);
    });
    assert.deepEqual(nested, { results: [false, true, false], stableUntil: LAUNCH_MS });
  });
});

describe('how long answers hold', () => {
  it('is decided by what the evaluating snapshot compared, whatever runs in between', () => {
    const dated = compile(payload([afterLaunch('launch'), plain('plain')]));
    const drawing = compile(payload([coin('coin')]));
    const fixed = compile(payload([plain('plain')]));
    // A random draw elsewhere does not make this snapshot's answers vary.
    assert.deepEqual(
      each(fixed, {}, LAUNCH_MS - 1000, () => drawing.evaluateAll({ userId: 'u' })),
      { results: [true], stableUntil: FOREVER },
    );
    // Another snapshot (or this one) evaluated in between does not make it forget its date.
    assert.deepEqual(
      each(dated, {}, LAUNCH_MS - 1000, () => fixed.evaluateAll({})),
      { results: [false, true], stableUntil: LAUNCH_MS },
    );
    assert.deepEqual(
      each(dated, {}, LAUNCH_MS - 1000, () => dated.evaluate('plain', {}, LAUNCH_MS - 1000)),
      { results: [false, true], stableUntil: LAUNCH_MS },
    );
    // Nor does a date compared elsewhere limit this one's answers.
    assert.deepEqual(
      each(fixed, {}, LAUNCH_MS - 1000, () => dated.evaluateAll({}, LAUNCH_MS - 1000)),
      { results: [true], stableUntil: FOREVER },
    );
    // And the draws of this one still count when another ran in between.
    assert.equal(
      each(drawing, { userId: 'u' }, undefined, () => fixed.evaluateAll({})).stableUntil,
      0,
    );
  });
});

describe('the one-entry parse caches', () => {
  // Lowercased values (STR_* caseInsensitive), parsed addresses (IN_CIDR, remoteAddress) and parsed
  // versions (SEMVER_*) are remembered between flags; two snapshots alternating, one inside the
  // other, with contexts that differ in exactly those values.
  const first = payload([
    constrained('mail', {
      contextName: 'email',
      operator: 'STR_ENDS_WITH',
      values: ['@EXAMPLE.COM'],
      caseInsensitive: true,
    }),
    constrained('office', {
      contextName: 'remoteAddress',
      operator: 'IN_CIDR',
      values: ['10.0.0.0/8'],
    }),
    constrained('modern', { contextName: 'appVersion', operator: 'SEMVER_GTE', value: '2.0.0' }),
    {
      name: 'lan',
      enabled: true,
      strategies: [{ name: 'remoteAddress', parameters: { IPs: '192.168.0.0/16' } }],
    },
    constrained('mail-again', {
      contextName: 'email',
      operator: 'STR_CONTAINS',
      values: ['Example'],
      caseInsensitive: true,
    }),
    constrained('v6', {
      contextName: 'remoteAddress',
      operator: 'IN_CIDR',
      values: ['2001:db8::/32'],
    }),
  ]);
  const second = payload([
    constrained('admin', {
      contextName: 'email',
      operator: 'STR_STARTS_WITH',
      values: ['ADMIN@'],
      caseInsensitive: true,
    }),
    constrained('v6', {
      contextName: 'remoteAddress',
      operator: 'IN_CIDR',
      values: ['2001:db8::/32'],
    }),
    constrained('legacy', { contextName: 'appVersion', operator: 'SEMVER_LT', value: '2.0.0' }),
    constrained('office', {
      contextName: 'remoteAddress',
      operator: 'IN_CIDR',
      values: ['10.0.0.0/8'],
    }),
  ]);
  const contexts: Context[] = [
    { remoteAddress: '10.1.2.3', properties: { email: 'Ann@Example.com', appVersion: '2.1.0' } },
    { remoteAddress: '2001:db8::1', properties: { email: 'ADMIN@other.org', appVersion: '1.9.9' } },
    {
      remoteAddress: '::ffff:192.168.1.1',
      properties: { email: 'admin@EXAMPLE.com', appVersion: '2.0.0-rc.1' },
    },
    {
      remoteAddress: 'not an address',
      properties: { email: 'bob@example.org', appVersion: 'v3.0.0' },
    },
    {
      remoteAddress: '::ffff:10.9.9.9',
      properties: { email: 'x@example.com', appVersion: '10.0.0' },
    },
  ];

  it('answer each snapshot as if it ran alone', () => {
    // Reference answers: each context on a snapshot of its own, evaluated alone.
    const alone = (features: ClientFeatures, context: Context) =>
      enabled(compile(features).evaluateAll(context));
    const a = compile(first);
    const b = compile(second);
    for (let i = 0; i < contexts.length; i++) {
      const outer = contexts[i]!;
      const inner = contexts[(i + 1) % contexts.length]!;
      const seenInside: boolean[][] = [];
      const results = each(a, outer, undefined, () => {
        seenInside.push(enabled(b.evaluateAll(inner)));
        seenInside.push(enabled(a.evaluateAll(inner)));
      }).results;
      assert.deepEqual(results, alone(first, outer), `first, context ${i}`);
      for (let visit = 0; visit < seenInside.length; visit += 2) {
        assert.deepEqual(seenInside[visit], alone(second, inner), `second inside, context ${i}`);
        assert.deepEqual(seenInside[visit + 1], alone(first, inner), `first inside, context ${i}`);
      }
    }
    // The reference itself, for the first two contexts, so the comparison above is not vacuous.
    assert.deepEqual(alone(first, contexts[0]!), [true, true, true, false, true, false]);
    assert.deepEqual(alone(second, contexts[1]!), [true, true, true, false]);
    assert.deepEqual(alone(first, contexts[2]!), [true, false, false, true, true, false]);
  });
});
