import { createHash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';

/**
 * Conditional requests (RFC 9110 §13): the one `If-None-Match` rule of every answer with an ETag,
 * and the hash that ETags of evaluation answers are made of.
 */

/**
 * Whether an `If-None-Match` value names `etag`: `*`, or any listed tag equal to it under the weak
 * comparison that §13.1.2 prescribes (§8.8.3.2: `W/` is ignored on both sides).
 */
export function ifNoneMatchHits(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  // Clients mostly send back exactly the tag they got.
  if (header === etag || header === '*') return true;
  const opaque = etag.startsWith('W/') ? etag.slice(2) : etag;
  for (const candidate of header.split(',')) {
    const tag = candidate.trim();
    if (tag === '*' || (tag.startsWith('W/') ? tag.slice(2) : tag) === opaque) return true;
  }
  return false;
}

/** Whether the request's `If-None-Match` names `etag`: then the answer is 304 without a body. */
export function notModified(request: FastifyRequest, etag: string): boolean {
  return ifNoneMatchHits(request.headers['if-none-match'], etag);
}

/**
 * The two numbers that stand for one serialized result in the ETags of evaluation answers: the
 * first 8 bytes of the SHA-256 of its JSON, computed once per result and snapshot. They come from
 * the content, not from a counter, so proxies behind one load balancer, or one proxy before and
 * after a restart, give equal answers equal tags and different answers different ones (a false
 * match needs both numbers of a result to collide: about 2^-64).
 */
export interface ResultTag {
  readonly tag1: number;
  readonly tag2: number;
}

export function resultTag(json: string): ResultTag {
  const digest = createHash('sha256').update(json).digest();
  return { tag1: digest.readInt32LE(0), tag2: digest.readInt32LE(4) };
}

/**
 * The ETag of an evaluation answer stands for its exact list of results: two 32-bit hashes over
 * their tags (FNV-1a over `tag1`, a multiply-xorshift over `tag2` and the position), so it is
 * computed without hashing the body.
 */
export class ListTag {
  private h1 = FNV_OFFSET;
  private h2 = H2_SEED;
  private count = 0;

  add(tag: ResultTag): void {
    this.h1 = Math.imul(this.h1 ^ tag.tag1, FNV_PRIME);
    this.h2 = Math.imul(this.h2 ^ (tag.tag2 + this.count), 0x85ebca6b) ^ (this.h2 >>> 13);
    this.count++;
  }

  reset(): void {
    this.h1 = FNV_OFFSET;
    this.h2 = H2_SEED;
    this.count = 0;
  }

  /** `W/"<count>-<h1><h2>"`, the hashes in 8 hex digits each. */
  etag(): string {
    return `W/"${this.count}-${hex32(this.h1)}${hex32(this.h2)}"`;
  }
}

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;
/** Seed of the second hash (the golden ratio's bits). */
const H2_SEED = 0x9e3779b9;

/** Two hex digits for each byte value. */
const HEX_BYTES: readonly string[] = Object.freeze(
  Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0')),
);

/**
 * A 32-bit hash as 8 hex digits. By table because an answer needs two per render, and
 * `Number#toString` with a radix other than 10 takes V8's slow path (~0.3 µs each).
 */
function hex32(hash: number): string {
  return (
    (HEX_BYTES[hash >>> 24] as string) +
    HEX_BYTES[(hash >>> 16) & 0xff] +
    HEX_BYTES[(hash >>> 8) & 0xff] +
    HEX_BYTES[hash & 0xff]
  );
}
