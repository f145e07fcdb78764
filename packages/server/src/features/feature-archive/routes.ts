import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Database } from '../../db/database.js';
import { ApiError } from '../../errors.js';
import type { RevisionTracker } from '../../revision.js';
import { writeConfig } from '../config-write.js';
import { archiveFeature } from './feature-archive-store.js';

/** Archiving a flag: the client API stops serving it; an import may not recreate it. */
export function featureArchiveRoutes(
  app: FastifyInstance,
  db: Database,
  revisions: RevisionTracker,
  guard: (request: FastifyRequest) => Promise<void>,
): void {
  const typed = app.withTypeProvider<JsonSchemaToTsProvider>();

  typed.delete(
    '/api/admin/projects/:project/features/:feature',
    {
      schema: {
        params: {
          type: 'object',
          required: ['project', 'feature'],
          properties: { project: { type: 'string' }, feature: { type: 'string' } },
        },
      },
      onRequest: guard,
    },
    async function adminArchiveFeature(request, reply) {
      const { project, feature } = request.params;
      await writeConfig(db, revisions, async (tx) => {
        // Thrown inside the transaction: a refused archive bumps no revision either.
        if (!(await archiveFeature(tx, project, feature))) {
          throw new ApiError(
            'NOT_FOUND',
            `There is no active feature "${feature}" in project "${project}".`,
          );
        }
      });
      return reply.status(202).send();
    },
  );
}
