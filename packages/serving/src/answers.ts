import { Doorkeeper, type Evaluation } from '@flags/engine';

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

/** A body that several kept answers send, and how many do. */
interface SharedBody {
  readonly body: Buffer;
  users: number;
}

/** The share of an answer cache's budget its doorkeeper takes (4 bytes a slot). */
const DOORKEEPER_SHARE = 1 / 16;
/** Fewest doorkeeper slots, however small the budget. */
const MIN_DOORKEEPER_SLOTS = 64;

/**
 * Answers of one snapshot by request, within a byte budget: the oldest out first, unless asked
 * for since it was kept or last spared (then it is spared once more: "second chance", which keeps
 * what is used and costs a hit no change to the table; see `Kept`).
 * Browser SDKs poll with the same context every few seconds, and an answer that depended on the
 * snapshot and the context alone (the engine says so) stays right until the flags change: the
 * cache lives and dies with its snapshot, so there is nothing to invalidate. Many contexts get the
 * same toggles, so answers with equal bodies keep one copy (found by ETag, compared byte for byte).
 * A request key is kept from its second sighting on (`admits`, a `Doorkeeper` taking a sixteenth
 * of the budget, allocated with the first answer offered), so that contexts seen once cost no
 * cache memory beyond it.
 */
export class AnswerCache {
  private readonly entries = new Map<string, Kept>();
  private readonly bodies = new Map<string, SharedBody>();
  private bytes = 0;
  private doorkeeper: Doorkeeper | undefined;

  constructor(private readonly budget: number) {}

  /**
   * Whether an answer for `key` should be kept (`set`): only when the key was asked for before.
   * Each call counts as a sighting.
   */
  admits(key: string): boolean {
    if (this.doorkeeper === undefined) {
      this.doorkeeper = new Doorkeeper(
        Math.max(MIN_DOORKEEPER_SLOTS, (this.budget * DOORKEEPER_SHARE) / 4),
      );
      // Counted in the budget: the answers get the rest.
      this.bytes += this.doorkeeper.bytes;
    }
    return this.doorkeeper.admit(key);
  }

  get size(): number {
    return this.entries.size;
  }

  /** Distinct bodies kept (answers with equal bodies share one). */
  get bodyCount(): number {
    return this.bodies.size;
  }

  /** The answer kept for `key`, unless there is none or it has gone stale. */
  get(key: string): Answer | undefined {
    const kept = this.entries.get(key);
    if (kept === undefined) return undefined;
    const { answer } = kept;
    if (answer.staleAt !== Number.POSITIVE_INFINITY && Date.now() >= answer.staleAt) {
      this.entries.delete(key);
      this.release(kept);
      return undefined;
    }
    kept.used = true;
    return answer;
  }

  /**
   * Keeps `answer` for `key` with a copy of its body in memory of its own, or the equal body of
   * another kept answer: the body passed in may be a view of memory that is written again later.
   */
  set(key: string, answer: Answer): void {
    // One answer may take at most a quarter of the budget, so a few huge ones cannot flush the rest.
    if (entryCost(key, answer) + answer.body.length > this.budget / 4) return;
    const replaced = this.entries.get(key);
    if (replaced !== undefined) {
      this.entries.delete(key);
      this.release(replaced);
    }
    this.entries.set(key, this.hold(key, answer));
    // Oldest first (a Map keeps insertion order); one asked for since is spared, once, to the end.
    for (const [oldest, kept] of this.entries) {
      if (this.bytes <= this.budget) break;
      this.entries.delete(oldest);
      if (kept.used) {
        kept.used = false;
        this.entries.set(oldest, kept);
      } else this.release(kept);
    }
  }

  /** Counts an entry in, with the shared body of an equal answer or a copy of its own. */
  private hold(key: string, answer: Answer): Kept {
    const cost = entryCost(key, answer);
    this.bytes += cost;
    const shared = this.bodies.get(answer.etag);
    let body: Buffer;
    if (shared?.body.equals(answer.body)) {
      shared.users++;
      body = shared.body;
    } else {
      body = Buffer.allocUnsafeSlow(answer.body.length);
      answer.body.copy(body);
      // The same ETag over other bytes is a hash collision: that body is kept apart, unshared.
      if (shared === undefined) this.bodies.set(answer.etag, { body, users: 1 });
      this.bytes += body.length;
    }
    return { answer: { ...answer, body }, cost, used: false };
  }

  private release(kept: Kept): void {
    const { answer } = kept;
    this.bytes -= kept.cost;
    const shared = this.bodies.get(answer.etag);
    if (shared?.body === answer.body) {
      if (--shared.users > 0) return;
      this.bodies.delete(answer.etag);
    }
    this.bytes -= answer.body.length;
  }
}

/**
 * An entry of the cache. A hit only sets `used`: moving the entry to the end of the table instead
 * (least recently used order) would store the hit's own key string there, a new string per
 * request that the table, being old, keeps alive into V8's old generation, where the one it
 * replaces is left as garbage until a full collection: ~200 bytes per cached answer sent, 10 MB
 * a second at 40,000 requests a second, which raised the peak RSS under recurring load by tens
 * of MB. Sparing an entry re-inserts it under the key it was kept with.
 */
interface Kept {
  readonly answer: Answer;
  readonly cost: number;
  used: boolean;
}

/** What an entry costs besides its body. */
function entryCost(key: string, answer: Answer): number {
  return 2 * key.length + 8 * answer.results.length + ENTRY_OVERHEAD;
}
