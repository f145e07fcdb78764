import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

/** The part of `semver` used here (it has no types of its own). */
interface Semver {
  minVersion(range: string): { version: string } | null;
  satisfies(version: string, range: string): boolean;
}
const semver = createRequire(import.meta.url)('semver') as Semver;

interface LockEntry {
  readonly version?: string;
  readonly dev?: boolean;
  readonly engines?: Readonly<Record<string, string>> | readonly string[];
}

/**
 * The packages a lockfile installs that refuse the oldest Node.js `range` accepts (what npm
 * reports as `EBADENGINE` on that Node.js), as `path@version needs node <their range>`;
 * with `production`, only those a production install (`--omit=dev`) installs.
 */
export function refusingNode(lockfile: string, range: string, production = false): string[] {
  const oldest = semver.minVersion(range)?.version;
  if (oldest === undefined) throw new Error(`${range} accepts no Node.js`);
  const lock = JSON.parse(readFileSync(lockfile, 'utf8')) as {
    packages: Record<string, LockEntry>;
  };
  const refusing: string[] = [];
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (path === '' || (production && entry.dev)) continue;
    // An array `engines` is an old, ignored form.
    const node = Array.isArray(entry.engines)
      ? undefined
      : (entry.engines as { node?: string })?.node;
    if (node !== undefined && !semver.satisfies(oldest, node))
      refusing.push(`${path}@${entry.version} needs node ${node}`);
  }
  return refusing;
}
