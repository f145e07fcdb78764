// REGEX runs in time linear in the input: patterns that make a backtracking matcher take
// exponential time (regular-expression denial of service) answer long values in milliseconds.
// The timing bound is generous on purpose: a backtracking matcher needs seconds for 30
// characters of these inputs, and would not finish on 10,000 before the heat death of the machine.
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { describe, it } from 'node:test';
import { seededRandom } from '../../../test/helpers/seeded-random.js';
import { compile } from '../src/index.js';
import { linearNativeRegex } from '../src/parse/regex.js';
import { INPUT_CHARS, randomInput, randomPattern } from './fixtures/random-patterns.js';
import { regexFlagPayload } from './fixtures/regex-flag.js';

const LENGTH = 10_000;
const BOUND_MS = 100;

/**
 * The fastest of three runs of `run`, ms. Backtracking in exponential time is slow on every run;
 * a busy machine (a preempted process, a collection) slows down only some, and is not what
 * these tests are about.
 */
function fastestMs(run: () => void): number {
  let fastest = Number.POSITIVE_INFINITY;
  for (let i = 0; i < 3; i++) {
    const start = performance.now();
    run();
    fastest = Math.min(fastest, performance.now() - start);
  }
  return fastest;
}

/** A snapshot with one flag whose only constraint is `email REGEX pattern`. */
function regexFlag(pattern: string) {
  return compile(
    regexFlagPayload(pattern, 'email'),
    // Above the inputs' length, so that the pattern really runs on them.
    { maxContextValueLength: 2 * LENGTH },
  );
}

const a = 'a'.repeat(LENGTH);

const CASES: readonly [pattern: string, input: string, expected: boolean][] = [
  // A realistic flag pattern: nested quantifiers over overlapping character sets.
  ['^([a-zA-Z0-9]+\\.?)*@example\\.com$', `${a}@example.org`, false],
  ['^([a-zA-Z0-9]+\\.?)*@example\\.com$', `${a}!@example.com`, false],
  ['^([a-zA-Z0-9]+\\.?)*@example\\.com$', `${a}@example.com`, true],
  ['(a+)+$', `${a}!`, false],
  ['(a+)+$', a, true],
  ['(a|aa)*b', a, false],
  ['(a|aa)*b', `${a}b`, true],
];

describe('REGEX in linear time', () => {
  for (const [pattern, input, expected] of CASES) {
    it(`${pattern} on ${input.length} characters (${expected ? 'match' : 'no match'})`, () => {
      const snapshot = regexFlag(pattern);
      const result = snapshot.evaluate('r', { properties: { email: input } });
      assert.equal(result?.enabled, expected);
      const elapsed = fastestMs(() => snapshot.evaluate('r', { properties: { email: input } }));
      assert.ok(elapsed < BOUND_MS, `took ${elapsed.toFixed(1)} ms`);
    });
  }
});

describe('REGEX native fast path in linear time', () => {
  it('answers every random pattern it takes on long runs of each character in milliseconds', () => {
    const random = seededRandom(7);
    let natively = 0;
    while (natively < 150) {
      const pattern = randomPattern(random);
      const caseInsensitive = random() < 0.3;
      const regex = linearNativeRegex(pattern, caseInsensitive);
      if (regex === undefined) continue;
      natively++;
      const runs = INPUT_CHARS.flatMap((char) => [char.repeat(LENGTH), `${char.repeat(LENGTH)}!`]);
      for (const input of [...runs, randomInput(random, LENGTH)]) {
        const elapsed = fastestMs(() => regex.test(input));
        assert.ok(elapsed < BOUND_MS, `${pattern}: ${elapsed.toFixed(1)} ms`);
      }
    }
  });
});
