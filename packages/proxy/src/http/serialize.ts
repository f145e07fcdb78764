import type { Evaluation, EvaluationVisitor } from '@flags/engine';
import type { Context } from '@flags/schemas';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type CompiledState, toggleJson } from '../state.js';
import { ListTag, notModified, resultTag } from './conditional.js';

/** A response body and its weak validator. */
export interface Rendered {
  readonly body: Buffer | string;
  readonly etag: string;
}

const PREFIX = '{"toggles":[';
const SUFFIX = ']}';

/**
 * Visits the results of one render (synchronous, so one instance serves every render of its
 * writer): keeps each by position, picks the fragments to send and hashes their ids, in the one
 * walk over the flags, with no per-request list or closure.
 */
class EnabledCollector implements EvaluationVisitor {
  compiled: CompiledState | undefined;
  all = false;
  readonly results: Evaluation[] = [];
  readonly parts: string[] = [];
  readonly tag = new ListTag();

  /** Parts by flag position instead of in visit order (for answers in name order). */
  byPosition = false;

  visit(index: number, result: Evaluation): void {
    this.results[index] = result;
    if (!this.all && !result.enabled) return;
    const fragment = (this.compiled as CompiledState).fragmentAt(index, result);
    if (this.byPosition) this.parts[index] = fragment.json;
    else this.parts.push(fragment.json);
    this.tag.add(fragment);
  }
}

/**
 * Writes the evaluation answers of one app (`{"toggles":[...]}`), joined from the serialized JSON
 * of each result. Its scratch space (the visitor) belongs to the app that created it: two apps in
 * one process share nothing.
 */
export class AnswerWriter {
  private readonly collector = new EnabledCollector();

  /**
   * `{"toggles":[...]}` of the results that are enabled (or of all, with `all`), as one string
   * joined from the results' JSON: a string lives and dies in V8's young generation, and Node
   * writes it to the socket together with the headers in one go, where a Buffer per answer (or a
   * slab of them) is memory outside the heap that is only freed by a full collection, so under a
   * stream of never-seen contexts it piles up (tens of MB). With a `key`, an answer that depended
   * on the snapshot and context alone is kept under it in the snapshot's answer cache (from the
   * key's second request on: `AnswerCache.admits`), to be sent again
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
    c.tag.reset();
    let stableUntil: number;
    try {
      stableUntil = compiled.evaluateEach(context, c);
    } finally {
      c.compiled = undefined;
    }
    const parts = inNameOrder ? inOrder(c.parts, compiled.nameOrder()) : c.parts;
    const body = `${PREFIX}${parts.join(',')}${SUFFIX}`;
    parts.length = 0;
    const etag = c.tag.etag();
    const cache = key === undefined ? undefined : compiled.answers;
    if (
      cache !== undefined &&
      (stableUntil === Number.POSITIVE_INFINITY || stableUntil > Date.now()) &&
      cache.admits(key as string)
    ) {
      // Kept as bytes (shared with an equal kept body, if any), sent from then on as they are.
      cache.set(key as string, {
        body: Buffer.from(body, 'utf8'),
        etag,
        results: c.results.slice(0, compiled.snapshot.names.length),
        staleAt: stableUntil,
      });
    }
    return { body, etag };
  }
}

/** The parts kept by flag position (gaps for toggles left out), in `order`; empties `byPosition`. */
function inOrder(byPosition: string[], order: Uint32Array): string[] {
  const parts: string[] = [];
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
