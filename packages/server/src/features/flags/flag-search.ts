import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Queryable } from '../../db/database.js';
import { ApiError } from '../../errors.js';
import { filterValues, pagingProperties } from '../search-filter.js';

interface OverviewRow {
  name: string;
  type: string;
  description: string | null;
  project: string;
  stale: boolean;
  impression_data: boolean;
  created_at: Date | string;
  archived_at: Date | string | null;
  environments: {
    name: string;
    type: string;
    enabled: boolean;
    sortOrder: number;
    strategies: number;
    enabledStrategies: number;
  }[];
  tags: { type: string; value: string }[];
}

interface FlagFilter {
  readonly projects?: readonly string[] | undefined;
  readonly namePrefix?: string | undefined;
  /** `[type, value]`: a flag with any of them matches. */
  readonly tags?: readonly (readonly [string, string])[] | undefined;
  readonly query?: string | undefined;
  readonly types?: readonly string[] | undefined;
  readonly stale?: boolean | undefined;
  readonly archived: boolean;
}

const SORT_COLUMNS = { name: 'f.name', createdAt: 'f.created_at', type: 'f.type' } as const;

/** Flags matching `filter` with their environments and tags; `total` counts every match. */
async function findFlags(
  db: Queryable,
  filter: FlagFilter,
  page: { offset: number; limit: number | null; sortBy: keyof typeof SORT_COLUMNS; desc: boolean },
): Promise<{ rows: OverviewRow[]; total: number }> {
  const like =
    filter.query === undefined ? null : `%${filter.query.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  const where = `
    WHERE (f.archived_at IS NOT NULL) = $1
      AND ($2::jsonb IS NULL OR f.project IN (SELECT jsonb_array_elements_text($2::jsonb)))
      AND ($3::text IS NULL OR left(f.name, length($3::text)) = $3::text)
      AND ($4::jsonb IS NULL OR EXISTS (
            SELECT 1 FROM feature_tags t WHERE t.feature_name = f.name
               AND t.tag_type || ':' || t.tag_value IN (SELECT jsonb_array_elements_text($4::jsonb))))
      AND ($5::text IS NULL OR f.name ILIKE $5 OR f.description ILIKE $5 OR EXISTS (
            SELECT 1 FROM feature_tags t WHERE t.feature_name = f.name
               AND t.tag_type || ':' || t.tag_value ILIKE $5))
      AND ($6::jsonb IS NULL OR f.type IN (SELECT jsonb_array_elements_text($6::jsonb)))
      AND ($7::boolean IS NULL OR f.stale = $7)`;
  const params = [
    filter.archived,
    filter.projects ? JSON.stringify(filter.projects) : null,
    filter.namePrefix ?? null,
    filter.tags ? JSON.stringify(filter.tags.map(([type, value]) => `${type}:${value}`)) : null,
    like,
    filter.types ? JSON.stringify(filter.types) : null,
    filter.stale ?? null,
  ];
  const order = `${SORT_COLUMNS[page.sortBy]} ${page.desc ? 'DESC' : 'ASC'}, f.name`;
  const [rows, counted] = await Promise.all([
    db.query<OverviewRow>(
      `SELECT f.name, f.type, f.description, f.project, f.stale, f.impression_data, f.created_at,
              f.archived_at,
              COALESCE((
                SELECT jsonb_agg(jsonb_build_object(
                         'name', e.name, 'type', e.type, 'enabled', COALESCE(fe.enabled, false),
                         'sortOrder', e.sort_order,
                         'strategies', (SELECT count(*) FROM feature_strategies s
                                         WHERE s.feature_name = f.name AND s.environment = e.name),
                         'enabledStrategies', (SELECT count(*) FROM feature_strategies s
                                         WHERE s.feature_name = f.name AND s.environment = e.name
                                           AND NOT s.disabled))
                         ORDER BY e.sort_order, e.name)
                  FROM project_environments pe
                  JOIN environments e ON e.name = pe.environment_name
                  LEFT JOIN feature_environments fe
                         ON fe.feature_name = f.name AND fe.environment = e.name
                 WHERE pe.project_id = f.project), '[]'::jsonb) AS environments,
              COALESCE((SELECT jsonb_agg(jsonb_build_object('type', t.tag_type, 'value', t.tag_value)
                                         ORDER BY t.tag_type, t.tag_value)
                          FROM feature_tags t WHERE t.feature_name = f.name), '[]'::jsonb) AS tags
         FROM features f ${where}
        ORDER BY ${order} OFFSET $8 LIMIT $9`,
      [...params, page.offset, page.limit],
    ),
    db.query<{ total: number }>(`SELECT count(*)::int AS total FROM features f ${where}`, params),
  ]);
  return { rows, total: counted[0]?.total ?? 0 };
}

const iso = (value: Date | string | null) =>
  value === null ? null : new Date(value).toISOString();

function overview(row: OverviewRow) {
  return {
    name: row.name,
    type: row.type,
    description: row.description,
    project: row.project,
    stale: row.stale,
    impressionData: row.impression_data,
    createdAt: iso(row.created_at),
    archivedAt: iso(row.archived_at),
    lastSeenAt: null,
    favorite: false,
    environments: row.environments.map((environment) => ({
      name: environment.name,
      type: environment.type,
      enabled: environment.enabled,
      sortOrder: environment.sortOrder,
      hasStrategies: environment.strategies > 0,
      hasEnabledStrategies: environment.enabledStrategies > 0,
      lastSeenAt: null,
    })),
    tags: row.tags,
  };
}

/** `GET /api/admin/projects/:project/features`: the project's active flags by name. */
export async function projectOverview(
  db: Queryable,
  project: string,
  tags: readonly (readonly [string, string])[] | undefined,
  namePrefix: string | undefined,
) {
  const { rows } = await findFlags(
    db,
    { projects: [project], tags, namePrefix, archived: false },
    { offset: 0, limit: null, sortBy: 'name', desc: false },
  );
  return rows.map(overview);
}

/** `GET /api/admin/search/features`: unleash-server's flag search. */
export function flagSearchRoutes(
  app: FastifyInstance,
  db: Queryable,
  guard: (request: FastifyRequest) => Promise<void>,
): void {
  const typed = app.withTypeProvider<JsonSchemaToTsProvider>();
  typed.get(
    '/api/admin/search/features',
    {
      schema: {
        querystring: {
          type: 'object',
          properties: {
            query: { type: 'string', maxLength: 1000 },
            project: { type: 'string' },
            tag: { type: 'string' },
            type: { type: 'string' },
            state: { type: 'string' },
            archived: { type: 'string' },
            sortBy: { type: 'string', enum: ['name', 'createdAt', 'type'], default: 'createdAt' },
            sortOrder: { type: 'string', enum: ['asc', 'desc'], default: 'desc' },
            ...pagingProperties,
          },
        },
      },
      onRequest: guard,
    },
    async function adminSearchFlags(request) {
      const q = request.query;
      const tags = filterValues('tag', q.tag)?.map((tag) => {
        const at = tag.indexOf(':');
        if (at <= 0) throw new ApiError('BAD_DATA', `The tag filter "${tag}" is not "type:value".`);
        return [tag.slice(0, at), tag.slice(at + 1)] as const;
      });
      const states = filterValues('state', q.state);
      for (const state of states ?? []) {
        if (state !== 'active' && state !== 'stale') {
          throw new ApiError(
            'BAD_DATA',
            `The state filter takes "active" or "stale", not "${state}".`,
          );
        }
      }
      const archived = filterValues('archived', q.archived);
      if (archived && (archived.length !== 1 || !['true', 'false'].includes(archived[0]!))) {
        throw new ApiError('BAD_DATA', 'The archived filter takes "true" or "false".');
      }
      const { rows, total } = await findFlags(
        db,
        {
          query: q.query || undefined,
          projects: filterValues('project', q.project),
          tags,
          types: filterValues('type', q.type),
          stale: states?.length === 1 ? states[0] === 'stale' : undefined,
          archived: archived?.[0] === 'true',
        },
        {
          offset: q.offset ?? 0,
          limit: q.limit ?? 50,
          sortBy: (q.sortBy ?? 'createdAt') as keyof typeof SORT_COLUMNS,
          desc: (q.sortOrder ?? 'desc') === 'desc',
        },
      );
      return { features: rows.map(overview), total };
    },
  );
}
