import { compareSemver, parseSemver, type SemVer } from '../parse/semver.js';
import { type OperatorBuilder, singleValue } from './operator.js';
import { orderTest } from './order.js';

/** Distinct context versions kept by one snapshot before the cache starts afresh. */
const CACHE_LIMIT = 1024;

/**
 * Context versions, parsed. They repeat a lot (one per app release), so parsed ones are kept in a
 * small bounded cache instead of being parsed for every flag and request; one per snapshot (its
 * evaluation state).
 */
export class ContextVersions {
  /** `null` marks invalid input. */
  private readonly cache = new Map<string, SemVer | null>();

  /** The version `text` names, or null when it is none. */
  parse(text: string): SemVer | null {
    const cache = this.cache;
    let parsed = cache.get(text);
    if (parsed === undefined) {
      // The specification rejects a leading "v" on the context side only.
      parsed = text.startsWith('v') ? null : (parseSemver(text) ?? null);
      if (cache.size >= CACHE_LIMIT) cache.clear();
      cache.set(text, parsed);
    }
    return parsed;
  }
}

/** SEMVER_*: semver.org precedence, pre-releases included. */
export const semverCompare: OperatorBuilder = (spec, reporter, evaluation) => {
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
  const versions = evaluation.versions;
  return (raw) => {
    if (!raw) return false;
    const version = versions.parse(raw);
    return version !== null && test(compareSemver(version, target));
  };
};
