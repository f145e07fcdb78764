import { timingSafeEqual } from 'node:crypto';

/**
 * Checks a presented key against the configured ones in constant time per candidate. Keys are
 * grouped by byte length at start, so a key of a length no configured key has is rejected without
 * comparing anything (that leaks only the length, which a constant-time compare leaks anyway).
 * Keys are never logged.
 */
export class KeyChecker {
  private readonly byLength = new Map<number, Buffer[]>();

  constructor(keys: Iterable<string>) {
    for (const key of keys) {
      const bytes = Buffer.from(key, 'utf8');
      if (bytes.length === 0) continue;
      const group = this.byLength.get(bytes.length);
      if (group === undefined) this.byLength.set(bytes.length, [bytes]);
      else group.push(bytes);
    }
  }

  accepts(presented: string | string[] | undefined): boolean {
    if (typeof presented !== 'string' || presented === '') return false;
    const bytes = Buffer.from(presented, 'utf8');
    const group = this.byLength.get(bytes.length);
    if (group === undefined) return false;
    let match = false;
    // Compare against every key of that length, so timing does not reveal which one matched.
    for (const key of group) if (timingSafeEqual(key, bytes)) match = true;
    return match;
  }
}
