import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Database } from '../../db/database.js';
import { idSchema, refuseDuplicate } from '../config-write.js';
import { insertStrategy, listStrategies } from './strategy-store.js';

/**
 * Strategy definitions: listed, and custom ones created so an import may use them. The client API
 * does not serve definitions, so creating one is no config change.
 */
export function strategyRoutes(
  app: FastifyInstance,
  db: Database,
  guard: (request: FastifyRequest) => Promise<void>,
): void {
  const typed = app.withTypeProvider<JsonSchemaToTsProvider>();

  typed.get('/api/admin/strategies', { onRequest: guard }, async function adminListStrategies() {
    return { version: 1, strategies: await listStrategies(db) };
  });

  typed.post(
    '/api/admin/strategies',
    {
      schema: {
        body: {
          type: 'object',
          required: ['name'],
          properties: {
            name: idSchema,
            title: { type: 'string' },
            description: { type: 'string' },
            parameters: { type: 'array', items: { type: 'object' } },
          },
        },
      },
      onRequest: guard,
    },
    async function adminCreateStrategy(request, reply) {
      const { name, title, description, parameters } = request.body;
      await refuseDuplicate(`Strategy "${name}"`, () =>
        insertStrategy(db, {
          name,
          title: title ?? null,
          description: description ?? null,
          parameters: parameters ?? [],
        }),
      );
      return reply.status(201).send({ name, title, description, parameters: parameters ?? [] });
    },
  );
}
