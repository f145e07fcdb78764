import type { ExportQuery, ExportResult } from '@flags/schemas';
import type { Database } from '../../db/database.js';
import { ApiError } from '../../errors.js';
import { environmentExists } from '../environments/environment-store.js';
import { readFeatureDetails, readReferenced, selectFeatures } from './export-store.js';

type Variants = NonNullable<ExportResult['featureEnvironments']>[number]['variants'];

/**
 * `/export`: the `data` object `/import` takes, for one environment: the selected features with
 * their strategies, state, tags and parents, plus the context fields, segments and tag types
 * those refer to.
 */
export async function exportFeatures(db: Database, selection: ExportQuery): Promise<ExportResult> {
  if (!(await environmentExists(db, selection.environment))) {
    throw new ApiError('NOT_FOUND', `Environment "${selection.environment}" does not exist.`);
  }
  const features = await selectFeatures(db, selection);
  const { strategies, environments, tags, dependencies } = await readFeatureDetails(
    db,
    features.map((feature) => feature.name),
    selection.environment,
  );

  const usedContext = new Set<string>();
  const usedSegments = new Set<number>();
  for (const strategy of strategies) {
    for (const constraint of strategy.constraints) usedContext.add(constraint.contextName);
    if (strategy.parameters.stickiness) usedContext.add(strategy.parameters.stickiness);
    for (const variant of strategy.variants) usedContext.add(variant.stickiness);
    for (const id of strategy.segments) usedSegments.add(id);
  }
  const enabledByFeature = new Map(environments.map((row) => [row.feature_name, row]));
  for (const row of environments) {
    for (const variant of row.variants as {
      stickiness?: string;
      overrides?: { contextName: string }[];
    }[]) {
      if (variant.stickiness) usedContext.add(variant.stickiness);
      for (const override of variant.overrides ?? []) usedContext.add(override.contextName);
    }
  }
  const { contextFields, segments, tagTypes } = await readReferenced(db, {
    contextFields: [...usedContext],
    segments: [...usedSegments],
    tagTypes: [...new Set(tags.map((tag) => tag.tag_type))],
  });

  const dependenciesByChild = new Map<
    string,
    { feature: string; enabled: boolean; variants?: string[] }[]
  >();
  for (const row of dependencies) {
    const list = dependenciesByChild.get(row.child) ?? [];
    list.push({
      feature: row.parent,
      enabled: row.enabled,
      ...(row.variants.length > 0 ? { variants: row.variants } : {}),
    });
    dependenciesByChild.set(row.child, list);
  }

  const positions = positionsInFeature(strategies);

  return {
    features: features.map((row) => ({
      name: row.name,
      description: row.description,
      type: row.type,
      project: row.project,
      stale: row.stale,
      impressionData: row.impression_data,
      archived: row.archived,
    })),
    featureStrategies: strategies.map((row, index) => ({
      id: row.id,
      name: row.strategy_name,
      featureName: row.feature_name,
      title: row.title,
      disabled: row.disabled,
      sortOrder: positions[index]!,
      parameters: row.parameters,
      constraints: row.constraints,
      variants: row.variants,
      segments: row.segments,
    })),
    featureEnvironments: features.map((feature) => {
      const row = enabledByFeature.get(feature.name);
      return {
        name: feature.name,
        featureName: feature.name,
        environment: selection.environment,
        enabled: row?.enabled ?? false,
        variants: (row?.variants ?? []) as Variants,
      };
    }),
    contextFields: contextFields.map((row) => ({
      name: row.name,
      ...(row.description !== null ? { description: row.description } : {}),
      stickiness: row.stickiness,
      sortOrder: row.sort_order,
      legalValues: row.legal_values,
    })),
    featureTags: tags.map((row) => ({
      featureName: row.feature_name,
      tagType: row.tag_type,
      tagValue: row.tag_value,
    })),
    segments,
    tagTypes: tagTypes.map((row) => ({
      name: row.name,
      ...(row.description !== null ? { description: row.description } : {}),
      icon: row.icon,
    })),
    dependencies: [...dependenciesByChild].map(([feature, parents]) => ({
      feature,
      dependencies: parents,
    })),
  };
}

/**
 * Each strategy's `sortOrder` on export: its position among its feature's strategies (0..n-1;
 * the rows come ordered by feature, then by the order the client API evaluates them). The stored
 * `sort_order` may tie (imports without one, strategies added through the API); an importer that
 * orders ties arbitrarily (unleash-server) would then change which strategy, and so which
 * variant, wins (issue 18).
 */
function positionsInFeature(strategies: readonly { feature_name: string }[]): number[] {
  let feature: string | undefined;
  let position = 0;
  return strategies.map((row) => {
    position = row.feature_name === feature ? position + 1 : 0;
    feature = row.feature_name;
    return position;
  });
}
