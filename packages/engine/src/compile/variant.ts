import { type ContextReader, contextReader } from '../context.js';
import { type HashPrefix, normalizedValue, prepareHash, VARIANT_SEED } from '../hash/murmur3.js';
import type { FlagResults, PayloadValue } from '../results.js';
import { type Context, type Evaluation, Reasons } from '../types.js';
import { describe, type Reporter } from '../warnings.js';

export interface VariantSettings {
  /** Group id with the hashing colon appended: the flag name, or the strategy's groupId. */
  readonly groupPrefix: string;
  /** Stickiness when the first variant names none. */
  readonly fallbackStickiness: string | undefined;
  readonly random: () => number;
  /** Context values longer than this are neither compared with overrides nor hashed. */
  readonly maxValueLength: number;
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

/** Override values over the limit are left out: a context value over it never matches. */
function overridesOf(
  raw: unknown,
  result: Evaluation,
  maxValueLength: number,
  out: Override[],
): void {
  if (!Array.isArray(raw)) return;
  for (const override of raw) {
    const { contextName, values } = (override ?? {}) as { contextName?: unknown; values?: unknown };
    if (typeof contextName !== 'string' || !Array.isArray(values)) continue;
    const kept = values.map(String).filter((value) => value.length <= maxValueLength);
    out.push({ read: contextReader(contextName), values: new Set(kept), result });
  }
}

/**
 * Picks the variant of an enabled flag (or strategy) for a context. A class, not a closure: every
 * flag calls the same `pick`, so the call is direct and the hashing inlines.
 */
export class VariantPicker {
  constructor(
    private readonly overrides: readonly Override[],
    /** Custom stickiness field; undefined for `default` (userId, sessionId, remoteAddress). */
    private readonly stickiness: ContextReader | undefined,
    private readonly prefix: HashPrefix,
    private readonly bounds: readonly number[],
    private readonly picks: readonly Evaluation[],
    private readonly total: number,
    private readonly random: () => number,
    private readonly maxValueLength: number,
  ) {}

  pick(context: Context): Evaluation {
    const overrides = this.overrides;
    for (let i = 0; i < overrides.length; i++) {
      const override = overrides[i]!;
      const value = override.read(context);
      if (value !== undefined && override.values.has(value)) return override.result;
    }
    // A context without the stickiness value gets a random variant, as in the SDKs; so does one
    // whose value is over the limit (it is not hashed).
    const id =
      this.stickiness === undefined
        ? context.userId || context.sessionId || context.remoteAddress
        : this.stickiness(context);
    const target =
      id && id.length <= this.maxValueLength
        ? normalizedValue(this.prefix, id, this.total)
        : Math.floor(this.random() * this.total) + 1;
    const bounds = this.bounds;
    let i = 0;
    while (bounds[i]! < target) i++;
    return this.picks[i]!;
  }
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
    const listed = (variant as { overrides?: unknown }).overrides;
    overridesOf(listed, overridden, settings.maxValueLength, overrides);
  }
  if (total <= 0) return undefined;
  const first = raw[0] as { stickiness?: unknown } | undefined;
  const stickiness =
    (typeof first?.stickiness === 'string' && first.stickiness) ||
    settings.fallbackStickiness ||
    'default';
  return new VariantPicker(
    overrides,
    stickiness === 'default' ? undefined : contextReader(stickiness),
    prefix,
    bounds,
    picks,
    total,
    random,
    settings.maxValueLength,
  );
}
