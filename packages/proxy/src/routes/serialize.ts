import type { Evaluation, EvaluationVisitor } from '@flags/engine';
import type { Context } from '@flags/schemas';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Answer, AnswerCache } from '../answers.js';
import { type CompiledState, toggleJson } from '../state.js';
import type { EvaluationCounter } from '../usage/aggregator.js';

/** A response body and its weak validator. */
export interface Rendered {
  readonly body: Buffer | string;
  readonly etag: string;
}

const PREFIX = '{"toggles":[';
const SUFFIX = ']}';
const COMMA = 0x2c;
const CLOSE_BRACKET = 0x5d;
const CLOSE_BRACE = 0x7d;

// FNV-1a and a second multiplicative hash over the result ids: the ETag stands for the exact list
// of (interned) results, so it is computed without hashing the body itself.
const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

function etagOf(h1: number, h2: number, count: number): string {
  return `W/"${count.toString(36)}-${(h1 >>> 0).toString(36)}${(h2 >>> 0).toString(36)}"`;
}

/**
 * Bodies are carved out of shared slabs, the way Node pools small Buffers: a view costs far less
 * than a fresh ArrayBuffer per response (allocation, external-memory accounting, GC finalisation).
 * A slab is only ever written ahead of its last body, so bodies still queued on a socket stay
 * intact; a full slab is dropped and freed once its last body is.
 */
const SLAB_BYTES = 1 << 20;
let slab = Buffer.allocUnsafeSlow(SLAB_BYTES);
let slabOffset = 0;

function allocateBody(length: number): Buffer {
  if (length > SLAB_BYTES >>> 2) return Buffer.allocUnsafeSlow(length);
  if (slabOffset + length > SLAB_BYTES) {
    slab = Buffer.allocUnsafeSlow(SLAB_BYTES);
    slabOffset = 0;
  }
  const body = slab.subarray(slabOffset, slabOffset + length);
  // Keep the next body 8-byte aligned.
  slabOffset = (slabOffset + length + 7) & ~7;
  return body;
}

/**
 * Visits the results of one render (synchronous, so one instance serves every render): counts each
 * for usage metrics, keeps it by position, picks the fragments to send and hashes their ids, in the
 * one walk over the flags, with no per-request list or closure.
 */
class EnabledCollector implements EvaluationVisitor {
  compiled: CompiledState | undefined;
  usage: EvaluationCounter | undefined;
  all = false;
  readonly results: Evaluation[] = [];
  readonly parts: Buffer[] = [];
  length = 0;
  h1 = FNV_OFFSET;
  h2 = 0x9e3779b9;
  count = 0;

  visit(index: number, result: Evaluation): void {
    this.results[index] = result;
    if (this.usage !== undefined) this.usage.count(index, result);
    if (!this.all && !result.enabled) return;
    const fragment = (this.compiled as CompiledState).fragmentAt(index, result);
    this.parts.push(fragment.bytes);
    this.length += fragment.bytes.length;
    this.h1 = Math.imul(this.h1 ^ fragment.id, FNV_PRIME);
    this.h2 = Math.imul(this.h2 ^ (fragment.id + this.count), 0x85ebca6b) ^ (this.h2 >>> 13);
    this.count++;
  }
}

const collector = new EnabledCollector();

/**
 * The answer kept under `key` in the snapshot's answer cache, counted for usage metrics as if
 * evaluated again; `undefined` when there is none (or no key: the cache is off).
 */
export function keptAnswer(compiled: CompiledState, key: string | undefined): Answer | undefined {
  const kept = key === undefined ? undefined : compiled.answers?.get(key);
  if (kept !== undefined) compiled.usage?.countAgain(kept.results);
  return kept;
}

/**
 * `{"toggles":[...]}` of the results that are enabled (or of all, with `all`), copied together
 * from the cached UTF-8 bytes of each result: no string building, length scan or encoding. With a
 * `key`, an answer that depended on the snapshot and context alone is kept under it in the
 * snapshot's answer cache, to be sent again (`keptAnswer`) until a date constraint flips.
 */
