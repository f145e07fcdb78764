import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { actorOf } from '../../auth/actor.js';
import type { Queryable } from '../../db/database.js';
import { ApiError } from '../../errors.js';
import { writeConfig } from '../config-write.js';
import { recordEvent, tagsOfFlag } from '../events/event-store.js';
import { EVENT_TYPES } from '../events/event-types.js';
import { projectExists } from '../projects/project-store.js';
import {
  createFlagSchema,
  flagNameSchema,
  flagParams,
  jsonPatchSchema,
  updateFlagSchema,
} from './flag-schemas.js';
import { projectOverview } from './flag-search.js';
import {
  activeChildren,
  type FlagRow,
  findFlag,
  flagDetail,
  flagETag,
  flagMetadata,
} from './flag-store.js';
import { type FlagDeps, writeFlag } from './flag-write.js';
import { applyJsonPatch } from './patched-document.js';

const EDIT = { permission: 'edit' } as const;
const VARIANTS_PATH =
  '/api/admin/projects/:project/features/:feature/environments/:environment/variants';

/** The metadata a PUT or PATCH may change. */
interface Metadata {
  type: string;
  description: string | null;
  stale: boolean;
  impressionData: boolean;
}

async function requireFeatureType(db: Queryable, type: string): Promise<void> {
  const rows = await db.query('SELECT 1 FROM feature_types WHERE id = $1', [type]);
  if (rows.length === 0) throw new ApiError('BAD_DATA', `There is no feature type "${type}".`);
}

/** 409 unless no flag, archived ones included, has the name. */
async function requireFreeName(db: Queryable, name: string): Promise<void> {
  const existing = await findFlag(db, name);
  if (existing) {
    throw new ApiError(
      'NAME_EXISTS',
      existing.archived_at === null
        ? `A feature named "${name}" already exists (project "${existing.project}").`
        : `A feature named "${name}" already exists in the archive; revive or delete it first.`,
    );
  }
}

/**
 * Single flags: list, create, read (with `ETag`), update (PUT and JSON Patch), archive, revive,
 * delete from the archive, and name validation.
 */
