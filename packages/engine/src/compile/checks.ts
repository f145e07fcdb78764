import type { Predicate } from '../operators/operator.js';
import { NEVER } from '../strategies/strategy.js';
import type { Context } from '../types.js';

/**
 * Identifies the evaluation in progress: a fresh number for every `evaluate`/`evaluateAll` call
 * (never reused), restored when a nested call (say, from a custom strategy) returns. `stableUntil`
 * is the epoch ms until which the same context would get the same results: lowered to a date a
 * clock-based constraint will cross, and to 0 by a random draw or a custom strategy.
 */
const evaluation = { stamp: 0, stableUntil: Number.POSITIVE_INFINITY };
let lastStamp = 0;

export function beginEvaluation(): number {
  const previous = evaluation.stamp;
  evaluation.stamp = ++lastStamp;
  evaluation.stableUntil = Number.POSITIVE_INFINITY;
  return previous;
}

export function endEvaluation(previous: number): void {
  evaluation.stamp = previous;
}

/** The results of the evaluation in progress hold only while the clock reads before `ms`. */
export function holdsUntil(ms: number): void {
  if (ms < evaluation.stableUntil) evaluation.stableUntil = ms;
}

/** The evaluation in progress drew on something besides the snapshot and context. */
export function markVaries(): void {
  evaluation.stableUntil = 0;
}

/** See `evaluation.stableUntil`; read before `endEvaluation`. */
export function evaluationStableUntil(): number {
  return evaluation.stableUntil;
}

// The clock is read once per evaluation: every flag of one call sees the same "now" (and
// `Date.now()` returns a boxed number, so reading it per constraint would allocate).
const clock = { stamp: -1, nowMs: 0 };

/** Milliseconds since the epoch at the start of the evaluation in progress. */
export function evaluationNowMs(): number {
  if (clock.stamp !== evaluation.stamp) {
    clock.nowMs = Date.now();
    clock.stamp = evaluation.stamp;
  }
  return clock.nowMs;
}

/**
 * The constraints of one snapshot, each compiled once and answered at most once per evaluation.
 * Real payloads repeat constraints (`environment IN [production]`, shared segments, user lists)
 * across many flags; identical ones get one id, and an answer is kept per id, stamped with the
 * evaluation that computed it. Ids are small integers and answers live in typed arrays, so checking
 * a strategy's constraints is a loop over a small array of ids, and each distinct constraint's test
 * runs at most once per evaluation whatever the number of flags that use it.
 */
export class SharedChecks {
  private readonly ids = new Map<string, number>();
  private readonly tests: Predicate[] = [];
  private stamps = new Float64Array(0);
  private answers = new Uint8Array(0);
  /** The check that never passes (malformed constraints, unknown segments). */
  readonly never: number = this.add('never', NEVER);

  /** The id of the check with this normalised key, if it was added already. */
  find(key: string): number | undefined {
    return this.ids.get(key);
  }

  add(key: string, test: Predicate): number {
    const id = this.tests.length;
    this.tests.push(test);
    this.ids.set(key, id);
    return id;
  }

  /** Sizes the answer arrays once every check is known. */
  seal(): void {
    this.stamps = new Float64Array(this.tests.length);
    this.answers = new Uint8Array(this.tests.length);
  }

  /** Whether every check of `ids` passes for the context. */
  all(ids: readonly number[], context: Context): boolean {
    const stamp = evaluation.stamp;
    const stamps = this.stamps;
    const answers = this.answers;
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i]!;
      if (stamps[id] !== stamp) {
        answers[id] = this.tests[id]!(context) ? 1 : 0;
        stamps[id] = stamp;
      }
      if (answers[id] === 0) return false;
    }
    return true;
  }
}
