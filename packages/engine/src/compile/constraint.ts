import { contextReader } from '../context.js';
import { OPERATORS } from '../operators/index.js';
import type { ConstraintSpec } from '../operators/operator.js';
import { describe, type Reporter } from '../warnings.js';
import type { SharedChecks } from './checks.js';

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

/** One constraint as a shared check id; malformed ones never pass and are reported once, here. */
export function compileConstraint(raw: unknown, reporter: Reporter, checks: SharedChecks): number {
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
  const test = build(spec, contextReader(contextName), reporter);
  if (test === undefined) return checks.never;
  return checks.add(key, inverted ? (context) => !test(context) : test);
}

/** A list of constraints (all must pass) as check ids; not a list → a check that never passes. */
export function compileConstraints(
  raw: unknown,
  reporter: Reporter,
  checks: SharedChecks,
  where: string,
): number[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) {
    reporter.warn(`${where}: "constraints" is ${describe(raw)}, not a list`);
    return [checks.never];
  }
  return raw.map((constraint) => compileConstraint(constraint, reporter, checks));
}
