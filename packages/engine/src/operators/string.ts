import type { OperatorBuilder } from './operator.js';

type StringTest = (value: string, candidate: string) => boolean;

const STRING_TESTS: Readonly<Record<string, StringTest>> = {
  STR_STARTS_WITH: (value, candidate) => value.startsWith(candidate),
  STR_ENDS_WITH: (value, candidate) => value.endsWith(candidate),
  STR_CONTAINS: (value, candidate) => value.includes(candidate),
};

// Many flags lowercase the same context value in one evaluation: remember the last one.
let lastRaw = '';
let lastLower = '';

function lowerCase(raw: string): string {
  if (raw !== lastRaw) {
    lastLower = raw.toLowerCase();
    lastRaw = raw;
  }
  return lastLower;
}

/** STR_*: any value matches; `caseInsensitive` compares lowercase (values lowered once). */
export const stringMatch: OperatorBuilder = (spec) => {
  const test = STRING_TESTS[spec.operator]!;
  const lower = spec.caseInsensitive;
  const candidates = lower ? spec.values.map((value) => value.toLowerCase()) : spec.values;
  return (raw) => {
    if (raw === undefined) return false;
    const value = lower ? lowerCase(raw) : raw;
    for (const candidate of candidates) if (test(value, candidate)) return true;
    return false;
  };
};
