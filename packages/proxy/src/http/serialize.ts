import type { Evaluation, EvaluationVisitor } from '@flags/engine';
import type { Context } from '@flags/schemas';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AnswerCache } from '../answers.js';
import { type CompiledState, toggleJson } from '../state.js';
import { ListTag, notModified, resultTag } from './conditional.js';

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
/** Bytes of one slab; bodies larger than a quarter of it get memory of their own. */
const SLAB_BYTES = 1 << 20;

/**
 * Visits the results of one render (synchronous, so one instance serves every render of its
 * writer): keeps each by position, picks the fragments to send and hashes their ids, in the one
 * walk over the flags, with no per-request list or closure.
 */
class EnabledCollector implements EvaluationVisitor {
  compiled: CompiledState | undefined;
  all = false;
  readonly results: Evaluation[] = [];
  readonly parts: Buffer[] = [];
  length = 0;
  readonly tag = new ListTag();
  count = 0;

  /** Parts by flag position instead of in visit order (for answers in name order). */
  byPosition = false;

  visit(index: number, result: Evaluation): void {
    this.results[index] = result;
    if (!this.all && !result.enabled) return;
    const fragment = (this.compiled as CompiledState).fragmentAt(index, result);
    if (this.byPosition) this.parts[index] = fragment.bytes;
    else this.parts.push(fragment.bytes);
    this.length += fragment.bytes.length;
    this.tag.add(fragment);
    this.count++;
  }
}

/**
 * Writes the evaluation answers of one app (`{"toggles":[...]}`), copied together from the
 * cached UTF-8 bytes of each result. Its scratch space (the visitor and the body slab) belongs to
 * the app that created it: two apps in one process share nothing.
 */
export class AnswerWriter {
  private readonly collector = new EnabledCollector();
  /**
   * Bodies are carved out of slabs, the way Node pools small Buffers: a view costs far less than a
   * fresh ArrayBuffer per response (allocation, external-memory accounting, GC finalisation). A
   * slab is only ever written ahead of its last body, so bodies still queued on a socket stay
   * intact; a full slab is dropped and freed once its last body is. The first slab is taken with
   * the first body.
   */
  private slab: Buffer | undefined;
  private slabOffset = SLAB_BYTES;

  private allocateBody(length: number): Buffer {
    if (length > SLAB_BYTES >>> 2) return Buffer.allocUnsafeSlow(length);
    if (this.slabOffset + length > SLAB_BYTES || this.slab === undefined) {
      this.slab = Buffer.allocUnsafeSlow(SLAB_BYTES);
      this.slabOffset = 0;
    }
    const offset = this.slabOffset;
    // Keep the next body 8-byte aligned.
    this.slabOffset = (offset + length + 7) & ~7;
    return this.slab.subarray(offset, offset + length);
  }

  /**
   * `{"toggles":[...]}` of the results that are enabled (or of all, with `all`): no string
   * building, length scan or encoding. With a `key`, an answer that depended on the snapshot and
   * context alone is kept under it in the snapshot's answer cache, to be sent again
   * (`CompiledState.keptAnswer`) until a date constraint flips.
   */
  renderEvaluations(
    compiled: CompiledState,
    context: Context,
    all: boolean,
    key: string | undefined,
    inNameOrder = false,
  ): Rendered {
    const c = this.collector;
    c.compiled = compiled;
    c.all = all;
    c.byPosition = inNameOrder;
    c.results.length = 0;
    c.parts.length = 0;
    c.length = PREFIX.length + SUFFIX.length;
    c.tag.reset();
    c.count = 0;
    let stableUntil: number;
    try {
      stableUntil = compiled.evaluateEach(context, c);
    } finally {
      c.compiled = undefined;
    }
    const { count } = c;
    const parts = inNameOrder ? inOrder(c.parts, compiled.nameOrder()) : c.parts;
    const cache = key === undefined ? undefined : compiled.answers;
    const keep =
      cache !== undefined && (stableUntil === Number.POSITIVE_INFINITY || stableUntil > Date.now());
    const length = count > 1 ? c.length + count - 1 : c.length;
    const body = this.allocateBody(length);
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
    const etag = c.tag.etag();
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
}

/** The parts kept by flag position (gaps for toggles left out), in `order`; empties `byPosition`. */
function inOrder(byPosition: Buffer[], order: Uint32Array): Buffer[] {
  const parts: Buffer[] = [];
  for (let i = 0; i < order.length; i++) {
    const part = byPosition[order[i] as number];
    if (part !== undefined) parts.push(part);
  }
  byPosition.length = 0;
  return parts;
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
  const parts = new Array<string>(names.length);
  const tag = new ListTag();
  for (let i = 0; i < names.length; i++) {
    const name = names[i] as string;
    const result = compiled.evaluate(name, context);
    if (result === undefined) {
      // Not kept: any name can be asked for.
      const json = unknownToggleJson(name);
      parts[i] = json;
      tag.add(resultTag(json));
    } else {
      const fragment = compiled.fragment(result);
      parts[i] = fragment.json;
      tag.add(fragment);
    }
  }
  return { body: `${PREFIX}${parts.join(',')}${SUFFIX}`, etag: tag.etag() };
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

/**
 * Sends an evaluation body with `headers` (`KeyedAnswerHeaders.evaluation`, built once per app); a
 * GET/HEAD whose `If-None-Match` names its ETag gets 304, a POST only with `conditionalPost` (as
 * Edge answers; Unleash Proxy never did).
 */
export function sendRendered(
  request: FastifyRequest,
  reply: FastifyReply,
  rendered: Rendered,
  headers: Readonly<Record<string, string>>,
  conditionalPost = false,
): FastifyReply {
  reply.headers(headers);
  reply.header('etag', rendered.etag);
  if ((conditionalPost || request.method !== 'POST') && notModified(request, rendered.etag)) {
    reply.removeHeader('content-type');
    return reply.code(304).send();
  }
  return reply.code(200).send(rendered.body);
}
