import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Database } from '../../db/database.js';
import type { RevisionTracker } from '../../revision.js';
import { idSchema, refuseDuplicate, writeConfig } from '../config-write.js';
import { insertProject, listProjects } from './project-store.js';

/** Projects: listed, and created with every environment. */
export function projectRoutes(
  app: FastifyInstance,
  db: Database,
  revisions: RevisionTracker,
  guard: (request: FastifyRequest) => Promise<void>,
): void {
  const typed = app.withTypeProvider<JsonSchemaToTsProvider>();

  typed.get('/api/admin/projects', { onRequest: guard }, async function adminListProjects() {
    return { projects: await listProjects(db) };
  });

  typed.post(
    '/api/admin/projects',
    {
      schema: {
        body: {
          type: 'object',
          required: ['id'],
          properties: { id: idSchema, name: { type: 'string' }, description: { type: 'string' } },
        },
      },
      onRequest: guard,
    },
    async function adminCreateProject(request, reply) {
      const { id, name, description } = request.body;
      const project = { id, name: name ?? id, description: description ?? null };
      await refuseDuplicate(`Project "${id}"`, () =>
        writeConfig(db, revisions, (tx) => insertProject(tx, project)),
      );
      return reply.status(201).send(project);
    },
  );
}
