import type { OperatorBuilder } from './operator.js';

type StringTest = (value: string, candidate: string) => boolean;

// A constant lookup table (frozen), not state: nothing writes it after the module loads.
const STRING_TESTS: Readonly<Record<string, StringTest>> = Object.freeze({
  STR_STARTS_WITH: (value, candidate) => value.startsWith(candidate),
  STR_ENDS_WITH: (value, candidate) => value.endsWith(candidate),
  STR_CONTAINS: (value, candidate) => value.includes(candidate),
});

/**
 * Lowercases context values. Many flags lowercase the same value in one evaluation, so the last
 * one is kept; one instance per snapshot (its evaluation state).
 */
export class LowerCased {
  private raw = '';
  private lower = '';

  of(raw: string): string {
    if (raw !== this.raw) {
      this.lower = raw.toLowerCase();
      this.raw = raw;
    }
    return this.lower;
  }
}

/** STR_*: any value matches; `caseInsensitive` compares lowercase (values lowered once). */
export const stringMatch: OperatorBuilder = (spec, _reporter, evaluation) => {
  const test = STRING_TESTS[spec.operator]!;
  const lower = spec.caseInsensitive;
  const candidates = lower ? spec.values.map((value) => value.toLowerCase()) : spec.values;
  const lowerCased = evaluation.lowerCased;
  return (raw) => {
    if (raw === undefined) return false;
    const value = lower ? lowerCased.of(raw) : raw;
    for (const candidate of candidates) if (test(value, candidate)) return true;
    return false;
  };
};
