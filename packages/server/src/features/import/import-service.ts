import type { ExportResult, ImportRequest, ImportValidation } from '@flags/schemas';
import type { Database, Queryable } from '../../db/database.js';
import { ApiError } from '../../errors.js';
import { bumpConfigRevision, type RevisionTracker } from '../../revision.js';
import {
  environmentFeature,
  type ImportPlan,
  planImport,
  readImportContext,
  tagTypeOf,
  tagValueOf,
} from './import-validation.js';

const json = (value: unknown) => JSON.stringify(value);

/** Arbitrary constant naming the advisory lock that serializes imports (per schema). */
const IMPORT_LOCK_KEY = 7_314_223;

const stringParameters = (parameters: Record<string, unknown> | undefined) => {
  const out: Record<string, string> = {};
  for (const key of Object.keys(parameters ?? {})) out[key] = String(parameters![key]);
  return out;
};

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
   * `/import`: validation, then every write in one transaction (read and checked again inside it,
   * so a concurrent change cannot slip between the check and the writes).
   */
  async import(request: ImportRequest, actor: string): Promise<void> {
    await this.db.transaction(async (tx) => {
      // One import at a time: concurrent ones touching the same rows in another order would
      // deadlock on PostgreSQL; serialized, each lands whole, one after the other.
      await tx.query('SELECT pg_advisory_xact_lock($1, hashtext(current_schema()))', [
        IMPORT_LOCK_KEY,
      ]);
      const plan = planImport(request, await readImportContext(tx, request));
      if (plan.errors.length > 0) {
        const [first] = plan.errors;
        throw new ApiError(
          'IMPORT_REJECTED',
          `Import rejected: ${first!.message} ${first!.affectedItems.join(', ')}`,
          plan.errors.map((error) => `${error.message} ${error.affectedItems.join(', ')}`),
        );
      }
      await writeImport(tx, request, plan, actor);
    });
    this.revisions.invalidate();
  }
}

