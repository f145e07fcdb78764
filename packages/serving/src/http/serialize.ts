import type { ServerResponse } from 'node:http';
import type { Evaluation, EvaluationVisitor } from '@flags/engine';
import type { Context } from '@flags/schemas';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Answer } from '../answers.js';
import { type CompiledState, type Fragment, toggleJson } from '../state.js';
import { ListTag, notModified, resultTag } from './conditional.js';

/** A response body and its weak validator. */
export interface Rendered {
  readonly body: Buffer | string;
  readonly etag: string;
  /** Which render of its `AnswerWriter` wrote it (`AnswerWriter.fragmentsOf`), if one did. */
  readonly render?: number;
}

/**
 * The fragments of a writer's latest answer in the order written, between `{"toggles":[` and
 * `]}` and joined by commas: the first `count` of `fragments`. Overwritten by the next render.
 */
export interface WrittenFragments {
  readonly compiled: CompiledState;
  readonly fragments: readonly Fragment[];
  readonly count: number;
}

/** What every evaluation answer starts with, before its toggles. */
export const PREFIX = '{"toggles":[';
/** What it ends with, after them. */
export const SUFFIX = ']}';
const COMMA = 0x2c;

/** Bytes of scratch memory an answer writer starts with. */
const MIN_SCRATCH_BYTES = 64 * 1024;
/** Largest answer written to scratch memory kept for the next; a larger one gets memory of its own. */
const MAX_SCRATCH_BYTES = 4 * 1024 * 1024;

/**
 * Visits the results of one render (synchronous, so one instance serves every render of its
 * writer): keeps each by position, picks the fragments to send, adds up their bytes and hashes
 * their ids, in the one walk over the flags. Its arrays are overwritten, never emptied, so that
 * they keep their room: a render allocates nothing here.
 */
class EnabledCollector implements EvaluationVisitor {
  compiled: CompiledState | undefined;
  all = false;
  /** Every flag's result by position (a render visits every flag, so each entry is rewritten). */
  readonly results: Evaluation[] = [];
  /** The fragments to send: the first `count`, or by position (see `byPosition`). */
  readonly chosen: Fragment[] = [];
  count = 0;
  /** UTF-8 bytes of the fragments chosen. */
  bytes = 0;
  readonly tag = new ListTag();
  /**
   * Fragments by flag position instead of in visit order (for answers in name order): position
   * `i` was chosen in this render when `stamps[i] === stamp`.
   */
  byPosition = false;
  stamps = new Int32Array(0);
  stamp = 0;

  /** Makes ready for a render of `compiled`'s flags. */
  begin(compiled: CompiledState, all: boolean, byPosition: boolean): void {
    this.compiled = compiled;
    this.all = all;
    this.byPosition = byPosition;
    this.count = 0;
    this.bytes = 0;
    this.tag.reset();
    if (byPosition) {
      const flags = compiled.snapshot.names.length;
      if (this.stamps.length < flags || this.stamp === 0x7fffffff) {
        this.stamps = new Int32Array(Math.max(flags, this.stamps.length));
        this.stamp = 0;
      }
      this.stamp++;
    }
  }

  visit(index: number, result: Evaluation): void {
    this.results[index] = result;
    if (!this.all && !result.enabled) return;
    const fragment = (this.compiled as CompiledState).fragmentAt(index, result);
    if (this.byPosition) {
      this.chosen[index] = fragment;
      this.stamps[index] = this.stamp;
    } else this.chosen[this.count] = fragment;
    this.count++;
    this.bytes += fragment.bytes.length;
    this.tag.add(fragment);
  }
}

/**
 * Writes the evaluation answers of one app (`{"toggles":[...]}`) from the UTF-8 bytes of each
 * result's JSON (made once per result and snapshot) into scratch memory of its own. Its scratch
 * space (the visitor, the bytes) belongs to the app that created it: two apps in one process
 * share nothing.
 *
 * Why bytes in scratch memory: a never-seen context is mostly memory traffic. Joined into a
 * string, an answer of 200 flags allocated ~25 KB of V8 heap per request (the string, its
 * flattened copy, the growing lists), which the socket write then encoded to UTF-8 once more;
 * each allocation pushes the engine's data out of the CPU caches, and the collections it causes
 * add to it. Copied from bytes made once into memory that is reused, an answer allocates only a
 * view of that memory. A fresh Buffer per answer would not do: memory outside V8's heap, freed
 * only when a collection finds its owner dead, piles up under never-seen contexts. So the writer
 * keeps one scratch memory, lends it to the answer being sent (`settle` takes it back once Node
 * has handed the answer to the socket, which it does at once unless the socket is backed up), and
 * only when an answer could not leave at once (a slow client) leaves the memory to that write and
 * starts another.
 */
export class AnswerWriter {
  private readonly collector = new EnabledCollector();
  private readonly prefix = Buffer.from(PREFIX, 'latin1');
  private readonly suffix = Buffer.from(SUFFIX, 'latin1');
  private scratch = Buffer.allocUnsafeSlow(MIN_SCRATCH_BYTES);
  /** Whether `scratch` holds an answer that may not have left yet. */
  private lent = false;
  /** Renders so far; the latest one's fragments are in `written`. */
  private renders = 0;
  private readonly written: {
    compiled: CompiledState | undefined;
    fragments: Fragment[];
    count: number;
  } = { compiled: undefined, fragments: [], count: 0 };

