import { compareSemver, parseSemver, type SemVer } from '../parse/semver.js';
import { type OperatorBuilder, singleValue } from './operator.js';
import { orderTest } from './order.js';

// Context versions repeat a lot (one per app release), so parsed ones are kept in a small
// bounded cache instead of being parsed for every flag and request. `null` marks invalid input.
const CACHE_LIMIT = 1024;
const cache = new Map<string, SemVer | null>();

function contextVersion(text: string): SemVer | null {
  let parsed = cache.get(text);
  if (parsed === undefined) {
    // The specification rejects a leading "v" on the context side only.
    parsed = text.startsWith('v') ? null : (parseSemver(text) ?? null);
    if (cache.size >= CACHE_LIMIT) cache.clear();
    cache.set(text, parsed);
  }
  return parsed;
}

/** SEMVER_*: semver.org precedence, pre-releases included. */
export const semverCompare: OperatorBuilder = (spec, reporter) => {
  const text = singleValue(spec, reporter);
  if (text === undefined) return undefined;
  const target = parseSemver(text);
  if (target === undefined) {
    reporter.warn(
      `${spec.operator} constraint on "${spec.contextName}": "${text}" is not a semantic version`,
    );
    return undefined;
  }
  const test = orderTest(spec.operator);
  return (raw) => {
    if (!raw) return false;
    const version = contextVersion(raw);
    return version !== null && test(compareSemver(version, target));
  };
};
