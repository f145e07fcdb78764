import type { ImportRequest } from '@flags/schemas';
import type { Actor } from '../../auth/actor.js';
import { ADVISORY_LOCK_KEYS } from '../../db/advisory-locks.js';
import type { Queryable, Transaction } from '../../db/database.js';
import { environmentExists } from '../environments/environment-store.js';
import { type NewEvent, recordEvents } from '../events/event-store.js';
import { EVENT_TYPES } from '../events/event-types.js';
import { projectExists } from '../projects/project-store.js';
import type { ImportContext } from './import-validation.js';

const json = (value: unknown) => JSON.stringify(value);

/**
 * Waits for the import lock of this schema and holds it until the transaction ends. Concurrent
 * imports touching the same rows in another order would deadlock on PostgreSQL; serialized, each
 * lands whole, one after the other.
 */
export async function lockImports(tx: Queryable): Promise<void> {
  await tx.query('SELECT pg_advisory_xact_lock($1, hashtext(current_schema()))', [
    ADVISORY_LOCK_KEYS.import,
  ]);
}

/** What `planImport` checks the payload against, read in one go. */
export async function readImportContext(
  db: Queryable,
  request: ImportRequest,
): Promise<ImportContext> {
  const data = request.data;
  const names = [
    ...new Set([
      ...data.features.map((feature) => feature.name),
      ...(data.dependencies ?? []).flatMap((entry) =>
        entry.dependencies.map((parent) => parent.feature),
      ),
    ]),
  ];
  const [projectFound, environmentFound, features, strategies, contextFields, segments, tagTypes] =
    await Promise.all([
      projectExists(db, request.project),
      environmentExists(db, request.environment),
      db.query<{ name: string; project: string; archived: boolean }>(
        `SELECT name, project, archived_at IS NOT NULL AS archived FROM features
          WHERE name IN (SELECT jsonb_array_elements_text($1::jsonb))`,
        [json(names)],
      ),
      db.query<{ name: string; built_in: boolean }>('SELECT name, built_in FROM strategies'),
      db.query<{ name: string; legal_values: { value: string; description?: string }[] }>(
        'SELECT name, legal_values FROM context_fields',
      ),
      db.query<{ id: number; name: string; project: string | null }>(
        'SELECT id, name, project FROM segments',
      ),
      db.query<{ name: string }>('SELECT name FROM tag_types'),
    ]);
  return {
    projectExists: projectFound,
    environmentExists: environmentFound,
    existing: new Map(
      features.map((row) => [row.name, { project: row.project, archived: row.archived }]),
    ),
    strategies: new Map(strategies.map((row) => [row.name, { builtIn: row.built_in }])),
    contextFields: new Map(
      contextFields.map((row) => [row.name, { legalValues: row.legal_values }]),
    ),
    segments: new Map(segments.map((row) => [row.name, { id: row.id, project: row.project }])),
    tagTypes: new Set(tagTypes.map((row) => row.name)),
  };
}

/** Every row an import writes, defaults applied and references resolved. */
export interface ImportRows {
  project: string;
  environment: string;
  /** Who imported, for the events. */
  actor: Pick<Actor, 'name' | 'userId'>;
  features: {
    name: string;
    type: string;
    description: string | null;
    stale: boolean;
    impressionData: boolean;
  }[];
  /** Features with a featureEnvironments entry; `variants` replaced only when it is given. */
  environmentStates: { name: string; enabled: boolean; variants: unknown[] | undefined }[];
  /** The strategies of the imported features in the target environment, all of them. */
  strategies: {
    featureName: string;
    name: string;
    title: string | null;
    disabled: boolean;
    sortOrder: number;
    /** The strategy's index in the payload: keeps its order among equal `sortOrder`s. */
    position: number;
    parameters: Record<string, string>;
    constraints: unknown[];
    variants: unknown[];
    /** Target segment ids. */
    segments: number[];
  }[];
  tagTypes: { name: string; description: string | undefined; icon: string | null | undefined }[];
  /** The tags of the imported features, all of them. */
  tags: { featureName: string; tagType: string; tagValue: string }[];
  contextFields: {
    name: string;
    description: string | null;
    stickiness: boolean;
    sortOrder: number;
    legalValues: { value: string; description?: string }[];
  }[];
  /** The parent links of the imported features, all of them. */
  dependencies: { child: string; parent: string; enabled: boolean; variants: string[] }[];
}

