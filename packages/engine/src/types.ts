import type { ClientFeatures, Context } from '@flags/schemas';

/** Why a flag evaluated as it did; OpenFeature's words, so OFREP maps them 1:1. */
export const Reasons = {
  /** Enabled, no targeting involved (e.g. a single `default` strategy). */
  STATIC: 'STATIC',
  /** Enabled because a strategy (constraints, user ids, ...) matched the context. */
  TARGETING_MATCH: 'TARGETING_MATCH',
  /** Enabled and the variant came from a weighted split. */
  SPLIT: 'SPLIT',
  /** The flag is switched off, or no strategy matched. */
  DISABLED: 'DISABLED',
  /** The flag could not be compiled; it evaluates as off. */
  ERROR: 'ERROR',
} as const;
export type Reason = (typeof Reasons)[keyof typeof Reasons];

export interface VariantResult {
  readonly name: string;
  readonly enabled: boolean;
  readonly payload?: { readonly type: string; readonly value: string };
  readonly feature_enabled: boolean;
  readonly featureEnabled: boolean;
}

/**
 * One flag's answer for one context. Results are interned per flag at compile time and reused:
 * callers must treat them as immutable and may cache derived data (e.g. serialized JSON) per object.
 */
export interface Evaluation {
  readonly name: string;
  readonly enabled: boolean;
  readonly variant: VariantResult;
  readonly impressionData: boolean;
  readonly reason: Reason;
}

/** The shape of `unleash-client` custom strategies, so existing strategy files work unchanged. */
export interface CustomStrategy {
  readonly name: string;
  isEnabled(parameters: Record<string, unknown>, context: Record<string, unknown>): boolean;
}

export interface EngineWarning {
  readonly flag?: string;
  readonly message: string;
}

/**
 * Default of `CompileOptions.maxContextValueLength`: the size browsers allow a whole cookie, far
 * above any real identifier (a UUID has 36 characters, an e-mail address at most 254, an IPv6
 * address 45), and small enough that comparing one value stays cheap.
 */
export const DEFAULT_MAX_CONTEXT_VALUE_LENGTH = 4096;

export interface CompileOptions {
  /** Custom strategies by name; they shadow built-ins of the same name. */
  readonly strategies?: readonly CustomStrategy[];
  /** Called once per problem found while compiling, or the first time a custom strategy throws for a flag. */
  readonly onWarning?: (warning: EngineWarning) => void;
  /** Source of randomness for `random` stickiness and `gradualRolloutRandom`; defaults to Math.random. */
  readonly random?: () => number;
  /**
   * The snapshot's clock (epoch ms), for date constraints when neither the context (`currentTime`)
   * nor the caller (`now`) gives the time. Read at most once per evaluation, and only by one that
   * compares a date with it. Defaults to `Date.now`.
   */
  readonly clock?: () => number;
  /**
   * This process's host name, for the `applicationHostname` strategy (the engine does no IO, so
   * the caller passes e.g. `process.env.HOSTNAME ?? os.hostname()`). Without it that strategy is off.
   */
  readonly hostname?: string;
  /**
   * Context values longer than this (in UTF-16 code units, a string's `length`) are never compared
   * or hashed: the constraints and strategies that would compare one do not match (`inverted` and
   * `NOT_IN` included), variant overrides skip it, and a variant whose stickiness value is over it
   * is picked at random, as for a missing value. Custom strategies see the context as given.
   * Defaults to `DEFAULT_MAX_CONTEXT_VALUE_LENGTH` (4096).
   */
  readonly maxContextValueLength?: number;
  /**
   * Bytes for the results `evaluateEach` keeps per user (`0`, the default: none). The flags whose
   * answer depends only on context fields that recur across a user's requests (not `sessionId`,
   * not the clock, no random draw or custom strategy) are kept by those fields' values, in as few
   * bits per flag as its results need, for contexts with a `userId`, from a user's second sighting
   * on; a user who comes back in a new session gets them without evaluating them again. An eighth
   * of the budget remembers which users were seen; of the rest, half holds the keys and results
   * most recently asked for, the other half those before (`ResultMemo`).
   */
  readonly memoBytes?: number;
}

/**
 * A compiled, immutable payload: compile once per upstream change, evaluate many times.
 *
 * Each evaluation method takes an optional `now` (epoch ms): the time date constraints compare
 * with when the context has no `currentTime`. Without it the snapshot's clock
 * (`CompileOptions.clock`, `Date.now` by default) is read, once per call and only if a date is
 * compared. Snapshots share no state: each has its own evaluation state and caches.
 */
export interface Snapshot {
  /** The payload this snapshot was compiled from (segments included), untouched. */
  readonly payload: ClientFeatures;
  /** Flag names in payload order. */
  readonly names: readonly string[];
  has(name: string): boolean;
  /** One flag; `undefined` when the snapshot has no flag of that name. Never throws. */
  evaluate(name: string, context: Context, now?: number): Evaluation | undefined;
  /** Every flag, in payload order. Never throws. */
  evaluateAll(context: Context, now?: number): Evaluation[];
  /**
   * Every flag, in payload order, handed to `visitor.visit(index, result)` (index into `names`)
   * instead of collected into a list. Evaluation never throws; what `visit` throws propagates.
   * Returns the time (epoch ms) until which the same context gets the same results from this
   * snapshot, so a caller may keep them that long: `Infinity` when they depend on the snapshot and
   * context alone, a date when a date constraint compared it with the evaluation's time (`now` or
   * the clock), 0 when a random draw or a custom strategy was involved. Evaluations that `visit`
   * starts (of this snapshot or another) do not change it.
   */
  evaluateEach(context: Context, visitor: EvaluationVisitor, now?: number): number;
  /**
   * Calls of `evaluateEach` that took the kept flags' results from the memo
   * (`CompileOptions.memoBytes`) instead of evaluating them.
   */
  readonly memoHits: number;
}

/** Receives the results of `Snapshot.evaluateEach` one by one. */
export interface EvaluationVisitor {
  visit(index: number, result: Evaluation): void;
}

export type { Context };