  /**
   * The fragments of the answer of render number `render` (`Rendered.render`) in the order
   * written, while it is this writer's latest render
   * (compression joins answers from pieces made per fragment); `undefined` for any other answer.
   */
  fragmentsOf(render: number | undefined): WrittenFragments | undefined {
    const { written } = this;
    if (render !== this.renders || written.compiled === undefined) return undefined;
    return written as WrittenFragments;
  }

  /**
   * After `rendered` was handed to Node as the answer to one request (`sendRendered`): if it is
   * the answer in scratch memory, that memory may be written again once the answer has gone to
   * the socket in full. Node writes it there and then, unless the socket is backed up or the
   * response waits behind a pipelined one (then `writableLength` counts it). Any other answer
   * (named toggles, one flag, an answer too large for scratch memory) leaves the memory as it is:
   * it may still be lent to an answer waiting on another socket.
   */
  settle(response: ServerResponse, rendered: Rendered): void {
    if (
      this.lent &&
      typeof rendered.body !== 'string' &&
      rendered.body.buffer === this.scratch.buffer &&
      response.writableEnded &&
      response.writableLength === 0
    )
      this.lent = false;
  }

  /**
   * `{"toggles":[...]}` of the results that are enabled (or of all, with `all`), in scratch
   * memory lent until `settle` (see the class). With a `key`, an answer that depended on the
   * snapshot and context alone is kept under it in the snapshot's answer cache (from the key's
   * second request on: `AnswerCache.admits`), to be sent again (`CompiledState.keptAnswer`) until
   * a date constraint flips.
   */
  renderEvaluations(
    compiled: CompiledState,
    context: Context,
    all: boolean,
    key: string | undefined,
    inNameOrder = false,
  ): Rendered {
    const c = this.collector;
    c.begin(compiled, all, inNameOrder);
    let stableUntil: number;
    try {
      stableUntil = compiled.evaluateEach(context, c);
    } finally {
      c.compiled = undefined;
    }
    const body = this.write(c, inNameOrder ? compiled.nameOrder() : undefined);
    this.written.compiled = compiled;
    const render = ++this.renders;
    const etag = c.tag.etag();
    const cache = key === undefined ? undefined : compiled.answers;
    if (
      cache !== undefined &&
      (stableUntil === Number.POSITIVE_INFINITY || stableUntil > Date.now()) &&
      cache.admits(key as string)
    ) {
      // Kept as bytes of its own (shared with an equal kept body, if any), sent as they are.
      cache.set(key as string, {
        body,
        etag,
        results: c.results.slice(0, compiled.snapshot.names.length),
        staleAt: stableUntil,
      });
    }
    return { body, etag, render };
  }

  /** The chosen fragments as one body, in visit order or in `order` (positions). */
  private write(c: EnabledCollector, order: Uint32Array | undefined): Buffer {
    const size = this.prefix.length + c.bytes + Math.max(0, c.count - 1) + this.suffix.length;
    let out = this.scratch;
    if (size > MAX_SCRATCH_BYTES) out = Buffer.allocUnsafeSlow(size);
    else {
      if (this.lent || out.length < size) {
        out = Buffer.allocUnsafeSlow(Math.max(MIN_SCRATCH_BYTES, 2 ** Math.ceil(Math.log2(size))));
        this.scratch = out;
      }
      this.lent = true;
    }
    out.set(this.prefix, 0);
    let at = this.prefix.length;
    const chosen = c.chosen;
    const written = this.written.fragments;
    if (order === undefined) {
      for (let i = 0; i < c.count; i++) {
        if (i > 0) out[at++] = COMMA;
        const fragment = chosen[i] as Fragment;
        written[i] = fragment;
        out.set(fragment.bytes, at);
        at += fragment.bytes.length;
      }
    } else {
      const { stamps, stamp } = c;
      let count = 0;
      for (let i = 0; i < order.length; i++) {
        const position = order[i] as number;
        if (stamps[position] !== stamp) continue;
        if (count > 0) out[at++] = COMMA;
        const fragment = chosen[position] as Fragment;
        written[count++] = fragment;
        out.set(fragment.bytes, at);
        at += fragment.bytes.length;
      }
    }
    this.written.count = c.count;
    out.set(this.suffix, at);
    return out.subarray(0, size);
  }
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

declare module 'fastify' {
  interface FastifyReply {
    /**
     * The body sent is a kept answer's (`sendKept`): bytes the answer cache owns and never
     * changes, which compression may keep encoded copies of. Declared by `buildApp`.
     */
    sendsKeptBody: boolean;
    /**
     * The writer's render number of the body sent (`Rendered.render`; 0: none), from which
     * compression may join the answer from pieces per fragment. Declared by `buildApp`.
     */
    sentRender: number;
  }
}

/** `sendRendered` for an answer from the answer cache. */
export function sendKept(
  request: FastifyRequest,
  reply: FastifyReply,
  kept: Answer,
  headers: Readonly<Record<string, string>>,
  conditionalPost: boolean,
): FastifyReply {
  reply.sendsKeptBody = true;
  return sendRendered(request, reply, kept, headers, conditionalPost);
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
  if (rendered.render !== undefined) reply.sentRender = rendered.render;
  if ((conditionalPost || request.method !== 'POST') && notModified(request, rendered.etag)) {
    reply.removeHeader('content-type');
    return reply.code(304).send();
  }
  return reply.code(200).send(rendered.body);
}
