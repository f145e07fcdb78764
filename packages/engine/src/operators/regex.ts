import { compileRegex } from '../parse/regex.js';
import { type OperatorBuilder, singleValue } from './operator.js';

/** REGEX: an RE2 pattern translated once into a RegExp; it matches anywhere unless anchored. */
export const regexMatch: OperatorBuilder = (spec, read, reporter) => {
  const pattern = singleValue(spec, reporter);
  if (pattern === undefined) return undefined;
  const compiled = compileRegex(pattern, spec.caseInsensitive);
  if ('error' in compiled) {
    reporter.warn(`REGEX constraint on "${spec.contextName}": ${compiled.error}`);
    return undefined;
  }
  const regex = compiled.regex;
  return (context) => {
    const value = read(context);
    return value !== undefined && regex.test(value);
  };
};
