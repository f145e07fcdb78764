import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import { clientMetricsSchema, clientRegisterSchema } from '@flags/schemas';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Database } from '../../db/database.js';
import { ApiError } from '../../errors.js';
import { recordInstance, recordMetrics } from './metrics-store.js';

export function clientMetricsRoutes(
  app: FastifyInstance,
  db: Database,
  guard: (request: FastifyRequest) => Promise<void>,
  version: string,
): void {
  const typed = app.withTypeProvider<JsonSchemaToTsProvider>();

  typed.post(
    '/api/client/register',
    { schema: { body: clientRegisterSchema }, onRequest: guard },
    async function clientPostRegister(request, reply) {
      const environment = request.apiToken.environment ?? 'default';
      await recordInstance(db, environment, request.body, request.ip);
      return reply.status(202).header('x-unleash-version', version).send();
    },
  );

  typed.post(
    '/api/client/metrics',
    { schema: { body: clientMetricsSchema }, onRequest: guard },
    async function clientPostMetrics(request, reply) {
      const environment = request.apiToken.environment ?? 'default';
      const body = request.body;
      if (!(await recordMetrics(db, environment, body))) {
        throw new ApiError('BAD_DATA', 'bucket.start and bucket.stop must be valid dates.');
      }
      await recordInstance(db, environment, body, request.ip);
      return reply.status(202).send();
    },
  );
}