/**
 * Writes an import inside the caller's transaction: features upserted; their enabled state,
 * strategies, tags and dependencies in the environment become exactly the payload's; tag types
 * and context fields created, legal values merged. Events: `feature-created` for each new flag,
 * `feature-environment-enabled`/`-disabled` for each flag whose state in the environment changed,
 * and one `features-imported`.
 */
export async function writeImport(tx: Transaction, rows: ImportRows): Promise<void> {
  const { project, environment } = rows;
  const names = json([...new Set(rows.features.map((feature) => feature.name))]);
  const before = await tx.query<{ name: string; enabled: boolean | null }>(
    `SELECT f.name, fe.enabled FROM features f
       LEFT JOIN feature_environments fe ON fe.feature_name = f.name AND fe.environment = $2
      WHERE f.name IN (SELECT jsonb_array_elements_text($1::jsonb))`,
    [names, environment],
  );
  const enabledBefore = new Map(before.map((row) => [row.name, row.enabled ?? false]));

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
        rows.features.map((feature) => ({
          name: feature.name,
          type: feature.type,
          description: feature.description,
          stale: feature.stale,
          impression_data: feature.impressionData,
        })),
      ),
      project,
    ],
  );

  // Features without an entry keep their state (a new one starts disabled).
  const withVariants: unknown[] = [];
  const enabledOnly: unknown[] = [];
  for (const { name, enabled, variants } of rows.environmentStates) {
    if (variants) withVariants.push({ name, enabled, variants });
    else enabledOnly.push({ name, enabled });
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
        rows.strategies.map((strategy) => ({
          feature_name: strategy.featureName,
          name: strategy.name,
          title: strategy.title,
          disabled: strategy.disabled,
          sort_order: strategy.sortOrder,
          position: strategy.position,
          parameters: strategy.parameters,
          constraints: strategy.constraints,
          variants: strategy.variants,
          segments: strategy.segments,
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
    [json(rows.tagTypes)],
  );
  // Tags that stay keep their rows (and timestamps); the others go, the new ones come.
  const tags = json(
    rows.tags.map((tag) => ({
      feature_name: tag.featureName,
      tag_type: tag.tagType,
      tag_value: tag.tagValue,
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

  // An existing field keeps its values first; the payload's new values are appended.
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
        rows.contextFields.map((field) => ({
          name: field.name,
          description: field.description,
          stickiness: field.stickiness,
          sort_order: field.sortOrder,
          legal_values: field.legalValues,
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
    [json(rows.dependencies)],
  );

  await tx.query(
    'UPDATE features SET version = version + 1 WHERE name IN (SELECT jsonb_array_elements_text($1::jsonb))',
    [names],
  );
  await recordEvents(tx, importEvents(rows, enabledBefore));
}

/** The events of an import, given each imported flag's state before it (absent: new). */
function importEvents(rows: ImportRows, enabledBefore: ReadonlyMap<string, boolean>): NewEvent[] {
  const { project, environment, actor: by } = rows;
  const events: NewEvent[] = [];
  const created = new Set<string>();
  for (const feature of rows.features) {
    if (enabledBefore.has(feature.name) || created.has(feature.name)) continue;
    created.add(feature.name);
    events.push({
      type: EVENT_TYPES.featureCreated,
      by,
      project,
      featureName: feature.name,
      data: { ...feature, project },
    });
  }
  for (const state of rows.environmentStates) {
    if ((enabledBefore.get(state.name) ?? false) === state.enabled) continue;
    events.push({
      type: state.enabled
        ? EVENT_TYPES.featureEnvironmentEnabled
        : EVENT_TYPES.featureEnvironmentDisabled,
      by,
      project,
      environment,
      featureName: state.name,
    });
  }
  events.push({
    type: EVENT_TYPES.featuresImported,
    by,
    project,
    environment,
    data: { features: rows.features.length },
  });
  return events;
}
