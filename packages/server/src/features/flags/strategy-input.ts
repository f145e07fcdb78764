import type { FromSchema } from 'json-schema-to-ts';
import type { FeatureStrategy, StrategyInput } from './feature-strategy-store.js';
import type { strategyBodySchema } from './flag-schemas.js';
import { balanceVariants } from './variant-weights.js';

export type StrategyBody = FromSchema<typeof strategyBodySchema>;

/** The rollout a flag enabled without strategies gets, as unleash-server adds it: everyone. */
export function defaultRollout(featureName: string, sortOrder: number): StrategyInput {
  return {
    name: 'flexibleRollout',
    title: null,
    disabled: false,
    sortOrder,
    segments: [],
    constraints: [],
    variants: [],
    parameters: { rollout: '100', stickiness: 'default', groupId: featureName },
  };
}

/**
 * A strategy body with unleash-server's defaults: parameters as strings, constraints with their
 * flags, variant weights balanced, and for `flexibleRollout` the rollout, stickiness and group id
 * it needs.
 */
export function strategyInput(
  featureName: string,
  body: StrategyBody,
  sortOrder: number,
): StrategyInput {
  const parameters: Record<string, string> = {};
  for (const [key, value] of Object.entries(body.parameters ?? {})) parameters[key] = String(value);
  if (body.name === 'flexibleRollout') {
    parameters.rollout ??= '100';
    parameters.stickiness ??= 'default';
    if (!parameters.groupId) parameters.groupId = featureName;
  }
  return {
    name: body.name,
    title: body.title ?? null,
    disabled: body.disabled ?? false,
    sortOrder: body.sortOrder === undefined ? sortOrder : Math.trunc(body.sortOrder),
    segments: [...new Set(body.segments ?? [])],
    constraints: (body.constraints ?? []).map((constraint) => ({
      values: [],
      inverted: false,
      caseInsensitive: false,
      ...constraint,
    })),
    variants: balanceVariants(body.variants ?? []),
    parameters,
  };
}

/** A stored strategy as a body (what a JSON Patch of it starts from). */
export function strategyAsBody(strategy: FeatureStrategy): StrategyBody {
  return {
    name: strategy.name,
    ...(strategy.title === null ? {} : { title: strategy.title }),
    disabled: strategy.disabled,
    sortOrder: strategy.sortOrder,
    segments: strategy.segments,
    constraints: strategy.constraints as StrategyBody['constraints'],
    variants: strategy.variants as StrategyBody['variants'],
    parameters: strategy.parameters,
  };
}