export function flagRoutes(
  app: FastifyInstance,
  deps: FlagDeps,
  guard: (request: FastifyRequest) => Promise<void>,
): void {
  const typed = app.withTypeProvider<JsonSchemaToTsProvider>();
  const { db } = deps;

  typed.get(
    '/api/admin/projects/:project/features',
    {
      schema: {
        params: {
          type: 'object',
          required: ['project'],
          properties: { project: { type: 'string' } },
        },
        querystring: {
          type: 'object',
          properties: {
            tag: { anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] },
            namePrefix: { type: 'string' },
          },
        },
      },
      onRequest: guard,
    },
    async function adminListProjectFlags(request) {
      const { project } = request.params;
      if (!(await projectExists(db, project))) {
        throw new ApiError('NOT_FOUND', `There is no project "${project}".`);
      }
      const tags = request.query.tag === undefined ? undefined : [request.query.tag].flat();
      const pairs = tags?.map((tag) => {
        const at = tag.indexOf(':');
        if (at <= 0) {
          throw new ApiError('BAD_DATA', `The tag filter "${tag}" is not "type:value".`);
        }
        return [tag.slice(0, at), tag.slice(at + 1)] as const;
      });
      return {
        version: 2,
        features: await projectOverview(db, project, pairs, request.query.namePrefix),
      };
    },
  );

  typed.post(
    '/api/admin/projects/:project/features',
    {
      schema: {
        params: {
          type: 'object',
          required: ['project'],
          properties: { project: { type: 'string' } },
        },
        body: createFlagSchema,
      },
      onRequest: guard,
      config: EDIT,
    },
    async function adminCreateFlag(request, reply) {
      const { project } = request.params;
      const body = request.body;
      const actor = actorOf(request);
      const created = await writeConfig(deps.db, deps.revisions, async (tx, scope) => {
        if (!(await projectExists(tx, project))) {
          throw new ApiError('NOT_FOUND', `There is no project "${project}".`);
        }
        await requireFreeName(tx, body.name);
        const type = body.type ?? 'release';
        await requireFeatureType(tx, type);
        scope.flags(body.name);
        await tx.query(
          `INSERT INTO features (name, project, type, description, stale, impression_data,
                                 created_by_user_id)
           VALUES ($1, $2, $3, $4, $5, $6, $7)`,
          [
            body.name,
            project,
            type,
            body.description ?? null,
            body.stale ?? false,
            body.impressionData ?? false,
            actor.userId ?? null,
          ],
        );
        await tx.query(
          `INSERT INTO feature_environments (feature_name, environment)
           SELECT $1, environment_name FROM project_environments WHERE project_id = $2`,
          [body.name, project],
        );
        const flag = (await findFlag(tx, body.name))!;
        await recordEvent(tx, {
          type: EVENT_TYPES.featureCreated,
          by: actor,
          project,
          featureName: flag.name,
          data: flagMetadata(flag),
        });
        return flag;
      });
      return reply
        .status(201)
        .header('etag', flagETag(created))
        .send(await flagDetail(db, created));
    },
  );

  typed.get(
    '/api/admin/projects/:project/features/:feature',
    { schema: { params: flagParams }, onRequest: guard },
    async function adminReadFlag(request, reply) {
      const { project, feature } = request.params;
      const flag = await findFlag(db, feature);
      if (!flag || flag.project !== project || flag.archived_at !== null) {
        throw new ApiError(
          'NOT_FOUND',
          `There is no active feature "${feature}" in project "${project}".`,
        );
      }
      return reply.header('etag', flagETag(flag)).send(await flagDetail(db, flag));
    },
  );

  /** Writes new metadata and records what changed; answers the flag. */
  const updateMetadata = async (
    request: FastifyRequest,
    project: string,
    feature: string,
    next: (current: Metadata & { name: string; project: string }) => Metadata & { name?: unknown },
    /** PATCH records `feature-stale-on`/`-off` after the update when `stale` changed, as unleash-server does. */
    staleEvents = false,
  ) => {
    const updated = await writeFlag(deps, request, { project, feature }, async (tx, flag, by) => {
      const before = flagMetadata(flag);
      const wanted = next({
        name: flag.name,
        project: flag.project,
        type: flag.type,
        description: flag.description,
        stale: flag.stale,
        impressionData: flag.impression_data,
      });
      if (wanted.name !== undefined && wanted.name !== flag.name) {
        throw new ApiError('BAD_DATA', 'The name of a feature cannot be changed.');
      }
      if (wanted.type !== flag.type) await requireFeatureType(tx, wanted.type);
      await tx.query(
        `UPDATE features SET type = $2, description = $3, stale = $4, impression_data = $5
          WHERE name = $1`,
        [flag.name, wanted.type, wanted.description, wanted.stale, wanted.impressionData],
      );
      const after = (await findFlag(tx, flag.name))!;
      await recordEvent(tx, {
        type: EVENT_TYPES.featureMetadataUpdated,
        by,
        project,
        featureName: flag.name,
        data: flagMetadata(after),
        preData: before,
        tags: await tagsOfFlag(tx, flag.name),
      });
      if (staleEvents && after.stale !== flag.stale) {
        await recordEvent(tx, {
          type: after.stale ? EVENT_TYPES.featureStaleOn : EVENT_TYPES.featureStaleOff,
          by,
          project,
          featureName: flag.name,
          data: { stale: after.stale },
          preData: { stale: flag.stale },
          tags: await tagsOfFlag(tx, flag.name),
        });
      }
      return after;
    });
    const fresh = (await findFlag(db, updated.name)) ?? updated;
    return { flag: fresh, body: await flagDetail(db, fresh) };
  };

  typed.put(
    '/api/admin/projects/:project/features/:feature',
    { schema: { params: flagParams, body: updateFlagSchema }, onRequest: guard, config: EDIT },
    async function adminUpdateFlag(request, reply) {
      const { project, feature } = request.params;
      const body = request.body;
      const { flag, body: answer } = await updateMetadata(request, project, feature, (current) => ({
        name: body.name,
        type: body.type ?? current.type,
        description: body.description === undefined ? current.description : body.description,
        stale: body.stale ?? current.stale,
        impressionData: body.impressionData ?? current.impressionData,
      }));
      return reply.header('etag', flagETag(flag)).send(answer);
    },
  );

  typed.patch(
    '/api/admin/projects/:project/features/:feature',
    { schema: { params: flagParams, body: jsonPatchSchema }, onRequest: guard, config: EDIT },
    async function adminPatchFlag(request, reply) {
      const { project, feature } = request.params;
      if (request.body.some((operation) => operation.path.includes('/variants'))) {
        throw new ApiError(
          'OPERATION_DENIED',
          `Variants are changed with a PATCH of ${VARIANTS_PATH} (per environment), not of the feature.`,
        );
      }
      const { flag, body: answer } = await updateMetadata(
        request,
        project,
        feature,
        (current) => {
          const patched = applyJsonPatch(current, request.body);
          const problems = metadataProblems(patched as unknown as Record<string, unknown>);
          if (problems.length > 0) {
            throw new ApiError(
              'BAD_DATA',
              `The patched feature is invalid: ${problems[0]}`,
              problems,
            );
          }
          if (patched.project !== current.project) {
            throw new ApiError('BAD_DATA', 'A patch cannot move a feature to another project.');
          }
          return patched as Metadata & { name: unknown };
        },
        true,
      );
      return reply.header('etag', flagETag(flag)).send(answer);
    },
  );

  typed.delete(
    '/api/admin/projects/:project/features/:feature',
    { schema: { params: flagParams }, onRequest: guard, config: EDIT },
    async function adminArchiveFlag(request, reply) {
      const { project, feature } = request.params;
      await writeFlag(deps, request, { project, feature }, async (tx, flag, by) => {
        await refuseWithChildren(tx, flag, 'archive');
        await tx.query('UPDATE features SET archived_at = now() WHERE name = $1', [flag.name]);
        await recordEvent(tx, {
          type: EVENT_TYPES.featureArchived,
          by,
          project,
          featureName: flag.name,
          tags: await tagsOfFlag(tx, flag.name),
        });
      });
      return reply.status(202).send();
    },
  );

  typed.post(
    '/api/admin/archive/revive/:feature',
    {
      schema: {
        params: {
          type: 'object',
          required: ['feature'],
          properties: { feature: { type: 'string' } },
        },
      },
      onRequest: guard,
      config: { ...EDIT, acceptsEmptyBody: true },
    },
    async function adminReviveFlag(request, reply) {
      const { feature } = request.params;
      const by = actorOf(request);
      await writeConfig(deps.db, deps.revisions, async (tx, scope) => {
        const active = await findFlag(tx, feature);
        // unleash-server answers 200 for an active flag too (and turns it off everywhere);
        // here nothing changes and nothing is recorded.
        if (active && active.archived_at === null) return;
        const flag = await archivedFlag(tx, feature);
        scope.flags(flag.name);
        await tx.query(
          'UPDATE features SET archived_at = NULL, version = version + 1 WHERE name = $1',
          [flag.name],
        );
        // A revived flag comes back off in every environment, as in unleash-server.
        await tx.query('UPDATE feature_environments SET enabled = false WHERE feature_name = $1', [
          flag.name,
        ]);
        await recordEvent(tx, {
          type: EVENT_TYPES.featureRevived,
          by,
          project: flag.project,
          featureName: flag.name,
          tags: await tagsOfFlag(tx, flag.name),
        });
      });
      return reply.status(200).send();
    },
  );

  typed.delete(
    '/api/admin/archive/:feature',
    {
      schema: {
        params: {
          type: 'object',
          required: ['feature'],
          properties: { feature: { type: 'string' } },
        },
      },
      onRequest: guard,
      config: EDIT,
    },
    async function adminDeleteArchivedFlag(request, reply) {
      const { feature } = request.params;
      const by = actorOf(request);
      await writeConfig(deps.db, deps.revisions, async (tx, scope) => {
        const found = await findFlag(tx, feature);
        // Only archived flags are deleted; an active or unknown one is left alone with a 200, as
        // unleash-server answers it (a repeated delete succeeds).
        if (!found || found.archived_at === null) return;
        const flag = await archivedFlag(tx, feature);
        const children = await tx.query<{ child: string }>(
          'SELECT child FROM feature_dependencies WHERE parent = $1 ORDER BY child',
          [flag.name],
        );
        if (children.length > 0) {
          throw new ApiError(
            'FEATURE_HAS_CHILDREN',
            `Feature "${flag.name}" cannot be deleted: these features depend on it: ${children.map((row) => row.child).join(', ')}.`,
            children.map((row) => row.child),
          );
        }
        scope.flags(flag.name);
        const tags = await tagsOfFlag(tx, flag.name);
        await tx.query('DELETE FROM features WHERE name = $1', [flag.name]);
        await recordEvent(tx, {
          type: EVENT_TYPES.featureDeleted,
          by,
          project: flag.project,
          featureName: flag.name,
          preData: flagMetadata(flag),
          tags,
        });
      });
      return reply.status(200).send();
    },
  );

  typed.post(
    '/api/admin/features/validate',
    {
      schema: {
        body: { type: 'object', required: ['name'], properties: { name: flagNameSchema } },
      },
      onRequest: guard,
      config: { permission: 'read' },
    },
    async function adminValidateFlagName(request, reply) {
      await requireFreeName(db, request.body.name);
      return reply.status(200).send();
    },
  );
}

