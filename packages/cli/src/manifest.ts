import type { Desired, Payload } from './model.js';

/**
 * The OpenFeature CLI's flag manifest (`flags.json`: each flag's key, type and default value), made
 * from the files, for `openfeature generate` to write typed flag accessors. A flag without variant
 * payloads is a boolean; with payloads, its type follows theirs (`json` → object, `number` →
 * integer or float, `string`/`csv` → string; a mix → string). The default is what an evaluation
 * that fails answers: false, "", 0 or {}.
 */

export const MANIFEST_SCHEMA =
  'https://raw.githubusercontent.com/open-feature/cli/main/schema/v0/flag-manifest.json';

type FlagType = 'boolean' | 'string' | 'integer' | 'float' | 'object';

export interface ManifestFlag {
  flagType: FlagType;
  defaultValue: boolean | string | number | Record<string, never>;
  description?: string;
}

export interface Manifest {
  $schema: string;
  flags: Record<string, ManifestFlag>;
}

function typeOf(payloads: readonly Payload[]): FlagType {
  if (payloads.length === 0) return 'boolean';
  const kinds = new Set(payloads.map((payload) => payload.type));
  if (kinds.size > 1) return 'string';
  if (kinds.has('json')) return 'object';
  if (kinds.has('number'))
    return payloads.every((payload) => /^-?\d+$/.test(payload.value.trim())) ? 'integer' : 'float';
  return 'string';
}

const DEFAULTS: Record<FlagType, ManifestFlag['defaultValue']> = {
  boolean: false,
  string: '',
  integer: 0,
  float: 0,
  object: {},
};

export function manifestOf(desired: Desired): Manifest {
  const flags: Record<string, ManifestFlag> = {};
  for (const { flag } of desired.flags) {
    const payloads: Payload[] = [];
    for (const environment of Object.values(flag.environments ?? {})) {
      for (const variant of environment.variants ?? [])
        if (variant.payload) payloads.push(variant.payload);
      for (const strategy of environment.strategies ?? [])
        for (const variant of strategy.variants ?? [])
          if (variant.payload) payloads.push(variant.payload);
    }
    const flagType = typeOf(payloads);
    flags[flag.name] = {
      flagType,
      defaultValue: DEFAULTS[flagType],
      ...(flag.description ? { description: flag.description } : {}),
    };
  }
  return { $schema: MANIFEST_SCHEMA, flags };
}
