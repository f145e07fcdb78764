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
 * FNV-1a (32 bit) over the small ids that stand for interned results: an evaluation answer's ETag
 * stands for its exact list of results, so it is computed without hashing the body.
 */
export const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** One FNV-1a step: `hash` with `id` mixed in. */
export function fnv1a(hash: number, id: number): number {
  return Math.imul(hash ^ id, FNV_PRIME);
}

/** A number as an ETag part: unsigned 32 bit, base 36. */
export function etagPart(hash: number): string {
  return (hash >>> 0).toString(36);
}
