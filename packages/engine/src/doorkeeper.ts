/**
 * Remembers which keys were seen recently, so that a cache admits a key only on its second
 * sighting (TinyLFU's "doorkeeper"): browsers each send a context of their own (a new `sessionId`
 * per browser), and one-off keys would fill a cache and push out what is asked for again (the
 * proxy's answer cache, `ResultMemo`). A key is remembered as a 32-bit hash in a slot chosen by
 * that hash, until another key takes the slot: no key strings are kept, the memory is fixed, and a
 * false "seen" (two keys with one hash) only admits a key early.
 */
export class Doorkeeper {
  private readonly slots: Int32Array;
  private readonly mask: number;

  /** `slots`: rounded down to a power of two. */
  constructor(slots: number) {
    const size = 2 ** Math.floor(Math.log2(Math.max(2, slots)));
    this.slots = new Int32Array(size);
    this.mask = size - 1;
  }

  /** Memory the slots take. */
  get bytes(): number {
    return this.slots.byteLength;
  }

  /** Whether `key` was seen before (and its slot kept it since); remembers it either way. */
  admit(key: string): boolean {
    return this.admitHash(finishHash(hashText(HASH_START, key)));
  }

  /** `admit` for a key given by its hash (`hashText` over its parts, then `finishHash`). */
  admitHash(hash: number): boolean {
    const slot = hash & this.mask;
    // 0 marks an empty slot; a hash of 0 is remembered as 1.
    const mark = hash === 0 ? 1 : hash;
    if (this.slots[slot] === mark) return true;
    this.slots[slot] = mark;
    return false;
  }
}

/** Where a key's hash starts (FNV-1a's offset basis). */
export const HASH_START = 0x811c9dc5;

/** FNV-1a over `text`'s UTF-16 code units, on from `hash`: a key hashed part by part, unjoined. */
export function hashText(hash: number, text: string): number {
  let h = hash;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h;
}

/** The final avalanche of a key's hash (murmur3's fmix32). */
export function finishHash(hash: number): number {
  let h = hash ^ (hash >>> 16);
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}
