import { ContextVersions } from '../operators/semver.js';
import { LowerCased } from '../operators/string.js';
import { ContextAddresses } from '../parse/ip.js';

/**
 * What the evaluation in progress of one snapshot shares between its flags: which evaluation it is
 * (cached check answers carry its stamp), the time it runs at, until when its answers hold, and
 * the caches of context values parsed for one flag and reused by the next.
 * `compile` creates one per snapshot and hands it to the compiled closures, so two snapshots never
 * see each other's evaluations. Evaluation is synchronous, so one state per snapshot suffices; an
 * evaluation started while another is in progress (a custom strategy or an `evaluateEach` visitor
 * calling the snapshot again) saves the outer one's fields and restores them when it ends.
 */
export class EvaluationState {
  /** A fresh number for every evaluation of this snapshot (never reused); 0 before the first. */
  stamp = 0;
  /**
   * Epoch ms until which the same context gets the same results: lowered to a date a clock-based
   * constraint will cross, and to 0 by a random draw or a custom strategy.
   */
  stableUntil = Number.POSITIVE_INFINITY;
  private lastStamp = 0;
  /** The evaluation's time (epoch ms); NaN until a date constraint needs it and no `now` was given. */
  private nowMs = Number.NaN;
  /** Evaluations in progress below the current one. */
  private depth = 0;
  /** `stamp`, `nowMs`, `stableUntil` of each interrupted evaluation, innermost last. */
  private readonly outer: number[] = [];

  // Caches keyed by the context value, so an evaluation that interrupts another cannot spoil them.
  readonly lowerCased = new LowerCased();
  readonly addresses = new ContextAddresses();
  readonly versions = new ContextVersions();

  /** @param clock read when an evaluation needs the time and its caller did not pass `now`. */
  constructor(private readonly clock: () => number) {}

  /** Starts an evaluation at `now` (epoch ms), or at the clock's time if it needs one. */
  begin(now: number | undefined): void {
    if (this.depth++ > 0) this.outer.push(this.stamp, this.nowMs, this.stableUntil);
    this.stamp = ++this.lastStamp;
    this.nowMs = now ?? Number.NaN;
    this.stableUntil = Number.POSITIVE_INFINITY;
  }

  /**
   * Whether the evaluation in progress interrupts no other: a nested one (started by a visitor or
   * a custom strategy) must leave `ResultMemo`'s scratch memory to the outer one.
   */
  get outermost(): boolean {
    return this.depth === 1;
  }

  /** Ends the evaluation in progress; the one it interrupted, if any, goes on where it was. */
  end(): void {
    if (--this.depth === 0) return;
    const outer = this.outer;
    this.stableUntil = outer.pop()!;
    this.nowMs = outer.pop()!;
    this.stamp = outer.pop()!;
  }

  /**
   * The evaluation's time (epoch ms). The clock is read at most once per evaluation, so every flag
   * of one call sees the same time, and only by evaluations that compare a date with it.
   */
  now(): number {
    let now = this.nowMs;
    if (Number.isNaN(now)) {
      now = this.clock();
      this.nowMs = now;
    }
    return now;
  }

  /** The results of the evaluation in progress hold only while the clock reads before `ms`. */
  holdsUntil(ms: number): void {
    if (ms < this.stableUntil) this.stableUntil = ms;
  }

  /** The evaluation in progress drew on something besides the snapshot and context. */
  markVaries(): void {
    this.stableUntil = 0;
  }
}
