import { readFile } from 'node:fs/promises';
import { ConfigError } from '@flags/config';
import type { ClientFeature, ClientFeatures } from '@flags/schemas';
import { payloadProblem } from '../sync/validate.js';

/**
 * The flags of an offline bootstrap file, as Unleash Edge reads it: a `/api/client/features`
 * document as it is, or a map `{"<flag>": {"enabled": true, "variant": "<name>"}}`, each entry a
 * flag on or off for everyone, with the one variant named (if any) for everyone it is on for.
 * Throws a `ConfigError` naming the file and what is wrong with it.
 */
export async function readBootstrapFile(path: string): Promise<ClientFeatures> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new ConfigError([`cannot read the bootstrap file ${path}: ${(error as Error).message}`]);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ConfigError([`the bootstrap file ${path} is not JSON: ${(error as Error).message}`]);
  }
  const flags = bootstrapFlags(parsed);
  if (typeof flags === 'string') throw new ConfigError([`the bootstrap file ${path} ${flags}`]);
  return flags;
}

/** The flags of a parsed bootstrap file, or what is wrong with it. */
export function bootstrapFlags(parsed: unknown): ClientFeatures | string {
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    return 'holds no JSON object';
  const document = parsed as Record<string, unknown>;
  if (Array.isArray(document.features)) {
    // Checked as the proxy checks an upstream's payload, which it would otherwise refuse later.
    const flags = { version: 2, ...document };
    const problem = payloadProblem(flags);
    return problem === undefined
      ? (flags as ClientFeatures)
      : `is not a client-features document: ${problem}`;
  }
  const features: ClientFeature[] = [];
  for (const [name, entry] of Object.entries(document)) {
    const { enabled, variant } = (entry ?? {}) as { enabled?: unknown; variant?: unknown };
    if (typeof enabled !== 'boolean')
      return `gives flag "${name}" no "enabled": true or false (a simple entry is {"enabled": true, "variant": "<name>"})`;
    if (variant !== undefined && variant !== null && typeof variant !== 'string')
      return `gives flag "${name}" a "variant" that is not a name`;
    features.push({
      name,
      enabled,
      strategies: [{ name: 'default', parameters: {}, constraints: [] }],
      variants:
        typeof variant === 'string'
          ? [{ name: variant, weight: 1000, weightType: 'fix', stickiness: 'default' }]
          : [],
    });
  }
  return { version: 2, features };
}
