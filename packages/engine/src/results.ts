import type { Evaluation, Reason, VariantResult } from './types.js';
import { Reasons } from './types.js';

/**
 * Every answer a flag can give is built here, once, at compile time, and frozen: evaluation hands
 * out these objects and allocates nothing per flag.
 */

export interface PayloadValue {
  readonly type: string;
  readonly value: string;
}

const DISABLED_VARIANT: VariantResult = Object.freeze({
  name: 'disabled',
  enabled: false,
  feature_enabled: false,
  featureEnabled: false,
});

const ENABLED_NO_VARIANT: VariantResult = Object.freeze({
  name: 'disabled',
  enabled: false,
  feature_enabled: true,
  featureEnabled: true,
});

function result(
  name: string,
  enabled: boolean,
  variant: VariantResult,
  impressionData: boolean,
  reason: Reason,
): Evaluation {
  return Object.freeze({ name, enabled, variant, impressionData, reason });
}

/** The answers shared by all strategies of one flag. */
export class FlagResults {
  /** Every answer made here, in the order made: an answer's place is its number (`ResultMemo`). */
  readonly outcomes: Evaluation[] = [];
  readonly disabled: Evaluation;
  readonly error: Evaluation;
  readonly static: Evaluation;
  readonly targeted: Evaluation;

  constructor(
    readonly name: string,
    readonly impressionData: boolean,
  ) {
    this.disabled = this.made(
      result(name, false, DISABLED_VARIANT, impressionData, Reasons.DISABLED),
    );
    this.error = this.made(result(name, false, DISABLED_VARIANT, impressionData, Reasons.ERROR));
    this.static = this.made(result(name, true, ENABLED_NO_VARIANT, impressionData, Reasons.STATIC));
    this.targeted = this.made(
      result(name, true, ENABLED_NO_VARIANT, impressionData, Reasons.TARGETING_MATCH),
    );
  }

  private made(answer: Evaluation): Evaluation {
    this.outcomes.push(answer);
    return answer;
  }

  /** An enabled answer carrying one variant. */
  withVariant(variantName: string, payload: PayloadValue | undefined, reason: Reason): Evaluation {
    // The key is left out, not set to undefined, when there is no payload (wire shape).
    const variant: VariantResult = Object.freeze(
      payload === undefined
        ? { name: variantName, enabled: true, feature_enabled: true, featureEnabled: true }
        : {
            name: variantName,
            enabled: true,
            payload: Object.freeze({ type: payload.type, value: payload.value }),
            feature_enabled: true,
            featureEnabled: true,
          },
    );
    return this.made(result(this.name, true, variant, this.impressionData, reason));
  }
}
