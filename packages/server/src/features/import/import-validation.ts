import type { ImportConstraint, ImportRequest } from '@flags/schemas';
import { constraintProblems, payloadProblems } from '../constraint-rules.js';

export type ValidationItem = {
  message: string;
  affectedItems: string[];
};

/** Everything the import needs to know about the target database (`readImportContext`). */
export interface ImportContext {
  projectExists: boolean;
  environmentExists: boolean;
  /** Existing features among the payload's names and the dependency parents. */
  existing: Map<string, { project: string; archived: boolean }>;
  strategies: Map<string, { builtIn: boolean }>;
  contextFields: Map<string, { legalValues: { value: string; description?: string }[] }>;
  /** Segment name → { id, project }. */
  segments: Map<string, { id: number; project: string | null }>;
  tagTypes: Set<string>;
}

export interface ImportPlan {
  errors: ValidationItem[];
  warnings: ValidationItem[];
  /** Payload segment id → target segment id. */
  segmentIds: Map<number, number>;
}

const unique = (items: Iterable<string>) => [...new Set(items)];

/** The feature a featureEnvironments entry belongs to (Unleash exports put it in `name` too). */
export const environmentFeature = (entry: { featureName?: string; name: string }) =>
  entry.featureName ?? entry.name;

export const tagTypeOf = (tag: { tagType?: string; type?: string }) => tag.tagType ?? tag.type;
export const tagValueOf = (tag: { tagValue?: string; value?: string }) => tag.tagValue ?? tag.value;

function constraintValues(constraint: ImportConstraint): string[] {
  const values = [...(constraint.values ?? [])];
  if (constraint.value !== undefined) values.push(constraint.value);
  return values;
}

/**
 * Every rule an import must pass, checked before anything is written. Each error names the
 * offending items; the same list answers `/validate`.
 */
