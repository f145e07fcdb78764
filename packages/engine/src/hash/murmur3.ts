/**
 * MurmurHash3, x86 32-bit variant, written out by hand: it runs for every rollout and variant
 * decision, so it must not allocate (no `${groupId}:${id}` string, no byte buffer).
 *
 * Bytes: like the Node SDK (`murmurhash3js`), each UTF-16 code unit contributes its LOW BYTE
 * only, and the length is the number of code units. ASCII identifiers hash exactly as in every
 * Unleash SDK; for non-ASCII identifiers this matches the Node SDK (and so Unleash Proxy), not
 * the engines that hash UTF-8 bytes. See the package README.
 */

const C1 = 0xcc9e2d51;
const C2 = 0x1b873593;

/** The byte at `index` of the virtual string `prefix + suffix` (low byte of the code unit). */
function byteAt(prefix: string, suffix: string, index: number): number {
  const prefixLength = prefix.length;
  return (
    (index < prefixLength ? prefix.charCodeAt(index) : suffix.charCodeAt(index - prefixLength)) &
    0xff
  );
}

function mixBlock(k: number): number {
  let k1 = Math.imul(k, C1);
  k1 = (k1 << 15) | (k1 >>> 17);
  return Math.imul(k1, C2);
}

/** The unsigned 32-bit hash of `prefix + suffix`, without building that string. */
export function murmur3Pair(prefix: string, suffix: string, seed: number): number {
  const length = prefix.length + suffix.length;
  const blocksEnd = length - (length & 3);
  let h1 = seed | 0;
  let i = 0;
  for (; i < blocksEnd; i += 4) {
    const k1 =
      byteAt(prefix, suffix, i) |
      (byteAt(prefix, suffix, i + 1) << 8) |
      (byteAt(prefix, suffix, i + 2) << 16) |
      (byteAt(prefix, suffix, i + 3) << 24);
    h1 ^= mixBlock(k1);
    h1 = (h1 << 13) | (h1 >>> 19);
    h1 = (Math.imul(h1, 5) + 0xe6546b64) | 0;
  }
  const rest = length & 3;
  if (rest > 0) {
    let tail = byteAt(prefix, suffix, i);
    if (rest > 1) tail |= byteAt(prefix, suffix, i + 1) << 8;
    if (rest > 2) tail |= byteAt(prefix, suffix, i + 2) << 16;
    h1 ^= mixBlock(tail);
  }
  h1 ^= length;
  h1 ^= h1 >>> 16;
  h1 = Math.imul(h1, 0x85ebca6b);
  h1 ^= h1 >>> 13;
  h1 = Math.imul(h1, 0xc2b2ae35);
  h1 ^= h1 >>> 16;
  return h1 >>> 0;
}

/** The unsigned 32-bit hash of `key`. */
export function murmur3(key: string, seed = 0): number {
  return murmur3Pair('', key, seed);
}

/** Seed of rollout decisions (flexibleRollout, gradualRollout*), per the client specification. */
export const ROLLOUT_SEED = 0;
/** Seed of variant selection, per the client specification. */
export const VARIANT_SEED = 86028157;

/**
 * `(hash(groupId + ':' + id) % modulus) + 1`: a stable bucket in 1..modulus. `groupPrefix` is
 * the group id with the colon already appended, prepared once at compile time.
 */
export function normalizedValue(
  groupPrefix: string,
  id: string,
  modulus: number,
  seed: number,
): number {
  return (murmur3Pair(groupPrefix, id, seed) % modulus) + 1;
}
