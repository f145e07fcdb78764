import type { ClientFeature } from '@flags/schemas';
import type {
  ClientFeaturesCache,
  ServedConfiguration,
} from '../client-api/client-features-cache.js';
import { everyProject } from '../client-api/client-features-store.js';

/**
 * The variant SDKs report for a flag that gave no variant (off, or on without variants): stored
 * for every flag, as it is no name a caller makes up.
 */
export const DISABLED_VARIANT = 'disabled';

/**
 * The variant names `featureName` defines in one environment (its environment variants and its
 * strategies' variants); `undefined` when the environment serves no flag of that name.
 */
export type DefinedVariants = (featureName: string) => ReadonlySet<string> | undefined;

function variantNames(feature: ClientFeature): ReadonlySet<string> {
  const names = new Set<string>();
  for (const variant of feature.variants ?? []) names.add(variant.name);
  for (const strategy of feature.strategies ?? []) {
    for (const variant of strategy.variants ?? []) names.add(variant.name);
  }
  return names;
}

/**
 * Which variant names each flag defines, read from the configuration the client API serves an
 * environment (the cached body the frontend API compiles: no query of its own while the
 * configuration is unchanged). Usage reports keep counts of these names only (issue 40: every
 * made-up name a report carried became a stored row).
 */
export class DefinedVariantsLookup {
  /** Each configuration's names per flag, built on first use (dropped with the configuration). */
  private readonly byConfiguration = new WeakMap<
    ServedConfiguration,
    Map<string, ReadonlySet<string>>
  >();

  constructor(private readonly features: ClientFeaturesCache) {}

  /** The lookup for `environment`'s current configuration. */
  async of(environment: string): Promise<DefinedVariants> {
    const served = await this.features.get(everyProject(environment));
    let names = this.byConfiguration.get(served);
    if (names === undefined) {
      names = new Map();
      this.byConfiguration.set(served, names);
    }
    const known = names;
    return (featureName) => {
      let defined = known.get(featureName);
      if (defined === undefined) {
        const feature = served.byName.get(featureName);
        if (feature === undefined) return undefined;
        defined = variantNames(feature);
        known.set(featureName, defined);
      }
      return defined;
    };
  }
}
