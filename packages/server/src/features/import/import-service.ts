import type { ImportRequest, ImportValidation } from '@flags/schemas';
import type { Actor } from '../../auth/actor.js';
import type { Database } from '../../db/database.js';
import { ApiError } from '../../errors.js';
import type { RevisionTracker } from '../../revision.js';
import { writeConfig } from '../config-write.js';
import { type ImportRows, lockImports, readImportContext, writeImport } from './import-store.js';
import {
  environmentFeature,
  type ImportPlan,
  planImport,
  tagTypeOf,
  tagValueOf,
} from './import-validation.js';

export class ImportService {
  constructor(
    private readonly db: Database,
    private readonly revisions: RevisionTracker,
  ) {}

  /** `/validate`: the errors and warnings an import of `request` would meet; writes nothing. */
  async validate(request: ImportRequest): Promise<ImportValidation> {
    const plan = planImport(request, await readImportContext(this.db, request));
    return { errors: plan.errors, warnings: plan.warnings, permissions: [] };
  }

  /**
   * `/import`: all or nothing. One transaction, one import at a time: the rules are checked
   * against what the database holds inside it (so a concurrent change cannot slip between the
   * check and the writes), then every row is written.
   */
  async import(request: ImportRequest, actor: Pick<Actor, 'name' | 'userId'>): Promise<void> {
    await writeConfig(this.db, this.revisions, async (tx) => {
      await lockImports(tx);
      const plan = planImport(request, await readImportContext(tx, request));
      if (plan.errors.length > 0) {
        const [first] = plan.errors;
        throw new ApiError(
          'IMPORT_REJECTED',
          `Import rejected: ${first!.message} ${first!.affectedItems.join(', ')}`,
          plan.errors.map((error) => `${error.message} ${error.affectedItems.join(', ')}`),
        );
      }
      await writeImport(tx, importRows(request, plan, actor));
    });
  }
}

const stringParameters = (parameters: Record<string, unknown> | undefined) => {
  const out: Record<string, string> = {};
  for (const key of Object.keys(parameters ?? {})) out[key] = String(parameters![key]);
  return out;
};

/**
 * A flag's variants in name order, as unleash-server stores every flag's variants of an environment
 * (`localeCompare` of the names, whatever order the import gave): a variant is picked by where the
 * context's hash falls among the weights in list order, so the same document must give the same
 * order here for the same contexts to get the same variants.
 */
function byVariantName<V extends { name: string }>(variants: readonly V[]): V[] {
  return [...variants].sort((a, b) => a.name.localeCompare(b.name, 'en'));
}

/**
 * The rows a planned import writes, with the defaults for what the payload leaves out.
 * Only called when `plan` has no errors: every strategy has a `featureName`, every tag a type
 * and value, every segment id a target.
 */
function importRows(
  request: ImportRequest,
  plan: ImportPlan,
  actor: Pick<Actor, 'name' | 'userId'>,
): ImportRows {
  const { project, environment, data } = request;

  // The last featureEnvironments entry of a feature counts.
  const entries = new Map<string, { enabled: boolean; variants: unknown[] | undefined }>();
  for (const entry of data.featureEnvironments ?? []) {
    entries.set(environmentFeature(entry), {
      enabled: entry.enabled,
      variants: entry.variants && byVariantName(entry.variants),
    });
  }
  const environmentStates: ImportRows['environmentStates'] = [];
  for (const name of new Set(data.features.map((feature) => feature.name))) {
    const entry = entries.get(name);
    if (entry) environmentStates.push({ name, ...entry });
  }

  return {
    project,
    environment,
    actor,
    features: data.features.map((feature) => ({
      name: feature.name,
      type: feature.type ?? 'release',
      description: feature.description ?? null,
      stale: feature.stale ?? false,
      impressionData: feature.impressionData ?? false,
    })),
    environmentStates,
    strategies: data.featureStrategies.map((strategy, position) => ({
      featureName: strategy.featureName!,
      name: strategy.name,
      title: strategy.title ?? null,
      disabled: strategy.disabled ?? false,
      sortOrder: Math.trunc(strategy.sortOrder ?? 0),
      position,
      parameters: stringParameters(strategy.parameters),
      constraints: (strategy.constraints ?? []).map((constraint) => ({
        values: [],
        inverted: false,
        caseInsensitive: false,
        ...constraint,
      })),
      variants: strategy.variants ?? [],
      segments: (strategy.segments ?? []).map((id) => plan.segmentIds.get(id)!),
    })),
    tagTypes: data.tagTypes.map((type) => ({
      name: type.name,
      description: type.description,
      icon: type.icon,
    })),
    tags: (data.featureTags ?? []).map((tag) => ({
      featureName: tag.featureName,
      tagType: tagTypeOf(tag)!,
      tagValue: tagValueOf(tag)!,
    })),
    contextFields: (data.contextFields ?? []).map((field) => ({
      name: field.name,
      description: field.description ?? null,
      stickiness: field.stickiness ?? false,
      sortOrder: field.sortOrder ?? 0,
      legalValues: field.legalValues ?? [],
    })),
    dependencies: (data.dependencies ?? []).flatMap((entry) =>
      entry.dependencies.map((parent) => {
        const enabled = parent.enabled ?? true;
        return {
          child: entry.feature,
          parent: parent.feature,
          enabled,
          // A link to a disabled parent has no variant condition.
          variants: enabled ? (parent.variants ?? []) : [],
        };
      }),
    ),
  };
}
