import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import { constraintSchema } from '@flags/schemas';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Database } from '../../db/database.js';
import { ApiError } from '../../errors.js';
import type { RevisionTracker } from '../../revision.js';
import { refuseDuplicate, writeConfig } from '../config-write.js';
import { projectExists } from '../projects/project-store.js';
import { insertSegment, listSegments } from './segment-store.js';

/** Segments: listed, and created (for every project, or for one that exists). */
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
    {
      schema: {
        body: {
          type: 'object',
          required: ['name', 'constraints'],
          properties: {
            name: { type: 'string', minLength: 1, maxLength: 100 },
            description: { type: 'string' },
            project: { type: 'string' },
            constraints: { type: 'array', items: constraintSchema },
          },
        },
      },
      onRequest: guard,
    },
    async function adminCreateSegment(request, reply) {
      const { name, description, project, constraints } = request.body;
      const id = await refuseDuplicate(`Segment "${name}"`, () =>
        writeConfig(db, revisions, async (tx) => {
          if (project && !(await projectExists(tx, project))) {
            throw new ApiError('BAD_DATA', `Project "${project}" does not exist.`);
          }
          return insertSegment(tx, {
            name,
            description: description ?? null,
            project: project ?? null,
            constraints,
          });
        }),
      );
      return reply.status(201).send({ id, name, description, project, constraints });
    },
  );
}
