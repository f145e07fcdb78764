import { contextReader } from '../context.js';
import { OPERATORS } from '../operators/index.js';
import type { ConstraintSpec, Predicate, ValueTest } from '../operators/operator.js';
import { describe, type Reporter } from '../warnings.js';
import type { SharedChecks } from './checks.js';
import type { EvaluationState } from './evaluation-state.js';

function stringList(raw: unknown, reporter: Reporter, where: string): string[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) {
    reporter.warn(`${where}: "values" is ${describe(raw)}, not a list`);
    return [];
  }
  const out: string[] = [];
  for (const item of raw) {
    // The SDKs drop empty entries and trim the others.
    if (typeof item === 'string' || typeof item === 'number') {
      const text = String(item).trim();
      if (item !== '') out.push(text);
    }
  }
  return out;
}

/**
 * What compiling constraints needs: where to report, the snapshot's checks and evaluation state,
 * the value limit.
 */
export interface ConstraintEnvironment {
  readonly reporter: Reporter;
  readonly checks: SharedChecks;
  readonly evaluation: EvaluationState;
  /** `CompileOptions.maxContextValueLength`. */
  readonly maxValueLength: number;
}

/**
 * Date operators compare the evaluation's time (or `currentTime`), never a context string. A
 * constant: typed read-only, nothing adds to it after the module loads.
 */
export const CLOCK_OPERATORS: ReadonlySet<string> = new Set(['DATE_AFTER', 'DATE_BEFORE']);

/**
 * The check of a constraint on `contextName`: its field read once, then the operator's answer,
 * inverted if asked. A value over the limit is not compared at all: the constraint does not match,
 * whatever the operator (NOT_IN, or `inverted`, would say yes to a value it cannot see).
 */
function fieldCheck(
  contextName: string,
  test: ValueTest,
  inverted: boolean,
  maxValueLength: number,
): Predicate {
  const read = contextReader(contextName);
  return (context) => {
    const value = read(context);
    if (value !== undefined && value.length > maxValueLength) return false;
    return test(value, context) !== inverted;
  };
}

/** One constraint as a shared check id; malformed ones never pass and are reported once, here. */
export function compileConstraint(raw: unknown, environment: ConstraintEnvironment): number {
  const { reporter, checks } = environment;
  if (typeof raw !== 'object' || raw === null) {
    reporter.warn(`constraint is ${describe(raw)}`);
    return checks.never;
  }
  const constraint = raw as Record<string, unknown>;
  const { contextName, operator } = constraint;
  if (typeof contextName !== 'string' || typeof operator !== 'string') {
    reporter.warn('constraint lacks "contextName" or "operator"');
    return checks.never;
  }
  const build = OPERATORS.get(operator);
  if (build === undefined) {
    reporter.warn(`unknown constraint operator "${operator}" on "${contextName}"`);
    return checks.never;
  }
  const value = constraint.value;
  const spec: ConstraintSpec = {
    contextName,
    operator,
    values: stringList(constraint.values, reporter, `${operator} constraint on "${contextName}"`),
    value: typeof value === 'string' || typeof value === 'number' ? String(value) : undefined,
    caseInsensitive: constraint.caseInsensitive === true,
  };
  const inverted = constraint.inverted === true;
  const key = JSON.stringify([spec, inverted]);
  const known = checks.find(key);
  if (known !== undefined) return known;
  const test = build(spec, reporter, environment.evaluation);
  if (test === undefined) return checks.never;
  if (CLOCK_OPERATORS.has(operator)) {
    return checks.add(key, (context) => test(undefined, context) !== inverted);
  }
  return checks.add(key, fieldCheck(contextName, test, inverted, environment.maxValueLength));
}

/** A list of constraints (all must pass) as check ids; not a list → a check that never passes. */
export function compileConstraints(
  raw: unknown,
  environment: ConstraintEnvironment,
  where: string,
): number[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) {
    environment.reporter.warn(`${where}: "constraints" is ${describe(raw)}, not a list`);
    return [environment.checks.never];
  }
  return raw.map((constraint) => compileConstraint(constraint, environment));
}
