/** Thrown by `FairLimit.run` when a task may not wait: its key's queue, or every queue, is full. */
export class LimitFullError extends Error {
  constructor(
    /** `key`: the caller's own queue was full (or its newest task was shed); `all`: every queue. */
    readonly scope: 'key' | 'all',
  ) {
    super(scope === 'key' ? 'this key has too many tasks waiting' : 'every queue is full');
    this.name = 'LimitFullError';
  }
}

export interface FairLimitOptions {
  /** Tasks running at once, whatever their key. */
  readonly maxActive: number;
  /** Tasks waiting at once over every key: the bound on what the queue holds. */
  readonly maxWaiting: number;
  /** Tasks waiting at once for one key. */
  readonly maxWaitingPerKey: number;
}

interface Waiter {
  /** Arrival order, to take the longest-waiting first among equals. */
  readonly seq: number;
  readonly start: () => void;
  readonly refuse: (error: LimitFullError) => void;
}

/** One key's work: what waits, what runs, and how many it started since it last had none. */
interface Share {
  readonly waiting: Waiter[];
  active: number;
  started: number;
}

/** Whether `share` (whose first waiter is `head`) is served before `other`. */
function goesBefore(share: Share, head: Waiter, other: Share): boolean {
  if (share.started !== other.started) return share.started < other.started;
  if (share.waiting.length !== other.waiting.length) {
    return share.waiting.length < other.waiting.length;
  }
  return head.seq < other.waiting[0]!.seq;
}

/**
 * Runs at most `maxActive` tasks at once, and queues the rest fairly by key (a client address):
 * when a slot frees, the key that has started the fewest tasks since it last had none waiting or
 * running goes next, so keys take turns round by round and a key that just arrived goes before
 * those already served; among keys of one round, the one with the fewest waiting, then the one
 * waiting longest. A flood from some keys therefore delays a lone task of another key by about
 * one task, not by the flood. Each key may have `maxWaitingPerKey`
 * tasks waiting; beyond, its new task is refused (`LimitFullError`, scope `key`). When
 * `maxWaiting` tasks wait in all, a newcomer takes the place of the newest task of the key with
 * the most waiting, if that key has more than the newcomer's (that task is refused, scope `key`);
 * else the newcomer is refused (scope `all`). One per app: no module state.
 */
export class FairLimit {
  private active = 0;
  private waitingCount = 0;
  private seq = 0;
  private readonly shares = new Map<string, Share>();

  constructor(readonly options: FairLimitOptions) {}

  /** Tasks running now. */
  get running(): number {
    return this.active;
  }

  /** Tasks waiting now, of `key` or of every key. */
  waiting(key?: string): number {
    return key === undefined ? this.waitingCount : (this.shares.get(key)?.waiting.length ?? 0);
  }

  async run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const share = this.shares.get(key) ?? { waiting: [], active: 0, started: 0 };
    this.shares.set(key, share);
    // A free slot means nothing waits (a finishing task hands its slot to a waiter).
    if (this.active < this.options.maxActive) {
      this.active++;
      share.active++;
      share.started++;
    } else {
      this.admit(key, share);
      // The finishing task hands its slot over (`next`): the counts are updated there.
      await new Promise<void>((start, refuse) => {
        share.waiting.push({ seq: this.seq++, start, refuse });
        this.waitingCount++;
      });
    }
    try {
      return await task();
    } finally {
      share.active--;
      this.forgetIfIdle(key, share);
      this.next();
    }
  }

  /** Makes room for one more waiter of `share`, or throws. */
  private admit(key: string, share: Share): void {
    const refuse: (scope: 'key' | 'all') => never = (scope) => {
      this.forgetIfIdle(key, share);
      throw new LimitFullError(scope);
    };
    if (share.waiting.length >= this.options.maxWaitingPerKey) refuse('key');
    if (this.waitingCount < this.options.maxWaiting) return;
    let longest: [string, Share] | undefined;
    for (const entry of this.shares) {
      if (!longest || entry[1].waiting.length > longest[1].waiting.length) longest = entry;
    }
    if (!longest || longest[1].waiting.length <= share.waiting.length + 1) refuse('all');
    const [shedKey, shed] = longest;
    this.waitingCount--;
    shed.waiting.pop()!.refuse(new LimitFullError('key'));
    this.forgetIfIdle(shedKey, shed);
  }

  /** Hands the slot just freed to the next waiter, or frees it. */
  private next(): void {
    let chosen: Share | undefined;
    for (const share of this.shares.values()) {
      const head = share.waiting[0];
      if (head === undefined) continue;
      if (!chosen || goesBefore(share, head, chosen)) chosen = share;
    }
    if (!chosen) {
      this.active--;
      return;
    }
    this.waitingCount--;
    chosen.active++;
    chosen.started++;
    chosen.waiting.shift()!.start();
  }

  private forgetIfIdle(key: string, share: Share): void {
    if (share.active === 0 && share.waiting.length === 0) this.shares.delete(key);
  }
}
