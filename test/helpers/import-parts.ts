import type { ExportResult } from '@flags/schemas';

/**
 * unleash-server's batch import reads bodies up to 500 kB (`express.json({ limit: '500kB' })` on
 * `/api/admin/features-batch`, 512,000 bytes); the request wraps the document with its project and
 * environment.
 */
export const UNLEASH_IMPORT_BODY_BYTES = 512_000;
const WRAPPER_BYTES = 200;

type FlagEntries = {
  readonly feature: ExportResult['features'][number];
  readonly strategies: ExportResult['featureStrategies'];
  readonly environments: NonNullable<ExportResult['featureEnvironments']>;
  readonly tags: NonNullable<ExportResult['featureTags']>;
  readonly dependencies: NonNullable<ExportResult['dependencies']>;
};

const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

/**
 * Splits an import document into documents whose request bodies each fit `maxBytes`, the flags in
 * their order (a parent before the children that follow it), each flag with all its entries, the
 * document's shared sections (context fields, segments, tag types) in every part. A document that
 * fits is answered as it is.
 */
export function importParts(
  document: ExportResult,
  maxBytes = UNLEASH_IMPORT_BODY_BYTES,
): ExportResult[] {
  if (bytes(document) + WRAPPER_BYTES <= maxBytes) return [document];
  const entries = new Map<string, FlagEntries>();
  for (const feature of document.features) {
    entries.set(feature.name, {
      feature,
      strategies: [],
      environments: [],
      tags: [],
      dependencies: [],
    });
  }
  const of = (name: string | undefined) => {
    const found = name === undefined ? undefined : entries.get(name);
    if (!found) throw new Error(`the import document has entries of an unlisted flag: ${name}`);
    return found;
  };
  for (const strategy of document.featureStrategies) {
    of(strategy.featureName as string | undefined).strategies.push(strategy);
  }
  for (const entry of document.featureEnvironments ?? []) {
    of(entry.featureName ?? (entry.name as string | undefined)).environments.push(entry);
  }
  for (const tag of document.featureTags ?? []) of(tag.featureName).tags.push(tag);
  for (const entry of document.dependencies ?? []) of(entry.feature).dependencies.push(entry);

  const empty = (): ExportResult => ({
    ...document,
    features: [],
    featureStrategies: [],
    featureEnvironments: [],
    featureTags: [],
    dependencies: [],
  });
  const parts: ExportResult[] = [];
  let current = empty();
  let size = bytes(current) + WRAPPER_BYTES;
  const base = size;
  for (const flag of entries.values()) {
    // Each entry costs its JSON and a comma.
    const cost =
      bytes(flag.feature) +
      1 +
      [flag.strategies, flag.environments, flag.tags, flag.dependencies]
        .flat()
        .reduce((sum: number, entry) => sum + bytes(entry) + 1, 0);
    if (base + cost > maxBytes) {
      throw new Error(`flag ${flag.feature.name} alone is over ${maxBytes} bytes of import`);
    }
    if (size + cost > maxBytes) {
      parts.push(current);
      current = empty();
      size = base;
    }
    current.features.push(flag.feature);
    current.featureStrategies.push(...flag.strategies);
    current.featureEnvironments!.push(...flag.environments);
    current.featureTags!.push(...flag.tags);
    current.dependencies!.push(...flag.dependencies);
    size += cost;
  }
  parts.push(current);
  return parts;
}
