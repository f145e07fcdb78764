import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Database } from '../../db/database.js';
import type { RevisionTracker } from '../../revision.js';
import { idSchema, refuseDuplicate, writeConfig } from '../config-write.js';
import { insertEnvironment, listEnvironments } from './environment-store.js';

/** Environments: listed, and created for every project. */
export function environmentRoutes(
  app: FastifyInstance,
  db: Database,
  revisions: RevisionTracker,
  guard: (request: FastifyRequest) => Promise<void>,
): void {
  const typed = app.withTypeProvider<JsonSchemaToTsProvider>();

  typed.get(
    '/api/admin/environments',
    { onRequest: guard },
    async function adminListEnvironments() {
      return { version: 1, environments: await listEnvironments(db) };
    },
  );

  typed.post(
    '/api/admin/environments',
    {
      schema: {
        body: {
          type: 'object',
          required: ['name', 'type'],
          properties: {
            name: idSchema,
            type: { type: 'string', minLength: 1 },
            sortOrder: { type: 'integer' },
          },
        },
      },
      onRequest: guard,
    },
    async function adminCreateEnvironment(request, reply) {
      const { name, type, sortOrder } = request.body;
      const environment = { name, type, sortOrder: sortOrder ?? 0 };
      await refuseDuplicate(`Environment "${name}"`, () =>
        writeConfig(db, revisions, (tx) => insertEnvironment(tx, environment)),
      );
      return reply.status(201).send({ ...environment, enabled: true });
    },
  );
}
