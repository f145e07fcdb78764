import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import { constraintSchema } from '@flags/schemas';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { FromSchema } from 'json-schema-to-ts';
import type { Database, Queryable } from '../../db/database.js';
import { ApiError } from '../../errors.js';
import type { RevisionTracker } from '../../revision.js';
import { adminResource } from '../admin-resource.js';
import { checkConstraints } from '../constraint-rules.js';
import { EVENT_TYPES } from '../events/event-types.js';
import { projectExists } from '../projects/project-store.js';
import {
  findSegment,
  insertSegment,
  listSegments,
  type Segment,
  strategiesUsingSegment,
  updateSegment,
} from './segment-store.js';

const segmentBody = {
  type: 'object',
  required: ['name', 'constraints'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 100 },
    description: { type: ['string', 'null'] },
    project: { type: ['string', 'null'] },
    constraints: { type: 'array', items: constraintSchema },
  },
} as const;

type SegmentBody = FromSchema<typeof segmentBody>;

const idParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'integer', minimum: 1, maximum: 2_147_483_647 } },
} as const;

const notFound = (id: number) => new ApiError('NOT_FOUND', `No segment exists with ID "${id}".`);

async function requireProject(tx: Queryable, project: string | null): Promise<void> {
  if (project && !(await projectExists(tx, project))) {
    throw new ApiError('BAD_DATA', `Project "${project}" does not exist.`);
  }
}

/**
 * Segments: listed, created, read, replaced and deleted (refused while a strategy uses one), and
 * the strategies using one. Segments are served to SDKs, so every write diffs every flag.
 */
export function segmentRoutes(
  app: FastifyInstance,
  db: Database,
  revisions: RevisionTracker,
  guard: (request: FastifyRequest) => Promise<void>,
): void {
  const typed = app.withTypeProvider<JsonSchemaToTsProvider>();

  adminResource(
    { app, db, revisions, guard },
    {
      path: '/api/admin/segments',
      key: { param: 'id', schema: idParams.properties.id },
      permission: 'edit',
      served: true,
      events: {
        created: EVENT_TYPES.segmentCreated,
        updated: EVENT_TYPES.segmentUpdated,
        deleted: EVENT_TYPES.segmentDeleted,
      },
      eventScope: (segment) => ({ project: segment.project }),
      notFound,
      find: (q, id: number) => findSegment(q, id),
      list: async (q) => ({ segments: await listSegments(q) }),
      create: {
        body: segmentBody,
        duplicate: (body: SegmentBody) => `Segment "${body.name}"`,
        async insert(tx, body: SegmentBody) {
          await requireProject(tx, body.project ?? null);
          await checkConstraints(tx, body.constraints, 'body/constraints');
          const fields = {
            name: body.name,
            description: body.description ?? null,
            project: body.project ?? null,
            constraints: body.constraints,
          };
          return { id: await insertSegment(tx, fields), ...fields };
        },
        // As before (and as unleash-server): a project or description not given is left out.
        answer: (segment, body) => ({
          id: segment.id,
          name: body.name,
          description: body.description ?? undefined,
          project: body.project ?? undefined,
          constraints: body.constraints,
        }),
      },
      update: {
        body: segmentBody,
        duplicate: (body: SegmentBody) => `Segment "${body.name}"`,
        async change(tx, before, body: SegmentBody): Promise<Segment> {
          const { name, description, project, constraints } = body;
          await requireProject(tx, project ?? null);
          await checkConstraints(tx, constraints, 'body/constraints');
          if (project) {
            const elsewhere = [
              ...new Set(
                (await strategiesUsingSegment(tx, before.id))
                  .map((strategy) => strategy.projectId)
                  .filter((used) => used !== project),
              ),
            ];
            if (elsewhere.length > 0) {
              throw new ApiError(
                'BAD_DATA',
                `Invalid project. Segment is being used by strategies in other projects: ${elsewhere.join(', ')}.`,
              );
            }
          }
          return {
            id: before.id,
            name,
            description: description === undefined ? before.description : description,
            project: project ?? null,
            constraints,
          };
        },
        save: updateSegment,
        answer: () => ({ status: 204 }),
      },
      remove: {
        usedBy: async (tx, segment) =>
          (await strategiesUsingSegment(tx, segment.id)).map(
            (s) =>
              `strategy ${s.id} (${s.strategyName}) of flag "${s.featureName}" in ${s.environment}`,
          ),
        what: (segment) => `Segment "${segment.name}"`,
        remedy: 'Remove it from these strategies first.',
        table: 'segments',
        column: 'id',
        status: 204,
      },
    },
  );

  typed.get(
    '/api/admin/segments/:id/strategies',
    { schema: { params: idParams }, onRequest: guard },
    async function adminSegmentStrategies(request) {
      if (!(await findSegment(db, request.params.id))) throw notFound(request.params.id);
      return {
        strategies: await strategiesUsingSegment(db, request.params.id),
        changeRequestStrategies: [],
      };
    },
  );
}
