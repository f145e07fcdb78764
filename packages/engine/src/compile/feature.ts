import { FlagResults } from '../results.js';
import type { Context, CustomStrategy, EngineWarning, Evaluation } from '../types.js';
import { describe, flagReporter } from '../warnings.js';
import type { SharedChecks } from './checks.js';
import { type CompiledStrategy, compileStrategy, type FlagEnvironment } from './strategy.js';
import { compileVariants } from './variant.js';

/** What every flag of one snapshot shares while compiling. */
export interface SharedEnvironment {
  readonly segments: ReadonlyMap<number, readonly number[]>;
  readonly checks: SharedChecks;
  readonly custom: ReadonlyMap<string, CustomStrategy>;
  readonly random: () => number;
  readonly hostname: string | undefined;
  readonly onWarning: ((warning: EngineWarning) => void) | undefined;
}

export interface CompiledFlag {
  readonly name: string;
  readonly results: FlagResults;
  /** The raw `dependencies` field, linked once every flag is compiled. */
  readonly dependencies: unknown;
  /** The flag on its own, dependencies not considered. */
  readonly own: (context: Context) => Evaluation;
}

function evaluateStrategies(
  strategies: readonly CompiledStrategy[],
  checks: SharedChecks,
  featureVariants: ((context: Context) => Evaluation) | undefined,
  disabled: Evaluation,
): (context: Context) => Evaluation {
  // A plain indexed loop: this runs for every flag of every evaluation.
  return (context) => {
    for (let s = 0; s < strategies.length; s++) {
      const strategy = strategies[s]!;
      if (!checks.all(strategy.checks, context)) continue;
      if (strategy.own !== undefined && !strategy.own(context)) continue;
      if (strategy.variants !== undefined) return strategy.variants(context);
      if (featureVariants !== undefined) return featureVariants(context);
      return strategy.result;
    }
    return disabled;
  };
}

function compileBody(
  feature: Record<string, unknown>,
  results: FlagResults,
  shared: SharedEnvironment,
): (context: Context) => Evaluation {
  const reporter = flagReporter(results.name, shared.onWarning);
  if (feature.enabled !== true) return () => results.disabled;
  if (!Array.isArray(feature.strategies)) {
    reporter.warn(`"strategies" is ${describe(feature.strategies)}, not a list: the flag is off`);
    return () => results.error;
  }
  const environment: FlagEnvironment = {
    ...shared,
    featureName: results.name,
    groupPrefix: `${results.name}:`,
    reporter,
    results,
    customFailed: false,
  };
  const featureVariants = compileVariants(feature.variants, {
    groupPrefix: `${results.name}:`,
    fallbackStickiness: undefined,
    random: shared.random,
    results,
    reporter,
  });
  // A flag with no strategy at all is on for everyone (client specification 08).
  if (feature.strategies.length === 0) return featureVariants ?? (() => results.static);
  const strategies: CompiledStrategy[] = [];
  for (const raw of feature.strategies) {
    const strategy = compileStrategy(raw, environment);
    if (strategy !== undefined) strategies.push(strategy);
  }
  return evaluateStrategies(strategies, shared.checks, featureVariants, results.disabled);
}

/** One flag; a flag that cannot be read evaluates as off with reason ERROR. */
export function compileFeature(raw: unknown, shared: SharedEnvironment): CompiledFlag | undefined {
  const feature = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
  if (typeof feature.name !== 'string') {
    shared.onWarning?.({ message: `feature without a name (${describe(raw)}) is ignored` });
    return undefined;
  }
  const results = new FlagResults(feature.name, feature.impressionData === true);
  let own: (context: Context) => Evaluation;
  try {
    own = compileBody(feature, results, shared);
  } catch (error) {
    shared.onWarning?.({
      flag: feature.name,
      message: `could not compile: ${(error as Error)?.message ?? error}; the flag is off`,
    });
    own = () => results.error;
  }
  return { name: feature.name, results, dependencies: feature.dependencies, own };
}