export function renderEvaluations(
  compiled: CompiledState,
  context: Context,
  all: boolean,
  key: string | undefined,
): Rendered {
  const c = collector;
  const usage = compiled.usage;
  c.compiled = compiled;
  c.usage = usage;
  c.all = all;
  c.results.length = 0;
  c.parts.length = 0;
  c.length = PREFIX.length + SUFFIX.length;
  c.h1 = FNV_OFFSET;
  c.h2 = 0x9e3779b9;
  c.count = 0;
  if (usage !== undefined) usage.dirty = true;
  let stableUntil: number;
  try {
    stableUntil = compiled.snapshot.evaluateEach(context, c);
  } finally {
    c.compiled = undefined;
    c.usage = undefined;
  }
  const { parts, count } = c;
  const cache = key === undefined ? undefined : compiled.answers;
  const keep =
    cache !== undefined && (stableUntil === Number.POSITIVE_INFINITY || stableUntil > Date.now());
  const length = count > 1 ? c.length + count - 1 : c.length;
  const body = allocateBody(length);
  let offset = body.write(PREFIX, 0, 'latin1');
  for (let i = 0; i < count; i++) {
    if (i > 0) body[offset++] = COMMA;
    const bytes = parts[i] as Buffer;
    body.set(bytes, offset);
    offset += bytes.length;
  }
  body[offset++] = CLOSE_BRACKET;
  body[offset] = CLOSE_BRACE;
  parts.length = 0;
  const etag = etagOf(c.h1, c.h2, count);
  if (keep) {
    // The cache copies the body out of the slab (or shares an equal one); this one is sent.
    (cache as AnswerCache).set(key as string, {
      body,
      etag,
      results: c.results.slice(0, compiled.snapshot.names.length),
      staleAt: stableUntil,
    });
  }
  return { body, etag };
}

/**
 * One entry per requested name, in request order: known names evaluated, unknown names as the
 * disabled answer with `impressionData: false`.
 */
export function renderNamed(
  compiled: CompiledState,
  context: Context,
  names: readonly string[],
): Rendered {
  const snapshot = compiled.snapshot;
  const parts = new Array<string>(names.length);
  let h1 = FNV_OFFSET;
  for (let i = 0; i < names.length; i++) {
    const name = names[i] as string;
    const result = snapshot.evaluate(name, context);
    if (result === undefined) {
      parts[i] = unknownToggleJson(name);
      h1 = Math.imul(h1 ^ 0x7fffffff, FNV_PRIME);
    } else {
      const fragment = compiled.fragment(result);
      parts[i] = fragment.json;
      h1 = Math.imul(h1 ^ fragment.id, FNV_PRIME);
    }
  }
  const body = `${PREFIX}${parts.join(',')}${SUFFIX}`;
  return { body, etag: etagOf(h1, body.length, names.length) };
}

const UNKNOWN_VARIANT = Object.freeze({
  name: 'disabled',
  enabled: false,
  feature_enabled: false,
  featureEnabled: false,
});

function unknownToggleJson(name: string): string {
  return toggleJson({
    name,
    enabled: false,
    variant: UNKNOWN_VARIANT,
    impressionData: false,
    reason: 'DISABLED',
  });
}

function matches(ifNoneMatch: string, etag: string): boolean {
  if (ifNoneMatch === etag || ifNoneMatch === '*') return true;
  // Weak comparison over a list (RFC 9110 §13.1.2).
  const opaque = etag.slice(2);
  for (const candidate of ifNoneMatch.split(',')) {
    const trimmed = candidate.trim();
    if (trimmed === etag || trimmed === opaque || trimmed === '*') return true;
  }
  return false;
}

/**
 * Sends an evaluation body with `headers` (`KeyedAnswerHeaders.evaluation`, built once per app); a
 * GET/HEAD whose `If-None-Match` matches gets 304.
 */
export function sendRendered(
  request: FastifyRequest,
  reply: FastifyReply,
  rendered: Rendered,
  headers: Readonly<Record<string, string>>,
): FastifyReply {
  reply.headers(headers);
  reply.header('etag', rendered.etag);
  const ifNoneMatch = request.headers['if-none-match'];
  if (
    ifNoneMatch !== undefined &&
    request.method !== 'POST' &&
    matches(ifNoneMatch, rendered.etag)
  ) {
    reply.removeHeader('content-type');
    return reply.code(304).send();
  }
  return reply.code(200).send(rendered.body);
}