export function planImport(request: ImportRequest, context: ImportContext): ImportPlan {
  const { data, project, environment } = request;
  const errors: ValidationItem[] = [];
  const warnings: ValidationItem[] = [];
  const add = (list: ValidationItem[], message: string, items: Iterable<string>) => {
    const affectedItems = unique(items);
    if (affectedItems.length > 0) list.push({ message, affectedItems });
  };

  if (!context.projectExists) add(errors, 'The target project does not exist:', [project]);
  if (!context.environmentExists)
    add(errors, 'The target environment does not exist:', [environment]);

  const names = data.features.map((feature) => feature.name);
  const nameSet = new Set(names);
  const seen = new Set<string>();
  const duplicates: string[] = [];
  for (const name of names) {
    if (seen.has(name)) duplicates.push(name);
    seen.add(name);
  }
  add(errors, 'The import data contains these feature names more than once:', duplicates);

  add(
    errors,
    'These strategies do not exist on this server and must be created first:',
    data.featureStrategies
      .map((strategy) => strategy.name)
      .filter((name) => !context.strategies.has(name)),
  );

  const archived: string[] = [];
  const elsewhere: string[] = [];
  const overwritten: string[] = [];
  for (const name of unique(names)) {
    const existing = context.existing.get(name);
    if (!existing) continue;
    if (existing.project !== project) elsewhere.push(`${name} (in project ${existing.project})`);
    else if (existing.archived) archived.push(name);
    else overwritten.push(name);
  }
  add(errors, 'These features exist archived; revive them before importing:', archived);
  add(errors, `These features already exist in projects other than ${project}:`, elsewhere);

  const unknownFeatureRefs = [
    ...data.featureStrategies.map((strategy) => strategy.featureName ?? '(no featureName)'),
    ...(data.featureEnvironments ?? []).map(environmentFeature),
    ...(data.featureTags ?? []).map((tag) => tag.featureName),
    ...(data.dependencies ?? []).map((entry) => entry.feature),
  ].filter((name) => !nameSet.has(name));
  add(errors, 'These entries refer to features that are not in data.features:', unknownFeatureRefs);

  // Segments are matched by name: payload id → payload name → the target's segment of that name.
  const segmentIds = new Map<number, number>();
  const payloadSegments = new Map(
    (data.segments ?? []).map((segment) => [segment.id, segment.name]),
  );
  const missingSegments: string[] = [];
  for (const segment of data.segments ?? []) {
    const target = context.segments.get(segment.name);
    if (!target || (target.project !== null && target.project !== project)) {
      missingSegments.push(segment.name);
    } else segmentIds.set(segment.id, target.id);
  }
  for (const strategy of data.featureStrategies) {
    for (const id of strategy.segments ?? []) {
      if (!payloadSegments.has(id))
        missingSegments.push(`segment id ${id} (not listed in data.segments)`);
    }
  }
  add(errors, 'These segments do not exist on this server:', missingSegments);

  // Legal values: the target's values merged with the imported field's values.
  const legal = new Map<string, Set<string>>();
  for (const [name, field] of context.contextFields) {
    legal.set(name, new Set(field.legalValues.map((entry) => entry.value)));
  }
  for (const field of data.contextFields ?? []) {
    const set = legal.get(field.name) ?? new Set<string>();
    for (const entry of field.legalValues ?? []) set.add(entry.value);
    legal.set(field.name, set);
  }
  const illegal: string[] = [];
  for (const strategy of data.featureStrategies) {
    for (const constraint of strategy.constraints ?? []) {
      const allowed = legal.get(constraint.contextName);
      if (!allowed || allowed.size === 0) continue;
      for (const value of constraintValues(constraint)) {
        if (!allowed.has(value)) {
          illegal.push(`${strategy.featureName ?? '?'}: ${constraint.contextName} = ${value}`);
        }
      }
    }
  }
  add(errors, 'These constraint values are not legal values of their context field:', illegal);

  // The rules of constraints and payloads every other write keeps (legal values are checked above,
  // with the imported fields' values merged in).
  const noLegalValues = new Map<string, Set<string>>();
  add(
    errors,
    'These constraints or variant payloads are invalid:',
    data.featureStrategies.flatMap((strategy, n) => [
      ...constraintProblems(
        strategy.constraints ?? [],
        noLegalValues,
        `data/featureStrategies/${n}/constraints`,
      ),
      ...payloadProblems(strategy.variants ?? [], `data/featureStrategies/${n}/variants`),
    ]),
  );
  add(errors, 'These variant payloads are invalid:', [
    ...data.features.flatMap((feature, n) =>
      payloadProblems(feature.variants ?? [], `data/features/${n}/variants`),
    ),
    ...(data.featureEnvironments ?? []).flatMap((entry, n) =>
      payloadProblems(entry.variants ?? [], `data/featureEnvironments/${n}/variants`),
    ),
  ]);

  const unknownParents: string[] = [];
  const selfDependent: string[] = [];
  for (const entry of data.dependencies ?? []) {
    for (const parent of entry.dependencies) {
      if (parent.feature === entry.feature) selfDependent.push(entry.feature);
      else if (!nameSet.has(parent.feature)) {
        const existing = context.existing.get(parent.feature);
        if (!existing || existing.archived || existing.project !== project) {
          unknownParents.push(parent.feature);
        }
      }
    }
  }
  add(errors, 'These dependencies refer to unknown parent features:', unknownParents);
  add(errors, 'These features depend on themselves:', selfDependent);

  const payloadTagTypes = new Set(data.tagTypes.map((type) => type.name));
  const tagProblems: string[] = [];
  for (const tag of data.featureTags ?? []) {
    const type = tagTypeOf(tag);
    const value = tagValueOf(tag);
    if (!type || !value) tagProblems.push(`${tag.featureName}: tag without type or value`);
    else if (!payloadTagTypes.has(type) && !context.tagTypes.has(type)) {
      tagProblems.push(`${tag.featureName}: unknown tag type ${type}`);
    } else if (value.length < 2 || value.length > 50) {
      tagProblems.push(`${tag.featureName}: tag value "${value}" must have 2 to 50 characters`);
    }
  }
  add(errors, 'These feature tags are invalid:', tagProblems);

  add(
    warnings,
    'The following strategy types will be used in import. Make sure their parameters are configured as in the source environment:',
    data.featureStrategies
      .map((strategy) => strategy.name)
      .filter((name) => context.strategies.get(name)?.builtIn === false),
  );
  add(
    warnings,
    'The following features already exist in this project and will be overwritten:',
    overwritten,
  );

  return { errors, warnings, segmentIds };
}
