/**
 * MurmurHash3, x86 32-bit variant, written out by hand: it runs for every rollout and variant
 * decision, so it must not allocate (no `${groupId}:${id}` string, no byte buffer), and the
 * constant `groupId:` part of the key is absorbed once at compile time (`prepareHash`).
 *
 * Bytes: like the Node SDK (`murmurhash3js`), each UTF-16 code unit contributes its LOW BYTE
 * only, and the length is the number of code units. ASCII identifiers hash exactly as in every
 * Unleash SDK; for non-ASCII identifiers this matches the Node SDK (and so Unleash Proxy), not
 * the engines that hash UTF-8 bytes. See the package README.
 */

const C1 = 0xcc9e2d51;
const C2 = 0x1b873593;

/** The hash state after a key prefix: whole blocks mixed, up to three bytes pending. */
export interface HashPrefix {
  readonly h1: number;
  readonly pending: number;
  readonly pendingBits: number;
  readonly length: number;
}

function scramble(k: number): number {
  const k1 = Math.imul(k, C1);
  return Math.imul((k1 << 15) | (k1 >>> 17), C2);
}

function mixBlock(h1: number, block: number): number {
  const h = h1 ^ scramble(block);
  return (Math.imul((h << 13) | (h >>> 19), 5) + 0xe6546b64) | 0;
}

function finish(h1: number, pending: number, pendingBits: number, length: number): number {
  let h = pendingBits > 0 ? h1 ^ scramble(pending) : h1;
  h ^= length;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** The state after `prefix + suffix`, as the hot path computes it, but as an object (compile time). */
function absorb(start: HashPrefix, text: string): HashPrefix {
  let { h1, pending, pendingBits } = start;
  for (let i = 0; i < text.length; i++) {
    pending |= (text.charCodeAt(i) & 0xff) << pendingBits;
    pendingBits += 8;
    if (pendingBits === 32) {
      h1 = mixBlock(h1, pending);
      pending = 0;
      pendingBits = 0;
    }
  }
  return { h1, pending, pendingBits, length: start.length + text.length };
}

/** Absorbs a constant key prefix once, e.g. `groupId + ':'`. */
export function prepareHash(prefix: string, seed: number): HashPrefix {
  return absorb({ h1: seed | 0, pending: 0, pendingBits: 0, length: 0 }, prefix);
}

/** The unsigned 32-bit hash of `prefix + id`, allocation-free. */
export function hashWithPrefix(prefix: HashPrefix, id: string): number {
  let h1 = prefix.h1;
  let pending = prefix.pending;
  let pendingBits = prefix.pendingBits;
  const length = id.length;
  let i = 0;
  // Complete the block the prefix left open, then take whole blocks of four code units.
  if (pendingBits !== 0) {
    for (; i < length && pendingBits !== 32; i++, pendingBits += 8) {
      pending |= (id.charCodeAt(i) & 0xff) << pendingBits;
    }
    if (pendingBits !== 32) return finish(h1, pending, pendingBits, prefix.length + length);
    h1 = mixBlock(h1, pending);
    pending = 0;
    pendingBits = 0;
  }
  for (const blocksEnd = i + ((length - i) & ~3); i < blocksEnd; i += 4) {
    h1 = mixBlock(
      h1,
      (id.charCodeAt(i) & 0xff) |
        ((id.charCodeAt(i + 1) & 0xff) << 8) |
        ((id.charCodeAt(i + 2) & 0xff) << 16) |
        ((id.charCodeAt(i + 3) & 0xff) << 24),
    );
  }
  for (; i < length; i++, pendingBits += 8) pending |= (id.charCodeAt(i) & 0xff) << pendingBits;
  return finish(h1, pending, pendingBits, prefix.length + length);
}

/** The unsigned 32-bit hash of `key` (compile time, tests). */
export function murmur3(key: string, seed = 0): number {
  const state = absorb({ h1: seed | 0, pending: 0, pendingBits: 0, length: 0 }, key);
  return finish(state.h1, state.pending, state.pendingBits, state.length);
}

/** Seed of rollout decisions (flexibleRollout, gradualRollout*), per the client specification. */
export const ROLLOUT_SEED = 0;
/** Seed of variant selection, per the client specification. */
export const VARIANT_SEED = 86028157;

/** `(hash(groupId + ':' + id) % modulus) + 1`: a stable bucket in 1..modulus. */
export function normalizedValue(prefix: HashPrefix, id: string, modulus: number): number {
  return (hashWithPrefix(prefix, id) % modulus) + 1;
}
