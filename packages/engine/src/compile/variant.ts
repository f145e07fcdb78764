import { type ContextReader, contextReader } from '../context.js';
import { normalizedValue, prepareHash, VARIANT_SEED } from '../hash/murmur3.js';
import type { FlagResults, PayloadValue } from '../results.js';
import { type Context, type Evaluation, Reasons } from '../types.js';
import { describe, type Reporter } from '../warnings.js';

/** Picks the variant of an enabled flag (or strategy) for a context. */
export type VariantPicker = (context: Context) => Evaluation;

export interface VariantSettings {
  /** Group id with the hashing colon appended: the flag name, or the strategy's groupId. */
  readonly groupPrefix: string;
  /** Stickiness when the first variant names none. */
  readonly fallbackStickiness: string | undefined;
  readonly random: () => number;
  readonly results: FlagResults;
  readonly reporter: Reporter;
}

interface Override {
  readonly read: ContextReader;
  readonly values: ReadonlySet<string>;
  readonly result: Evaluation;
}

function payloadOf(raw: unknown): PayloadValue | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const { type, value } = raw as { type?: unknown; value?: unknown };
  return typeof type === 'string' && typeof value === 'string' ? { type, value } : undefined;
}

function overridesOf(raw: unknown, result: Evaluation, out: Override[]): void {
  if (!Array.isArray(raw)) return;
  for (const override of raw) {
    const { contextName, values } = (override ?? {}) as { contextName?: unknown; values?: unknown };
    if (typeof contextName !== 'string' || !Array.isArray(values)) continue;
    out.push({ read: contextReader(contextName), values: new Set(values.map(String)), result });
  }
}

/** The stickiness value of the context; `undefined` means a random pick. */
function seedReader(stickiness: string): ContextReader {
  if (stickiness !== 'default') {
    const read = contextReader(stickiness);
    return (context) => read(context) || undefined;
  }
  return (context) => context.userId || context.sessionId || context.remoteAddress || undefined;
}

/**
 * Weighted variants (client specification 08, 12, 16): overrides first, then
 * `murmur3(groupId + ':' + stickiness value, 86028157) % totalWeight + 1` against the cumulative
 * weights. Weights are used as the payload gives them (the server has already spread `variable`
 * weights). Returns undefined when there is nothing to pick (no variants, total weight 0).
 */
export function compileVariants(
  raw: unknown,
  settings: VariantSettings,
): VariantPicker | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (!Array.isArray(raw)) {
    settings.reporter.warn(`"variants" is ${describe(raw)}, not a list`);
    return undefined;
  }
  const { results, random } = settings;
  const prefix = prepareHash(settings.groupPrefix, VARIANT_SEED);
  const bounds: number[] = [];
  const picks: Evaluation[] = [];
  const overrides: Override[] = [];
  let total = 0;
  for (const variant of raw) {
    const { name, weight, payload } = (variant ?? {}) as Record<string, unknown>;
    if (typeof name !== 'string') {
      settings.reporter.warn('variant without a name');
      continue;
    }
    const payloadValue = payloadOf(payload);
    const numericWeight = typeof weight === 'number' && weight > 0 ? weight : 0;
    total += numericWeight;
    bounds.push(total);
    picks.push(results.withVariant(name, payloadValue, Reasons.SPLIT));
    const overridden = results.withVariant(name, payloadValue, Reasons.TARGETING_MATCH);
    overridesOf((variant as { overrides?: unknown }).overrides, overridden, overrides);
  }
  if (total <= 0) return undefined;
  const first = raw[0] as { stickiness?: unknown } | undefined;
  const stickiness =
    (typeof first?.stickiness === 'string' && first.stickiness) ||
    settings.fallbackStickiness ||
    'default';
  const seed = seedReader(stickiness);
  const pickByWeight = (context: Context): Evaluation => {
    const id = seed(context);
    const target =
      id === undefined ? Math.floor(random() * total) + 1 : normalizedValue(prefix, id, total);
    let i = 0;
    while (bounds[i]! < target) i++;
    return picks[i]!;
  };
  if (overrides.length === 0) return pickByWeight;
  return (context) => {
    for (let i = 0; i < overrides.length; i++) {
      const override = overrides[i]!;
      const value = override.read(context);
      if (value !== undefined && override.values.has(value)) return override.result;
    }
    return pickByWeight(context);
  };
}
