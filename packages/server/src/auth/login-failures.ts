/** Names tracked at most; beyond, the oldest windows are dropped first. */
const MAX_NAMES = 10_000;

/**
 * Failed logins per user name in fixed windows, in this process's memory: once a name has
 * `maxFailures` in its window, logins with it are refused until the window ends, whether the
 * user exists or not (so the refusal says nothing about who exists). One per app.
 */
export class LoginFailures {
  private readonly windows = new Map<string, { startMs: number; failures: number }>();

  constructor(
    private readonly maxFailures: number,
    private readonly windowMs: number,
    private readonly now: () => Date,
  ) {}

  /** Whether logins as `name` are refused for now. */
  blocked(name: string): boolean {
    const window = this.current(name);
    return window !== undefined && window.failures >= this.maxFailures;
  }

  /** Counts a failed login as `name`. */
  record(name: string): void {
    const key = keyOf(name);
    const window = this.current(name);
    if (window) {
      window.failures += 1;
      return;
    }
    if (this.windows.size >= MAX_NAMES) this.evict();
    this.windows.set(key, { startMs: this.now().getTime(), failures: 1 });
  }

  private current(name: string) {
    const key = keyOf(name);
    const window = this.windows.get(key);
    if (window && this.now().getTime() - window.startMs >= this.windowMs) {
      this.windows.delete(key);
      return undefined;
    }
    return window;
  }

  /** Drops ended windows, then the oldest tenth if that freed nothing. */
  private evict(): void {
    const nowMs = this.now().getTime();
    for (const [key, window] of this.windows) {
      if (nowMs - window.startMs >= this.windowMs) this.windows.delete(key);
    }
    if (this.windows.size < MAX_NAMES) return;
    let drop = Math.ceil(MAX_NAMES / 10);
    for (const key of this.windows.keys()) {
      if (drop-- <= 0) break;
      this.windows.delete(key);
    }
  }
}

/** A login names a user by username or email, in any case. */
const keyOf = (name: string) => name.trim().toLowerCase();
