import { timingSafeEqual } from 'node:crypto';

/**
 * Configured keys and what each grants, looked up in constant time per candidate. Keys are grouped
 * by byte length at start, so a key of a length no configured key has is rejected without
 * comparing anything (that leaks only the length, which a constant-time compare leaks anyway).
 * Keys are never logged. A key configured twice keeps its first grant.
 */
export class KeyTable<Grant> {
  private readonly byLength = new Map<number, Array<{ bytes: Buffer; grant: Grant }>>();

  constructor(entries: Iterable<readonly [string, Grant]>) {
    const seen = new Set<string>();
    for (const [key, grant] of entries) {
      const bytes = Buffer.from(key, 'utf8');
      if (bytes.length === 0 || seen.has(key)) continue;
      seen.add(key);
      const group = this.byLength.get(bytes.length);
      if (group === undefined) this.byLength.set(bytes.length, [{ bytes, grant }]);
      else group.push({ bytes, grant });
    }
  }

  get empty(): boolean {
    return this.byLength.size === 0;
  }

  /** The grant of `presented`, or `undefined` when it is no configured key. */
  find(presented: string | string[] | undefined): Grant | undefined {
    if (typeof presented !== 'string' || presented === '') return undefined;
    const bytes = Buffer.from(presented, 'utf8');
    const group = this.byLength.get(bytes.length);
    if (group === undefined) return undefined;
    let found: Grant | undefined;
    // Compare against every key of that length, so timing does not reveal which one matched.
    for (const entry of group) if (timingSafeEqual(entry.bytes, bytes)) found ??= entry.grant;
    return found;
  }
}

/** A set of keys checked as `KeyTable` finds them: whether a presented key is one of them. */
export class KeyChecker {
  private readonly table: KeyTable<true>;

  constructor(keys: Iterable<string>) {
    this.table = new KeyTable([...keys].map((key) => [key, true] as const));
  }

  accepts(presented: string | string[] | undefined): boolean {
    return this.table.find(presented) === true;
  }
}
