import type { Evaluation } from '@flags/engine';

/** An evaluation answer kept for one context: the body sent, its ETag, and the results to count. */
export interface Answer {
  readonly body: Buffer;
  readonly etag: string;
  /** Every flag's result, by position in the snapshot (usage metrics count them on each reuse). */
  readonly results: readonly Evaluation[];
  /** Epoch ms from which the answer is stale (a date constraint flips); `Infinity` if never. */
  readonly staleAt: number;
}

/** Rough heap cost of an entry besides its body and key: the objects, the Map slot, the list. */
const ENTRY_OVERHEAD = 200;

/**
 * Answers of one snapshot by context, least recently used first out, within a byte budget.
 * Browser SDKs poll with the same context every few seconds, and an answer that depended on the
 * snapshot and the context alone (the engine says so) stays right until the flags change: the
 * cache lives and dies with its snapshot, so there is nothing to invalidate.
 */
export class AnswerCache {
  private readonly entries = new Map<string, Answer>();
  private bytes = 0;

  constructor(private readonly budget: number) {}

  get size(): number {
    return this.entries.size;
  }

  /** The answer kept for `key`, unless there is none or it has gone stale. */
  get(key: string): Answer | undefined {
    const answer = this.entries.get(key);
    if (answer === undefined) return undefined;
    this.entries.delete(key);
    if (answer.staleAt !== Number.POSITIVE_INFINITY && Date.now() >= answer.staleAt) {
      this.bytes -= costOf(key, answer);
      return undefined;
    }
    // Most recently used goes last: Map keeps insertion order.
    this.entries.set(key, answer);
    return answer;
  }

  set(key: string, answer: Answer): void {
    const cost = costOf(key, answer);
    // One answer may take at most a quarter of the budget, so a few huge ones cannot flush the rest.
    if (cost > this.budget / 4) return;
    const replaced = this.entries.get(key);
    if (replaced !== undefined) {
      this.entries.delete(key);
      this.bytes -= costOf(key, replaced);
    }
    this.entries.set(key, answer);
    this.bytes += cost;
    for (const [oldest, evicted] of this.entries) {
      if (this.bytes <= this.budget) break;
      this.entries.delete(oldest);
      this.bytes -= costOf(oldest, evicted);
    }
  }
}

function costOf(key: string, answer: Answer): number {
  return answer.body.length + 2 * key.length + 8 * answer.results.length + ENTRY_OVERHEAD;
}
