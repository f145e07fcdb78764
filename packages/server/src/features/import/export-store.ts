import type { ExportQuery, ExportResult } from '@flags/schemas';
import type { Database } from '../../db/database.js';

const json = (value: unknown) => JSON.stringify(value);
const inNames = 'IN (SELECT jsonb_array_elements_text($1::jsonb))';

export interface FeatureRow {
  name: string;
  description: string | null;
  type: string;
  project: string;
  stale: boolean;
  impression_data: boolean;
  archived: boolean;
}

type StrategyWire = ExportResult['featureStrategies'][number];

export interface StrategyRow {
  id: string;
  strategy_name: string;
  feature_name: string;
  title: string | null;
  disabled: boolean;
  sort_order: number;
  parameters: Record<string, string>;
  constraints: NonNullable<StrategyWire['constraints']>;
  variants: NonNullable<StrategyWire['variants']>;
  segments: number[];
}

export interface FeatureEnvironmentRow {
  feature_name: string;
  enabled: boolean;
  variants: unknown[];
}

export interface TagRow {
  feature_name: string;
  tag_type: string;
  tag_value: string;
}

export interface DependencyRow {
  child: string;
  parent: string;
  enabled: boolean;
  variants: string[];
}

export interface ContextFieldRow {
  name: string;
  description: string | null;
  stickiness: boolean;
  sort_order: number;
  legal_values: { value: string; description?: string }[];
}

export interface TagTypeRow {
  name: string;
  description: string | null;
  icon: string | null;
}

/** The features `selection` picks (which ones: `exportQuerySchema`), ordered by name. */
export async function selectFeatures(db: Database, selection: ExportQuery): Promise<FeatureRow[]> {
  const columns = `name, description, type, project, stale, impression_data,
                   archived_at IS NOT NULL AS archived`;
  if (selection.tag) {
    const colon = selection.tag.indexOf(':');
    return db.query<FeatureRow>(
      `SELECT ${columns} FROM features f
        WHERE archived_at IS NULL AND EXISTS (
          SELECT 1 FROM feature_tags t WHERE t.feature_name = f.name
             AND (t.tag_value = $1 OR (t.tag_type = $2 AND t.tag_value = $3)))
        ORDER BY name`,
      [selection.tag, selection.tag.slice(0, colon), selection.tag.slice(colon + 1)],
    );
  }
  if (selection.features && selection.features.length > 0) {
    return db.query<FeatureRow>(
      `SELECT ${columns} FROM features WHERE name ${inNames} ORDER BY name`,
      [json(selection.features)],
    );
  }
  return db.query<FeatureRow>(
    `SELECT ${columns} FROM features
      WHERE archived_at IS NULL AND ($1::text IS NULL OR project = $1) ORDER BY name`,
    [selection.project ?? null],
  );
}

/** What the named features hold: their strategies and state in `environment`, tags, parents. */
export async function readFeatureDetails(
  db: Database,
  names: readonly string[],
  environment: string,
): Promise<{
  strategies: StrategyRow[];
  environments: FeatureEnvironmentRow[];
  tags: TagRow[];
  dependencies: DependencyRow[];
}> {
  const namesJson = json(names);
  const [strategies, environments, tags, dependencies] = await Promise.all([
    db.query<StrategyRow>(
      `SELECT id, strategy_name, feature_name, title, disabled, sort_order, parameters, constraints,
              variants, segments
         FROM feature_strategies WHERE feature_name ${inNames} AND environment = $2
        ORDER BY feature_name, sort_order, created_at, position, id`,
      [namesJson, environment],
    ),
    db.query<FeatureEnvironmentRow>(
      `SELECT feature_name, enabled, variants FROM feature_environments
        WHERE feature_name ${inNames} AND environment = $2`,
      [namesJson, environment],
    ),
    db.query<TagRow>(
      `SELECT feature_name, tag_type, tag_value FROM feature_tags WHERE feature_name ${inNames}
        ORDER BY feature_name, tag_type, tag_value`,
      [namesJson],
    ),
    db.query<DependencyRow>(
      `SELECT child, parent, enabled, variants FROM feature_dependencies WHERE child ${inNames}
        ORDER BY child, parent`,
      [namesJson],
    ),
  ]);
  return { strategies, environments, tags, dependencies };
}

/** The context fields, segments and tag types of these names and ids, the ones that exist. */
export async function readReferenced(
  db: Database,
  used: {
    contextFields: readonly string[];
    segments: readonly number[];
    tagTypes: readonly string[];
  },
): Promise<{
  contextFields: ContextFieldRow[];
  segments: { id: number; name: string }[];
  tagTypes: TagTypeRow[];
}> {
  const [contextFields, segments, tagTypes] = await Promise.all([
    db.query<ContextFieldRow>(
      `SELECT name, description, stickiness, sort_order, legal_values FROM context_fields
        WHERE name ${inNames} ORDER BY name`,
      [json(used.contextFields)],
    ),
    db.query<{ id: number; name: string }>(
      `SELECT id, name FROM segments WHERE id IN (SELECT (jsonb_array_elements_text($1::jsonb))::int)
        ORDER BY id`,
      [json(used.segments)],
    ),
    db.query<TagTypeRow>(
      `SELECT name, description, icon FROM tag_types WHERE name ${inNames} ORDER BY name`,
      [json(used.tagTypes)],
    ),
  ]);
  return { contextFields, segments, tagTypes };
}
