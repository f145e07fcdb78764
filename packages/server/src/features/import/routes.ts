import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import { exportQuerySchema, importRequestSchema, importValidationSchema } from '@flags/schemas';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { actorOf } from '../../auth/actor.js';
import type { Database } from '../../db/database.js';
import { exportFeatures } from './export.js';
import type { ImportService } from './import-service.js';

/**
 * `/api/admin/features-batch/{import,validate,export}`: HTTP only; the import service and the
 * export do the work.
 */
export function featuresBatchRoutes(
  app: FastifyInstance,
  db: Database,
  service: ImportService,
  guard: (request: FastifyRequest) => Promise<void>,
  bodyLimit: number,
): void {
  const typed = app.withTypeProvider<JsonSchemaToTsProvider>();

  typed.post(
    '/api/admin/features-batch/import',
    {
      schema: { body: importRequestSchema },
      onRequest: guard,
      config: { permission: 'edit' },
      bodyLimit,
    },
    async function adminImportFeatures(request, reply) {
      await service.import(request.body, actorOf(request));
      return reply.status(200).send();
    },
  );

  typed.post(
    '/api/admin/features-batch/validate',
    {
      schema: { body: importRequestSchema, response: { 200: importValidationSchema } },
      onRequest: guard,
      config: { permission: 'read' },
      bodyLimit,
    },
    async function adminValidateImport(request) {
      return service.validate(request.body);
    },
  );

  typed.post(
    '/api/admin/features-batch/export',
    {
      schema: { body: exportQuerySchema },
      onRequest: guard,
      config: { permission: 'read' },
      bodyLimit,
    },
    async function adminExportFeatures(request, reply) {
      const result = await exportFeatures(db, request.body);
      // Serialized directly: the export is the import's input, not re-filtered by a response schema.
      return reply.type('application/json; charset=utf-8').send(JSON.stringify(result));
    },
  );
}
