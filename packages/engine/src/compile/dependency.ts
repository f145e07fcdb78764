import type { Context } from '../types.js';
import { describe, flagReporter } from '../warnings.js';
import { type CompiledFlag, runFlag, type SharedEnvironment } from './feature.js';

/** One parent condition of a dependent flag. */
export type Requirement = (context: Context) => boolean;

const UNSATISFIED: Requirement = () => false;

function hasDependencies(flag: CompiledFlag): boolean {
  return Array.isArray(flag.dependencies) && flag.dependencies.length > 0;
}

function requirement(
  raw: unknown,
  child: string,
  flags: ReadonlyMap<string, CompiledFlag>,
  shared: SharedEnvironment,
): Requirement {
  const reporter = flagReporter(child, shared.onWarning);
  const { feature, enabled, variants } = (raw ?? {}) as Record<string, unknown>;
  const parent = typeof feature === 'string' ? flags.get(feature) : undefined;
  if (parent === undefined) {
    reporter.warn(`depends on missing flag ${describe(feature)}: the flag is off`);
    return UNSATISFIED;
  }
  // Only one level is followed (client specification 17): a parent that has dependencies of
  // its own (a chain or a cycle) leaves the child off.
  if (hasDependencies(parent)) {
    reporter.warn(`depends on "${parent.name}", which has dependencies itself: the flag is off`);
    return UNSATISFIED;
  }
  if (enabled === false) return (context) => !runFlag(parent, context).enabled;
  if (Array.isArray(variants) && variants.length > 0) {
    const names = new Set(variants.map(String));
    return (context) => {
      const result = runFlag(parent, context);
      return result.enabled && names.has(result.variant.name);
    };
  }
  return (context) => runFlag(parent, context).enabled;
}

/** The parent conditions of a flag, or undefined when it depends on nothing. */
export function linkDependencies(
  flag: CompiledFlag,
  flags: ReadonlyMap<string, CompiledFlag>,
  shared: SharedEnvironment,
): readonly Requirement[] | undefined {
  if (!hasDependencies(flag)) return undefined;
  return (flag.dependencies as unknown[]).map((raw) => requirement(raw, flag.name, flags, shared));
}
