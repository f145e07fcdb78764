import { ApiError } from '../../errors.js';

/** The weights of a flag's variants add up to this (unleash-server's scale). */
export const TOTAL_WEIGHT = 1000;

interface WeightedVariant {
  name: string;
  weight: number;
  weightType?: string;
  stickiness?: string;
}

/**
 * Variants as unleash-server stores them: `fix` variants keep their weight; what is left of 1000
 * is shared among the `variable` ones, the first ones taking one more each until the remainder is
 * spent; listed by name. 400 when a variant has no weight type, the fixed weights pass 1000 or no
 * variant is variable.
 */
export function balanceVariants<V extends WeightedVariant>(variants: readonly V[]): V[] {
  if (variants.length === 0) return [];
  const withDefaults = variants.map((variant) => ({
    ...variant,
    stickiness: variant.stickiness ?? 'default',
  }));
  // unleash-server drops such a variant without a word; here it is refused.
  const untyped = withDefaults.filter((v) => v.weightType !== 'variable' && v.weightType !== 'fix');
  if (untyped.length > 0) {
    throw new ApiError(
      'BAD_DATA',
      `Variant "${untyped[0]!.name}" has no weightType: give "variable" (shares what is left of 1000) or "fix" (keeps its weight).`,
      untyped.map((variant) => variant.name),
    );
  }
  const variable = withDefaults.filter((variant) => variant.weightType === 'variable');
  const fixed = withDefaults.filter((variant) => variant.weightType === 'fix');
  if (variable.length === 0) {
    throw new ApiError('BAD_DATA', 'There must be at least one "variable" variant.');
  }
  const fixedWeight = fixed.reduce((sum, variant) => sum + variant.weight, 0);
  if (fixedWeight > TOTAL_WEIGHT) {
    throw new ApiError('BAD_DATA', 'The fixed variant weights add up to more than 100 %.');
  }
  const names = new Set(withDefaults.map((variant) => variant.name));
  if (names.size !== withDefaults.length) {
    throw new ApiError('BAD_DATA', 'Variant names must be unique.');
  }
  const share = Math.floor((TOTAL_WEIGHT - fixedWeight) / variable.length);
  let remainder = (TOTAL_WEIGHT - fixedWeight) % variable.length;
  const balanced = variable.map((variant) => {
    const extra = remainder > 0 ? 1 : 0;
    remainder -= extra;
    return { ...variant, weight: share + extra };
  });
  return [...balanced, ...fixed].sort((a, b) => a.name.localeCompare(b.name, 'en'));
}
