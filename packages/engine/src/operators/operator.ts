import type { EvaluationState } from '../compile/evaluation-state.js';
import type { Context } from '../types.js';
import type { Reporter } from '../warnings.js';

/** A compiled test of a context (a strategy's, or a constraint's with its field read). */
export type Predicate = (context: Context) => boolean;

/**
 * A compiled operator: the answer for the value of the constraint's field (`undefined` when the
 * context lacks it). The constraint reads the value once; `context` serves operators that look at
 * something else (dates compare `currentTime` or the clock).
 */
export type ValueTest = (value: string | undefined, context: Context) => boolean;

/** A constraint after its fields were checked: lists are arrays of strings, values trimmed. */
export interface ConstraintSpec {
  readonly contextName: string;
  readonly operator: string;
  /** `values`, without empty entries, each trimmed (the SDKs' reading). */
  readonly values: readonly string[];
  readonly value: string | undefined;
  readonly caseInsensitive: boolean;
}

/**
 * Builds the test of one operator family. Returns undefined when the constraint cannot match
 * (malformed value); the builder has reported why. `evaluation` is the snapshot's evaluation state
 * (its time, and how long its answers hold).
 */
export type OperatorBuilder = (
  spec: ConstraintSpec,
  reporter: Reporter,
  evaluation: EvaluationState,
) => ValueTest | undefined;

/** The single value of NUM_*, DATE_* and SEMVER_* constraints; some upstreams send it in `values`. */
export function singleValue(spec: ConstraintSpec, reporter: Reporter): string | undefined {
  const value = spec.value ?? spec.values[0];
  if (value === undefined)
    reporter.warn(`${spec.operator} constraint on "${spec.contextName}" has no value`);
  return value;
}
