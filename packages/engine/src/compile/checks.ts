import type { Predicate } from '../operators/operator.js';
import { NEVER } from '../strategies/strategy.js';
import type { Context } from '../types.js';
import type { EvaluationState } from './evaluation-state.js';

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

  /** @param evaluation the snapshot's evaluation state, whose stamp answers are kept under. */
  constructor(private readonly evaluation: EvaluationState) {}

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
    const stamp = this.evaluation.stamp;
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
