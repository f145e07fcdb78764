/** Thrown by `ConcurrencyLimit.run` when every slot is busy and the queue is full. */
export class LimitFullError extends Error {
  constructor() {
    super('every slot is busy and the queue is full');
    this.name = 'LimitFullError';
  }
}

/**
 * Runs at most `maxActive` tasks at once; up to `maxWaiting` more wait for a slot in arrival
 * order, and any beyond that are refused at once (`LimitFullError`) instead of piling up.
 */
export class ConcurrencyLimit {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    readonly maxActive: number,
    readonly maxWaiting: number,
  ) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.active < this.maxActive) {
      this.active++;
    } else {
      if (this.waiting.length >= this.maxWaiting) throw new LimitFullError();
      // The finishing task hands its slot over: `active` stays as it is.
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    }
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    }
  }
}
