import type { EvaluationState } from '../compile/evaluation-state.js';
import type { Predicate } from '../operators/operator.js';
import type { Reporter } from '../warnings.js';

/** What a built-in strategy needs besides its parameters, prepared once per flag. */
export interface StrategyEnvironment {
  readonly featureName: string;
  /** `groupId` parameter, or the flag name when it has none; with the hashing colon appended. */
  readonly groupPrefix: string;
  readonly random: () => number;
  readonly hostname: string | undefined;
  /** Context values longer than this are not compared: a strategy reading one does not match. */
  readonly maxValueLength: number;
  readonly reporter: Reporter;
  /** The snapshot's evaluation state (and its parse caches). */
  readonly evaluation: EvaluationState;
}

/** Parameters as the payload has them: strings, sometimes numbers or booleans. */
export type Parameters = Readonly<Record<string, unknown>>;

export type StrategyBuilder = (
  parameters: Parameters,
  environment: StrategyEnvironment,
) => Predicate;

/** Matches every context. Compile steps compare against it to skip the call and report STATIC. */
export const ALWAYS: Predicate = () => true;
export const NEVER: Predicate = () => false;

/** A parameter as text, or undefined when absent. */
export function textParameter(parameters: Parameters, name: string): string | undefined {
  const value = parameters[name];
  return value === undefined || value === null ? undefined : String(value);
}

/** A list parameter (`userIds`, `IPs`, `hostNames`): comma separated, like the SDKs split it. */
export function listParameter(parameters: Parameters, name: string): string[] {
  const text = textParameter(parameters, name);
  return text ? text.split(/\s*,\s*/) : [];
}

/** A bucket in 1..100 from the random source, for `random` stickiness. */
export function randomBucket(random: () => number): number {
  return Math.floor(random() * 100) + 1;
}