/** The archived flag `name`; 404 otherwise. Locked for the transaction. */
async function archivedFlag(tx: Queryable, name: string): Promise<FlagRow> {
  const flag = await findFlag(tx, name);
  if (!flag || flag.archived_at === null) {
    throw new ApiError('NOT_FOUND', `There is no archived feature "${name}".`);
  }
  await tx.query('SELECT 1 FROM features WHERE name = $1 FOR UPDATE', [name]);
  return flag;
}

/** 409 naming the active flags that depend on `flag`. */
async function refuseWithChildren(tx: Queryable, flag: FlagRow, action: string): Promise<void> {
  const children = await activeChildren(tx, flag.name);
  if (children.length > 0) {
    throw new ApiError(
      'FEATURE_HAS_CHILDREN',
      `Feature "${flag.name}" cannot ${action}: these features depend on it: ${children.join(', ')}. Archive them or remove their dependency first.`,
      children,
    );
  }
}

/** What is wrong with patched metadata. */
function metadataProblems(value: Record<string, unknown>): string[] {
  const problems: string[] = [];
  if (typeof value.type !== 'string' || value.type === '') problems.push('type must be a string');
  if (value.description !== null && typeof value.description !== 'string') {
    problems.push('description must be a string or null');
  }
  if (typeof value.stale !== 'boolean') problems.push('stale must be a boolean');
  if (typeof value.impressionData !== 'boolean') problems.push('impressionData must be a boolean');
  return problems;
}
