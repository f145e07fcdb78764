import { RE2JS } from 're2js';
import { linearNativeRegex } from '../parse/regex.js';
import { type OperatorBuilder, singleValue, type ValueTest } from './operator.js';

/** The test of one compiled pattern; a function of its own so that it keeps only `regex` alive. */
function testing(regex: { test(value: string): boolean }): ValueTest {
  return (value) => value !== undefined && regex.test(value);
}

/**
 * REGEX: an RE2 pattern, compiled once per snapshot; it matches anywhere unless anchored.
 * re2js (the RE2 port unleash-client uses, so syntax and answers are the SDK's) decides whether
 * the pattern is valid and runs it in time linear in the input, whatever the pattern: a
 * backtracking RegExp would let one pattern such as `^([a-z0-9]+\.?)*@example\.com$` and a
 * 30-character value stall the process for seconds. Patterns proven to run in linear time natively
 * with the same answers (parse/regex.ts; most real ones) use a native RegExp, ten times faster.
 */
export const regexMatch: OperatorBuilder = (spec, reporter) => {
  const pattern = singleValue(spec, reporter);
  if (pattern === undefined) return undefined;
  let re2: RE2JS;
  try {
    re2 = RE2JS.compile(pattern, spec.caseInsensitive ? RE2JS.CASE_INSENSITIVE : 0);
  } catch (error) {
    reporter.warn(`REGEX constraint on "${spec.contextName}": ${(error as Error).message}`);
    return undefined;
  }
  return testing(linearNativeRegex(pattern, spec.caseInsensitive) ?? re2);
};
