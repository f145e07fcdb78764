/** What a usage entry refused for lack of room is: each a label of the dropped-entries counter. */
export const DROPPED_KINDS = ['flag', 'variant', 'registration', 'impact'] as const;
export type DroppedKind = (typeof DROPPED_KINDS)[number];

/**
 * Estimated bytes of a kept string: V8 stores a string in one or two bytes per character, and a
 * map entry and object header come on top (`ENTRY_BYTES`). An estimate, on the high side, so the
 * bound holds.
 */
export function stringBytes(text: string): number {
  return 2 * text.length;
}

/** Bytes of one map entry or small object beside its strings (keys, values, headers, hash slots). */
export const ENTRY_BYTES = 64;

/**
 * The memory all environments' pending usage (counts, variant names, registrations, impact
 * metrics not yet sent upstream) may take, estimated in bytes (issue 40). An entry is kept only
 * if its bytes fit (`reserve`); once at the bound, new entries are dropped and counted by kind,
 * while counts of entries already kept still add up. Counts taken for a send stay charged until
 * the send is over (`release`), so a send in flight counts too.
 */
export class PendingBudget {
  /** Estimated bytes of everything pending now. */
  bytes = 0;
  /** Entries dropped for lack of room since start, by kind (a Prometheus counter). */
  readonly dropped: Record<DroppedKind, number> = {
    flag: 0,
    variant: 0,
    registration: 0,
    impact: 0,
  };

  constructor(readonly maxBytes: number) {}

  /** Charges `bytes` for a new entry of `kind`; false (and the drop counted) when they do not fit. */
  reserve(bytes: number, kind: DroppedKind): boolean {
    if (this.bytes + bytes > this.maxBytes) {
      this.dropped[kind]++;
      return false;
    }
    this.bytes += bytes;
    return true;
  }

  /** Charges `bytes` that must be kept whatever the bound (the proxy's own evaluation counts). */
  charge(bytes: number): void {
    this.bytes += bytes;
  }

  /** Counts entries dropped for another bound (a flag's variant names beyond the schema's). */
  drop(kind: DroppedKind, entries = 1): void {
    this.dropped[kind] += entries;
  }

  release(bytes: number): void {
    this.bytes = Math.max(0, this.bytes - bytes);
  }
}
