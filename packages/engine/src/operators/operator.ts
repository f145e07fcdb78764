import type { ContextReader } from '../context.js';
import type { Context } from '../types.js';
import type { Reporter } from '../warnings.js';

/** A compiled constraint test. */
export type Predicate = (context: Context) => boolean;

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
 * (malformed value); the builder has reported why.
 */
export type OperatorBuilder = (
  spec: ConstraintSpec,
  read: ContextReader,
  reporter: Reporter,
) => Predicate | undefined;

/** The single value of NUM_*, DATE_* and SEMVER_* constraints; some upstreams send it in `values`. */
export function singleValue(spec: ConstraintSpec, reporter: Reporter): string | undefined {
  const value = spec.value ?? spec.values[0];
  if (value === undefined)
    reporter.warn(`${spec.operator} constraint on "${spec.contextName}" has no value`);
  return value;
}
