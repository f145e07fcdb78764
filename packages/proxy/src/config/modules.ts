import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { CustomStrategy } from '@flags/engine';
import { ConfigError } from './load.js';
import type { ContextEnricher } from './options.js';

/**
 * Loads operator files (custom strategies, context enrichers): paths resolved from the working
 * directory, CommonJS `module.exports = [...]` or an ESM default export, each an array.
 */
async function loadArrays(paths: readonly string[], what: string, cwd: string): Promise<unknown[]> {
  const items: unknown[] = [];
  const problems: string[] = [];
  for (const path of paths) {
    const file = resolve(cwd, path);
    try {
      const module = (await import(pathToFileURL(file).href)) as { default?: unknown };
      const exported = module.default ?? module;
      if (!Array.isArray(exported)) {
        problems.push(`${what} file ${file} must export an array`);
        continue;
      }
      items.push(...exported);
    } catch (error) {
      problems.push(
        `cannot load ${what} file ${file}: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return items;
}

export async function loadStrategies(
  entries: readonly (CustomStrategy | string)[],
  cwd = process.cwd(),
): Promise<CustomStrategy[]> {
  const paths = entries.filter((entry): entry is string => typeof entry === 'string');
  const objects = entries.filter((entry): entry is CustomStrategy => typeof entry !== 'string');
  const loaded = (await loadArrays(paths, 'custom strategies', cwd)) as CustomStrategy[];
  const all = [...objects, ...loaded];
  const invalid = all.filter(
    (s) => typeof s?.name !== 'string' || typeof s.isEnabled !== 'function',
  );
  if (invalid.length > 0) {
    throw new ConfigError([
      'custom strategies must be objects with a name and an isEnabled(parameters, context) method',
    ]);
  }
  return all;
}

export async function loadEnrichers(
  entries: readonly (ContextEnricher | string)[],
  cwd = process.cwd(),
): Promise<ContextEnricher[]> {
  const paths = entries.filter((entry): entry is string => typeof entry === 'string');
  const functions = entries.filter(
    (entry): entry is ContextEnricher => typeof entry === 'function',
  );
  const loaded = await loadArrays(paths, 'context enrichers', cwd);
  if (loaded.some((item) => typeof item !== 'function')) {
    throw new ConfigError([
      'context enricher files must export arrays of functions (context) => context',
    ]);
  }
  return [...functions, ...(loaded as ContextEnricher[])];
}
