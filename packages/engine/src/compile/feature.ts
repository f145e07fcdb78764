import { FlagResults } from '../results.js';
import type { Context, CustomStrategy, EngineWarning, Evaluation } from '../types.js';
import { describe, flagReporter } from '../warnings.js';
import type { SharedChecks } from './checks.js';
import type { EvaluationState } from './evaluation-state.js';
import { type CompiledStrategy, compileStrategy, type FlagEnvironment } from './strategy.js';
import { compileVariants, type VariantPicker } from './variant.js';

/** What every flag of one snapshot shares while compiling. */
export interface SharedEnvironment {
  readonly segments: ReadonlyMap<number, readonly number[]>;
  readonly checks: SharedChecks;
  readonly evaluation: EvaluationState;
  /** `CompileOptions.maxContextValueLength`. */
  readonly maxValueLength: number;
  readonly custom: ReadonlyMap<string, CustomStrategy>;
  readonly random: () => number;
  readonly hostname: string | undefined;
  readonly onWarning: ((warning: EngineWarning) => void) | undefined;
}

/**
 * A compiled flag is data read by one function, `runFlag`, rather than a closure per flag: the
 * snapshot's loop then makes one direct (inlinable) call per flag instead of a megamorphic one.
 */
export interface CompiledFlag {
  readonly name: string;
  readonly results: FlagResults;
  /** The answer whatever the context (switched off, failed to compile), or undefined. */
  readonly constant: Evaluation | undefined;
  readonly strategies: readonly CompiledStrategy[];
  readonly variants: VariantPicker | undefined;
  readonly checks: SharedChecks;
  /** The raw `dependencies` field, linked once every flag is compiled. */
  readonly dependencies: unknown;
}

/** The flag on its own, dependencies not considered: the first matching strategy decides. */
export function runFlag(flag: CompiledFlag, context: Context): Evaluation {
  if (flag.constant !== undefined) return flag.constant;
  const strategies = flag.strategies;
  for (let s = 0; s < strategies.length; s++) {
    const strategy = strategies[s]!;
    if (!flag.checks.all(strategy.checks, context)) continue;
    if (strategy.own !== undefined && !strategy.own(context)) continue;
    if (strategy.variants !== undefined) return strategy.variants.pick(context);
    if (flag.variants !== undefined) return flag.variants.pick(context);
    return strategy.result;
  }
  return flag.results.disabled;
}

type Body = Pick<CompiledFlag, 'constant' | 'strategies' | 'variants'>;

function constant(answer: Evaluation): Body {
  return { constant: answer, strategies: [], variants: undefined };
}

function compileBody(
  feature: Record<string, unknown>,
  results: FlagResults,
  shared: SharedEnvironment,
): Body {
  const reporter = flagReporter(results.name, shared.onWarning);
  if (feature.enabled !== true) return constant(results.disabled);
  if (!Array.isArray(feature.strategies)) {
    reporter.warn(`"strategies" is ${describe(feature.strategies)}, not a list: the flag is off`);
    return constant(results.error);
  }
  const environment: FlagEnvironment = {
    ...shared,
    featureName: results.name,
    groupPrefix: `${results.name}:`,
    reporter,
    results,
    customFailed: false,
  };
  const variants = compileVariants(feature.variants, {
    groupPrefix: `${results.name}:`,
    fallbackStickiness: undefined,
    random: shared.random,
    maxValueLength: shared.maxValueLength,
    results,
    reporter,
  });
  // A flag with no strategy at all is on for everyone (client specification 08).
  if (feature.strategies.length === 0) {
    const everyone = { checks: [], own: undefined, result: results.static, variants: undefined };
    return { constant: undefined, strategies: [everyone], variants };
  }
  const strategies: CompiledStrategy[] = [];
  for (const raw of feature.strategies) {
    const strategy = compileStrategy(raw, environment);
    if (strategy !== undefined) strategies.push(strategy);
  }
  return { constant: strategies.length === 0 ? results.disabled : undefined, strategies, variants };
}

/** One flag; a flag that cannot be read evaluates as off with reason ERROR. */
export function compileFeature(raw: unknown, shared: SharedEnvironment): CompiledFlag | undefined {
  const feature = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
  if (typeof feature.name !== 'string') {
    shared.onWarning?.({ message: `feature without a name (${describe(raw)}) is ignored` });
    return undefined;
  }
  const results = new FlagResults(feature.name, feature.impressionData === true);
  let body: Body;
  try {
    body = compileBody(feature, results, shared);
  } catch (error) {
    shared.onWarning?.({
      flag: feature.name,
      message: `could not compile: ${(error as Error)?.message ?? error}; the flag is off`,
    });
    body = constant(results.error);
  }
  return {
    name: feature.name,
    results,
    ...body,
    checks: shared.checks,
    dependencies: feature.dependencies,
  };
}
