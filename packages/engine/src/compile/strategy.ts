import type { Predicate } from '../operators/operator.js';
import type { FlagResults } from '../results.js';
import { BUILT_IN_STRATEGIES } from '../strategies/index.js';
import {
  ALWAYS,
  NEVER,
  type Parameters,
  type StrategyEnvironment,
} from '../strategies/strategy.js';
import type { CustomStrategy, Evaluation } from '../types.js';
import { describe } from '../warnings.js';
import type { SharedChecks } from './checks.js';
import { compileConstraints } from './constraint.js';
import { compileVariants, type VariantPicker } from './variant.js';

export interface CompiledStrategy {
  /** Check ids of its constraints and segments, in order. */
  readonly checks: readonly number[];
  /** The strategy's own test; undefined when it passes for everyone. */
  readonly own: Predicate | undefined;
  /** The answer when it matches and no variant applies (STATIC or TARGETING_MATCH). */
  readonly result: Evaluation;
  readonly variants: VariantPicker | undefined;
}

export interface FlagEnvironment extends StrategyEnvironment {
  readonly results: FlagResults;
  readonly segments: ReadonlyMap<number, readonly number[]>;
  readonly checks: SharedChecks;
  readonly custom: ReadonlyMap<string, CustomStrategy>;
  /** Set once a custom strategy of this flag has thrown, so it is reported once per flag. */
  customFailed: boolean;
}

function customTest(
  strategy: CustomStrategy,
  parameters: Parameters,
  environment: FlagEnvironment,
): Predicate {
  // A copy made once: the strategy sees the same object every call, as with the SDK, and the
  // snapshot's payload stays untouched whatever the strategy does with it.
  const own = { ...parameters };
  const { evaluation } = environment;
  return (context) => {
    try {
      const enabled = Boolean(strategy.isEnabled(own, context as Record<string, unknown>));
      // After the call: a nested evaluation inside it keeps its own record.
      evaluation.markVaries();
      return enabled;
    } catch (error) {
      evaluation.markVaries();
      if (!environment.customFailed) {
        environment.customFailed = true;
        environment.reporter.warn(
          `custom strategy "${strategy.name}" threw: ${(error as Error)?.message ?? error}`,
        );
      }
      return false;
    }
  };
}

function segmentChecks(raw: unknown, environment: FlagEnvironment): number[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) {
    environment.reporter.warn(`strategy "segments" is ${describe(raw)}, not a list`);
    return [environment.checks.never];
  }
  return raw.flatMap((id) => {
    const segment = environment.segments.get(id as number);
    if (segment !== undefined) return segment;
    environment.reporter.warn(`strategy references unknown segment ${describe(id)}`);
    return [environment.checks.never];
  });
}

function groupPrefixOf(parameters: Parameters, featureName: string): string {
  const groupId = parameters.groupId;
  return `${groupId === undefined || groupId === null || groupId === '' ? featureName : String(groupId)}:`;
}

/** One activation strategy; undefined when it is switched off (`disabled: true`). */
export function compileStrategy(
  raw: unknown,
  environment: FlagEnvironment,
): CompiledStrategy | undefined {
  if (typeof raw !== 'object' || raw === null) {
    environment.reporter.warn(`strategy is ${describe(raw)}`);
    return {
      checks: [environment.checks.never],
      own: undefined,
      result: environment.results.disabled,
      variants: undefined,
    };
  }
  const strategy = raw as Record<string, unknown>;
  if (strategy.disabled === true) return undefined;
  const name = strategy.name;
  const parameters: Parameters =
    typeof strategy.parameters === 'object' && strategy.parameters !== null
      ? (strategy.parameters as Parameters)
      : {};
  const local: StrategyEnvironment = {
    ...environment,
    groupPrefix: groupPrefixOf(parameters, environment.featureName),
  };
  const custom = typeof name === 'string' ? environment.custom.get(name) : undefined;
  const builtIn = typeof name === 'string' ? BUILT_IN_STRATEGIES.get(name) : undefined;
  let own: Predicate;
  if (custom !== undefined) own = customTest(custom, parameters, environment);
  else if (builtIn !== undefined) own = builtIn(parameters, local);
  else {
    environment.reporter.warn(`unknown strategy ${describe(name)}: it never matches`);
    own = NEVER;
  }
  const where = `strategy ${describe(name)}`;
  // A check listed twice (a constraint repeated by a segment) is tested once.
  const checks = new Set([
    ...compileConstraints(strategy.constraints, environment, where),
    ...segmentChecks(strategy.segments, environment),
  ]);
  const stickiness = parameters.stickiness;
  return {
    checks: [...checks],
    own: own === ALWAYS ? undefined : own,
    result:
      own === ALWAYS && checks.size === 0
        ? environment.results.static
        : environment.results.targeted,
    variants: compileVariants(strategy.variants, {
      groupPrefix: local.groupPrefix,
      fallbackStickiness: typeof stickiness === 'string' ? stickiness : undefined,
      random: environment.random,
      maxValueLength: environment.maxValueLength,
      results: environment.results,
      reporter: environment.reporter,
    }),
  };
}
