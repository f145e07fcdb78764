import type { Context } from '@flags/schemas';

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

export interface CompileOptions {
  /** Custom strategies by name; they shadow built-ins of the same name. */
  readonly strategies?: readonly CustomStrategy[];
  /** Called once per problem found while compiling, or the first time a custom strategy throws for a flag. */
  readonly onWarning?: (warning: EngineWarning) => void;
  /** Source of randomness for `random` stickiness and `gradualRolloutRandom`; defaults to Math.random. */
  readonly random?: () => number;
}

export type { Context };
