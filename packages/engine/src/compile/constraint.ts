import { contextReader } from '../context.js';
import { OPERATORS } from '../operators/index.js';
import type { ConstraintSpec, Predicate } from '../operators/operator.js';
import { NEVER } from '../strategies/strategy.js';
import { describe, type Reporter } from '../warnings.js';

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

/** One constraint as a predicate; malformed ones never match and are reported once, here. */
export function compileConstraint(raw: unknown, reporter: Reporter): Predicate {
  if (typeof raw !== 'object' || raw === null) {
    reporter.warn(`constraint is ${describe(raw)}`);
    return NEVER;
  }
  const constraint = raw as Record<string, unknown>;
  const { contextName, operator } = constraint;
  if (typeof contextName !== 'string' || typeof operator !== 'string') {
    reporter.warn('constraint lacks "contextName" or "operator"');
    return NEVER;
  }
  const build = OPERATORS.get(operator);
  if (build === undefined) {
    reporter.warn(`unknown constraint operator "${operator}" on "${contextName}"`);
    return NEVER;
  }
  const value = constraint.value;
  const spec: ConstraintSpec = {
    contextName,
    operator,
    values: stringList(constraint.values, reporter, `${operator} constraint on "${contextName}"`),
    value: typeof value === 'string' || typeof value === 'number' ? String(value) : undefined,
    caseInsensitive: constraint.caseInsensitive === true,
  };
  const test = build(spec, contextReader(contextName), reporter) ?? NEVER;
  if (constraint.inverted !== true) return test;
  return (context) => !test(context);
}

/** A list of constraints (all must match); not a list → never matches. */
export function compileConstraints(raw: unknown, reporter: Reporter, where: string): Predicate[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) {
    reporter.warn(`${where}: "constraints" is ${describe(raw)}, not a list`);
    return [NEVER];
  }
  return raw.map((constraint) => compileConstraint(constraint, reporter));
}

/** `first && ... && last`, with the common short lists unrolled. */
export function allOf(tests: readonly Predicate[], last: Predicate): Predicate {
  switch (tests.length) {
    case 0:
      return last;
    case 1: {
      const a = tests[0]!;
      return (context) => a(context) && last(context);
    }
    case 2: {
      const a = tests[0]!;
      const b = tests[1]!;
      return (context) => a(context) && b(context) && last(context);
    }
    default:
      return (context) => {
        for (const test of tests) if (!test(context)) return false;
        return last(context);
      };
  }
}