async function writeImport(
  tx: Queryable,
  request: ImportRequest,
  plan: ImportPlan,
  actor: string,
): Promise<void> {
  const { project, environment, data } = request;
  const names = json([...new Set(data.features.map((feature) => feature.name))]);

  await tx.query(
    `INSERT INTO project_environments (project_id, environment_name) VALUES ($1, $2)
     ON CONFLICT DO NOTHING`,
    [project, environment],
  );

  await tx.query(
    `INSERT INTO features (name, project, type, description, stale, impression_data)
     SELECT x.name, $2, x.type, x.description, x.stale, x.impression_data
       FROM jsonb_to_recordset($1::jsonb)
         AS x(name text, type text, description text, stale boolean, impression_data boolean)
     ON CONFLICT (name) DO UPDATE
       SET type = EXCLUDED.type, description = EXCLUDED.description,
           stale = EXCLUDED.stale, impression_data = EXCLUDED.impression_data`,
    [
      json(
        data.features.map((feature) => ({
          name: feature.name,
          type: feature.type ?? 'release',
          description: feature.description ?? null,
          stale: feature.stale ?? false,
          impression_data: feature.impressionData ?? false,
        })),
      ),
      project,
    ],
  );

  // Enabled state (and variants when the entry carries them) from featureEnvironments; features
  // without an entry keep their state (a new one starts disabled).
  const environments = new Map<string, { enabled: boolean; variants: unknown[] | undefined }>();
  for (const entry of data.featureEnvironments ?? []) {
    environments.set(environmentFeature(entry), {
      enabled: entry.enabled,
      variants: entry.variants,
    });
  }
  const withVariants: unknown[] = [];
  const enabledOnly: unknown[] = [];
  for (const name of new Set(data.features.map((feature) => feature.name))) {
    const entry = environments.get(name);
    if (!entry) continue;
    if (entry.variants)
      withVariants.push({ name, enabled: entry.enabled, variants: entry.variants });
    else enabledOnly.push({ name, enabled: entry.enabled });
  }
  await tx.query(
    `INSERT INTO feature_environments (feature_name, environment, enabled, variants)
     SELECT x.name, $2, x.enabled, x.variants
       FROM jsonb_to_recordset($1::jsonb) AS x(name text, enabled boolean, variants jsonb)
     ON CONFLICT (feature_name, environment) DO UPDATE
       SET enabled = EXCLUDED.enabled, variants = EXCLUDED.variants`,
    [json(withVariants), environment],
  );
  await tx.query(
    `INSERT INTO feature_environments (feature_name, environment, enabled)
     SELECT x.name, $2, x.enabled FROM jsonb_to_recordset($1::jsonb) AS x(name text, enabled boolean)
     ON CONFLICT (feature_name, environment) DO UPDATE SET enabled = EXCLUDED.enabled`,
    [json(enabledOnly), environment],
  );
  await tx.query(
    `INSERT INTO feature_environments (feature_name, environment)
     SELECT value, $2 FROM jsonb_array_elements_text($1::jsonb)
     ON CONFLICT DO NOTHING`,
    [names, environment],
  );

  // Strategies of the imported features in the target environment are replaced.
  await tx.query(
    `DELETE FROM feature_strategies
      WHERE environment = $1 AND feature_name IN (SELECT jsonb_array_elements_text($2::jsonb))`,
    [environment, names],
  );
  await tx.query(
    `INSERT INTO feature_strategies
       (feature_name, environment, strategy_name, title, disabled, sort_order, position,
        parameters, constraints, variants, segments)
     SELECT x.feature_name, $2, x.name, x.title, x.disabled, x.sort_order, x.position,
            x.parameters, x.constraints, x.variants, x.segments
       FROM jsonb_to_recordset($1::jsonb)
         AS x(feature_name text, name text, title text, disabled boolean, sort_order integer,
              position integer, parameters jsonb, constraints jsonb, variants jsonb, segments jsonb)`,
    [
      json(
        data.featureStrategies.map((strategy, position) => ({
          feature_name: strategy.featureName,
          name: strategy.name,
          title: strategy.title ?? null,
          disabled: strategy.disabled ?? false,
          sort_order: Math.trunc(strategy.sortOrder ?? 0),
          position,
          parameters: stringParameters(strategy.parameters),
          constraints: (strategy.constraints ?? []).map((constraint) => ({
            values: [],
            inverted: false,
            caseInsensitive: false,
            ...constraint,
          })),
          variants: strategy.variants ?? [],
          segments: (strategy.segments ?? []).map((id) => plan.segmentIds.get(id)),
        })),
      ),
      environment,
    ],
  );

  await tx.query(
    `INSERT INTO tag_types (name, description, icon)
     SELECT x.name, x.description, x.icon
       FROM jsonb_to_recordset($1::jsonb) AS x(name text, description text, icon text)
     ON CONFLICT (name) DO NOTHING`,
    [json(data.tagTypes)],
  );
  // Tags of the imported features become exactly the payload's (kept rows keep their timestamps).
  const tags = json(
    (data.featureTags ?? []).map((tag) => ({
      feature_name: tag.featureName,
      tag_type: tagTypeOf(tag),
      tag_value: tagValueOf(tag),
    })),
  );
  await tx.query(
    `DELETE FROM feature_tags t
      WHERE t.feature_name IN (SELECT jsonb_array_elements_text($1::jsonb))
        AND NOT EXISTS (
          SELECT 1 FROM jsonb_to_recordset($2::jsonb) AS x(feature_name text, tag_type text, tag_value text)
           WHERE x.feature_name = t.feature_name AND x.tag_type = t.tag_type AND x.tag_value = t.tag_value)`,
    [names, tags],
  );
  await tx.query(
    `INSERT INTO feature_tags (feature_name, tag_type, tag_value)
     SELECT x.feature_name, x.tag_type, x.tag_value
       FROM jsonb_to_recordset($1::jsonb) AS x(feature_name text, tag_type text, tag_value text)
     ON CONFLICT DO NOTHING`,
    [tags],
  );

  // Context fields are created, or their legal values merged (existing values first).
  await tx.query(
    `INSERT INTO context_fields (name, description, stickiness, sort_order, legal_values)
     SELECT x.name, x.description, x.stickiness, x.sort_order, x.legal_values
       FROM jsonb_to_recordset($1::jsonb)
         AS x(name text, description text, stickiness boolean, sort_order integer, legal_values jsonb)
     ON CONFLICT (name) DO UPDATE
       SET legal_values = context_fields.legal_values || COALESCE((
             SELECT jsonb_agg(v) FROM jsonb_array_elements(EXCLUDED.legal_values) v
              WHERE NOT EXISTS (SELECT 1 FROM jsonb_array_elements(context_fields.legal_values) e
                                 WHERE e->>'value' = v->>'value')), '[]'::jsonb)`,
    [
      json(
        (data.contextFields ?? []).map((field) => ({
          name: field.name,
          description: field.description ?? null,
          stickiness: field.stickiness ?? false,
          sort_order: field.sortOrder ?? 0,
          legal_values: field.legalValues ?? [],
        })),
      ),
    ],
  );

  await tx.query(
    'DELETE FROM feature_dependencies WHERE child IN (SELECT jsonb_array_elements_text($1::jsonb))',
    [names],
  );
  await tx.query(
    `INSERT INTO feature_dependencies (child, parent, enabled, variants)
     SELECT x.child, x.parent, x.enabled, x.variants
       FROM jsonb_to_recordset($1::jsonb) AS x(child text, parent text, enabled boolean, variants jsonb)
     ON CONFLICT (parent, child) DO UPDATE SET enabled = EXCLUDED.enabled, variants = EXCLUDED.variants`,
    [
      json(
        (data.dependencies ?? []).flatMap((entry) =>
          entry.dependencies.map((parent) => {
            const enabled = parent.enabled ?? true;
            return {
              child: entry.feature,
              parent: parent.feature,
              enabled,
              variants: enabled ? (parent.variants ?? []) : [],
            };
          }),
        ),
      ),
    ],
  );

  await tx.query(
    `INSERT INTO events (type, created_by, project, environment, data)
     VALUES ('features-imported', $1, $2, $3, $4::jsonb)`,
    [actor, project, environment, json({ features: data.features.length })],
  );
  await bumpConfigRevision(tx);
}

