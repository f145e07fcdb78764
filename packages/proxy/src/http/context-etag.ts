import { createHash } from 'node:crypto';
import type { Context } from '@flags/schemas';
import type { CompiledState } from '@flags/serving';

/**
 * ETags of answers that are a function of the flags and the whole evaluation context (OFREP bulk).
 * The OFREP web provider keeps its ETag across every context change but one of `targetingKey`, so
 * a tag of the flag configuration alone would answer 304 to a changed context with the old flags.
 * These tags hash the snapshot's revision, the context as evaluated (after enrichment) and the
 * rest of the answer, so a matching `If-None-Match` is answered 304 before evaluating anything.
 */

/** The revision of each compiled state: a hash of its payload as served (token scope applied). */
export class StateRevisions {
  private readonly byState = new WeakMap<CompiledState, string>();

  /**
   * From the content, not a counter: every proxy of a fleet, and one proxy after a restart, gives
   * the same flags the same revision.
   */
  of(compiled: CompiledState): string {
    let revision = this.byState.get(compiled);
    if (revision === undefined) {
      revision = createHash('sha256')
        .update(JSON.stringify(compiled.payload))
        .digest('base64url')
        .slice(0, 16);
      this.byState.set(compiled, revision);
    }
    return revision;
  }
}

/**
 * The opaque part of a context ETag: a hash of the revision, of what else shapes the answer
 * (`extra`: options, the event-stream URL) and of the context. Contexts that differ only in the
 * order of their properties get different tags (a 200 where a 304 would do, never the reverse).
 */
export function contextTagBase(revision: string, extra: string, context: Context): string {
  const digest = createHash('sha256')
    .update(revision)
    .update('\n')
    .update(extra)
    .update('\n')
    .update(JSON.stringify(context))
    .digest('base64url');
  return `c${digest.slice(0, 22)}`;
}

/**
 * The ETag of an answer with tag base `base` whose results hold until `validUntilMs` (`Infinity`:
 * until the flags change; a date constraint flips at a time): `W/"<base>"` or
 * `W/"<base>-<until, base 36>"`.
 */
export function contextEtag(base: string, validUntilMs: number): string {
  return validUntilMs === Number.POSITIVE_INFINITY
    ? `W/"${base}"`
    : `W/"${base}-${validUntilMs.toString(36)}"`;
}

/**
 * The tag of `If-None-Match` that names the answer of `base` and is still valid at `nowMs`, or
 * `undefined`: then the request is evaluated (`*` is left to `notModified` after evaluation).
 */
export function contextTagHit(
  header: string | undefined,
  base: string,
  nowMs: number,
): string | undefined {
  if (header === undefined) return undefined;
  for (const candidate of header.split(',')) {
    let tag = candidate.trim();
    if (tag.startsWith('W/')) tag = tag.slice(2);
    if (tag.length < 2 || tag.charCodeAt(0) !== 0x22 || tag.charCodeAt(tag.length - 1) !== 0x22)
      continue;
    const opaque = tag.slice(1, -1);
    if (opaque === base) return `W/"${opaque}"`;
    if (opaque.length > base.length + 1 && opaque.startsWith(base) && opaque[base.length] === '-') {
      const until = Number.parseInt(opaque.slice(base.length + 1), 36);
      if (Number.isFinite(until) && nowMs < until) return `W/"${opaque}"`;
    }
  }
  return undefined;
}
