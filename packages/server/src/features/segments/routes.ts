import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import { constraintSchema } from '@flags/schemas';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { actorOf } from '../../auth/actor.js';
import type { Database, Queryable } from '../../db/database.js';
import { ApiError } from '../../errors.js';
import type { RevisionTracker } from '../../revision.js';
import { refuseDuplicate, writeConfig } from '../config-write.js';
import { checkConstraints } from '../constraint-rules.js';
import { recordEvent } from '../events/event-store.js';
import { EVENT_TYPES } from '../events/event-types.js';
import { refuseWhileUsed } from '../in-use.js';
import { projectExists } from '../projects/project-store.js';
import {
  findSegment,
  insertSegment,
  listSegments,
  type Segment,
  strategiesUsingSegment,
  updateSegment,
} from './segment-store.js';

const EDIT = { permission: 'edit' } as const;

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

  typed.get('/api/admin/segments', { onRequest: guard }, async function adminListSegments() {
    return { segments: await listSegments(db) };
  });

  typed.post(
    '/api/admin/segments',
    { schema: { body: segmentBody }, onRequest: guard, config: EDIT },
    async function adminCreateSegment(request, reply) {
      const { name, description, project, constraints } = request.body;
      const actor = actorOf(request);
      const segment = await refuseDuplicate(`Segment "${name}"`, () =>
        writeConfig(db, revisions, async (tx) => {
          await requireProject(tx, project ?? null);
          await checkConstraints(tx, constraints, 'body/constraints');
          const fields = {
            name,
            description: description ?? null,
            project: project ?? null,
            constraints,
          };
          const created = { id: await insertSegment(tx, fields), ...fields };
          await recordEvent(tx, {
            type: EVENT_TYPES.segmentCreated,
            by: actor,
            project: created.project,
            data: created,
          });
          return created;
        }),
      );
      // As before (and as unleash-server): a project or description not given is left out.
      return reply.status(201).send({
        id: segment.id,
        name,
        description: description ?? undefined,
        project: project ?? undefined,
        constraints,
      });
    },
  );

  typed.get(
    '/api/admin/segments/:id',
    { schema: { params: idParams }, onRequest: guard },
    async function adminReadSegment(request) {
      const segment = await findSegment(db, request.params.id);
      if (!segment) throw notFound(request.params.id);
      return segment;
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

  typed.put(
    '/api/admin/segments/:id',
    { schema: { params: idParams, body: segmentBody }, onRequest: guard, config: EDIT },
    async function adminUpdateSegment(request, reply) {
      const { id } = request.params;
      const { name, description, project, constraints } = request.body;
      const actor = actorOf(request);
      await refuseDuplicate(`Segment "${name}"`, () =>
        writeConfig(db, revisions, async (tx) => {
          const before = await findSegment(tx, id);
          if (!before) throw notFound(id);
          await requireProject(tx, project ?? null);
          await checkConstraints(tx, constraints, 'body/constraints');
          if (project) {
            const elsewhere = [
              ...new Set(
                (await strategiesUsingSegment(tx, id))
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
          const after: Segment = {
            id,
            name,
            description: description === undefined ? before.description : description,
            project: project ?? null,
            constraints,
          };
          await updateSegment(tx, after);
          await recordEvent(tx, {
            type: EVENT_TYPES.segmentUpdated,
            by: actor,
            project: after.project,
            data: after,
            preData: before,
          });
        }),
      );
      return reply.status(204).send();
    },
  );

  typed.delete(
    '/api/admin/segments/:id',
    { schema: { params: idParams }, onRequest: guard, config: EDIT },
    async function adminDeleteSegment(request, reply) {
      const { id } = request.params;
      const actor = actorOf(request);
      await writeConfig(db, revisions, async (tx) => {
        const before = await findSegment(tx, id);
        if (!before) throw notFound(id);
        const users = await strategiesUsingSegment(tx, id);
        refuseWhileUsed(
          `Segment "${before.name}"`,
          users.map(
            (s) =>
              `strategy ${s.id} (${s.strategyName}) of flag "${s.featureName}" in ${s.environment}`,
          ),
          'Remove it from these strategies first.',
        );
        await tx.query('DELETE FROM segments WHERE id = $1', [id]);
        await recordEvent(tx, {
          type: EVENT_TYPES.segmentDeleted,
          by: actor,
          project: before.project,
          preData: before,
        });
      });
      return reply.status(204).send();
    },
  );
}