/** Which features `/export` selects: tag, then explicit names, then project, then all. */
export interface ExportSelection {
  environment: string;
  features?: string[];
  tag?: string;
  project?: string;
}

interface FeatureRow {
  name: string;
  description: string | null;
  type: string;
  project: string;
  stale: boolean;
  impression_data: boolean;
  archived: boolean;
}

/** `/export`: the `data` object `/import` takes, for one environment. */
export async function exportFeatures(
  db: Database,
  selection: ExportSelection,
): Promise<ExportResult> {
  const columns = `name, description, type, project, stale, impression_data,
                   archived_at IS NOT NULL AS archived`;
  let features: FeatureRow[];
  if (selection.tag) {
    const colon = selection.tag.indexOf(':');
    features = await db.query<FeatureRow>(
      `SELECT ${columns} FROM features f
        WHERE archived_at IS NULL AND EXISTS (
          SELECT 1 FROM feature_tags t WHERE t.feature_name = f.name
             AND (t.tag_value = $1 OR (t.tag_type = $2 AND t.tag_value = $3)))
        ORDER BY name`,
      [selection.tag, selection.tag.slice(0, colon), selection.tag.slice(colon + 1)],
    );
  } else if (selection.features && selection.features.length > 0) {
    features = await db.query<FeatureRow>(
      `SELECT ${columns} FROM features
        WHERE name IN (SELECT jsonb_array_elements_text($1::jsonb)) ORDER BY name`,
      [json(selection.features)],
    );
  } else {
    features = await db.query<FeatureRow>(
      `SELECT ${columns} FROM features
        WHERE archived_at IS NULL AND ($1::text IS NULL OR project = $1) ORDER BY name`,
      [selection.project ?? null],
    );
  }
  const names = json(features.map((feature) => feature.name));
  const inNames = 'IN (SELECT jsonb_array_elements_text($1::jsonb))';
  const [strategies, environments, tags, dependencies] = await Promise.all([
    db.query<{
      id: string;
      strategy_name: string;
      feature_name: string;
      title: string | null;
      disabled: boolean;
      sort_order: number;
      parameters: Record<string, string>;
      constraints: NonNullable<ExportResult['featureStrategies'][number]['constraints']>;
      variants: NonNullable<ExportResult['featureStrategies'][number]['variants']>;
      segments: number[];
    }>(
      `SELECT id, strategy_name, feature_name, title, disabled, sort_order, parameters, constraints,
              variants, segments
         FROM feature_strategies WHERE feature_name ${inNames} AND environment = $2
        ORDER BY feature_name, sort_order, created_at, position, id`,
      [names, selection.environment],
    ),
    db.query<{ feature_name: string; enabled: boolean; variants: unknown[] }>(
      `SELECT feature_name, enabled, variants FROM feature_environments
        WHERE feature_name ${inNames} AND environment = $2`,
      [names, selection.environment],
    ),
    db.query<{ feature_name: string; tag_type: string; tag_value: string }>(
      `SELECT feature_name, tag_type, tag_value FROM feature_tags WHERE feature_name ${inNames}
        ORDER BY feature_name, tag_type, tag_value`,
      [names],
    ),
    db.query<{ child: string; parent: string; enabled: boolean; variants: string[] }>(
      `SELECT child, parent, enabled, variants FROM feature_dependencies WHERE child ${inNames}
        ORDER BY child, parent`,
      [names],
    ),
  ]);

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
  const usedTagTypes = new Set(tags.map((tag) => tag.tag_type));
  const [contextFields, segments, tagTypes] = await Promise.all([
    db.query<{
      name: string;
      description: string | null;
      stickiness: boolean;
      sort_order: number;
      legal_values: { value: string; description?: string }[];
    }>(
      `SELECT name, description, stickiness, sort_order, legal_values FROM context_fields
        WHERE name ${inNames} ORDER BY name`,
      [json([...usedContext])],
    ),
    db.query<{ id: number; name: string }>(
      `SELECT id, name FROM segments WHERE id IN (SELECT (jsonb_array_elements_text($1::jsonb))::int)
        ORDER BY id`,
      [json([...usedSegments])],
    ),
    db.query<{ name: string; description: string | null; icon: string | null }>(
      `SELECT name, description, icon FROM tag_types WHERE name ${inNames} ORDER BY name`,
      [json([...usedTagTypes])],
    ),
  ]);

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
    featureStrategies: strategies.map((row) => ({
      id: row.id,
      name: row.strategy_name,
      featureName: row.feature_name,
      title: row.title,
      disabled: row.disabled,
      sortOrder: row.sort_order,
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
        variants: (row?.variants ?? []) as NonNullable<
          ExportResult['featureEnvironments']
        >[number]['variants'],
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
