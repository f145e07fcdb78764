/**
 * Semantic versions (semver.org 2.0.0), parsed by hand at compile time for constraint values and
 * through a small cache for context values. Matches the `semver` package the Node SDK uses in strict
 * mode: surrounding white space is ignored, a leading `v` is accepted (the operator rejects it on
 * the context side, as the specification wants), numeric identifiers have no leading zeros, build
 * metadata is parsed and then ignored by comparisons.
 */

export interface SemVer {
  readonly major: number;
  readonly minor: number;
  readonly patch: number;
  /** Pre-release identifiers: numbers for numeric ones, strings otherwise; empty for a release. */
  readonly prerelease: readonly (number | string)[];
}

const MAX_LENGTH = 256;
const NUMERIC = /^(?:0|[1-9]\d*)$/;
const PRERELEASE_ID = /^(?:0|[1-9]\d*|\d*[a-zA-Z-][a-zA-Z0-9-]*)$/;
const BUILD_ID = /^[0-9A-Za-z-]+$/;

function numeric(part: string | undefined): number | undefined {
  if (part === undefined || !NUMERIC.test(part)) return undefined;
  const value = Number(part);
  return value <= Number.MAX_SAFE_INTEGER ? value : undefined;
}

export function parseSemver(input: string): SemVer | undefined {
  if (input.length > MAX_LENGTH) return undefined;
  let text = input.trim();
  if (text.startsWith('v')) text = text.slice(1);
  const plus = text.indexOf('+');
  if (plus !== -1) {
    if (
      !text
        .slice(plus + 1)
        .split('.')
        .every((id) => BUILD_ID.test(id))
    )
      return undefined;
    text = text.slice(0, plus);
  }
  const dash = text.indexOf('-');
  const core = dash === -1 ? text : text.slice(0, dash);
  const parts = core.split('.');
  if (parts.length !== 3) return undefined;
  const major = numeric(parts[0]);
  const minor = numeric(parts[1]);
  const patch = numeric(parts[2]);
  if (major === undefined || minor === undefined || patch === undefined) return undefined;
  if (dash === -1) return { major, minor, patch, prerelease: [] };
  const prerelease: (number | string)[] = [];
  for (const id of text.slice(dash + 1).split('.')) {
    if (!PRERELEASE_ID.test(id)) return undefined;
    prerelease.push(NUMERIC.test(id) && Number(id) <= Number.MAX_SAFE_INTEGER ? Number(id) : id);
  }
  return { major, minor, patch, prerelease };
}

function compareIdentifiers(a: number | string, b: number | string): number {
  const aNumeric = typeof a === 'number';
  const bNumeric = typeof b === 'number';
  // Numeric identifiers always have lower precedence than alphanumeric ones (semver 11.4.3).
  if (aNumeric !== bNumeric) return aNumeric ? -1 : 1;
  if (a === b) return 0;
  return a < b ? -1 : 1;
}

/** Negative, zero or positive as `a` has lower, equal or higher precedence than `b`. */
export function compareSemver(a: SemVer, b: SemVer): number {
  if (a.major !== b.major) return a.major - b.major;
  if (a.minor !== b.minor) return a.minor - b.minor;
  if (a.patch !== b.patch) return a.patch - b.patch;
  const aPre = a.prerelease;
  const bPre = b.prerelease;
  // A release ranks above any of its pre-releases (semver 11.3).
  if (aPre.length === 0 || bPre.length === 0) return bPre.length - aPre.length;
  const shared = Math.min(aPre.length, bPre.length);
  for (let i = 0; i < shared; i++) {
    const order = compareIdentifiers(aPre[i]!, bPre[i]!);
    if (order !== 0) return order;
  }
  return aPre.length - bPre.length;
}
