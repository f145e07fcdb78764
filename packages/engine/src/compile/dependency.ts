import type { Context, Evaluation } from '../types.js';
import { describe, flagReporter } from '../warnings.js';
import type { CompiledFlag, SharedEnvironment } from './feature.js';

type Requirement = (context: Context) => boolean;

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
  const own = parent.own;
  if (enabled === false) return (context) => !own(context).enabled;
  if (Array.isArray(variants) && variants.length > 0) {
    const names = new Set(variants.map(String));
    return (context) => {
      const result = own(context);
      return result.enabled && names.has(result.variant.name);
    };
  }
  return (context) => own(context).enabled;
}

/** The flag with its parents checked first; the flag itself when it has none. */
export function linkDependencies(
  flag: CompiledFlag,
  flags: ReadonlyMap<string, CompiledFlag>,
  shared: SharedEnvironment,
): (context: Context) => Evaluation {
  if (!hasDependencies(flag)) return flag.own;
  const requirements = (flag.dependencies as unknown[]).map((raw) =>
    requirement(raw, flag.name, flags, shared),
  );
  const { own } = flag;
  const { disabled } = flag.results;
  return (context) => {
    for (const satisfied of requirements) if (!satisfied(context)) return disabled;
    return own(context);
  };
}
