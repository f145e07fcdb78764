import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Database } from '../../db/database.js';
import { listLogins } from './login-history.js';

const loginEventSchema = {
  type: 'object',
  required: ['id', 'username', 'auth_type', 'created_at', 'successful'],
  properties: {
    id: { type: 'integer' },
    username: { type: 'string' },
    auth_type: { type: 'string' },
    created_at: { type: 'string', format: 'date-time' },
    successful: { type: 'boolean' },
    ip: { type: ['string', 'null'] },
    user_agent: { type: ['string', 'null'] },
    failure_reason: { type: ['string', 'null'] },
  },
} as const;

/**
 * `GET /api/admin/logins`: the login history, newest first, for Admins (the path and shape of
 * Unleash Enterprise's login history; unleash-server open source has none). Every password login,
 * right or wrong, with its address and user agent; kept `LOGIN_HISTORY_DAYS`.
 */
export function loginHistoryRoutes(
  app: FastifyInstance,
  db: Database,
  guard: (request: FastifyRequest) => Promise<void>,
): void {
  app.withTypeProvider<JsonSchemaToTsProvider>().get(
    '/api/admin/logins',
    {
      onRequest: guard,
      config: { permission: 'admin' },
      schema: {
        querystring: {
          type: 'object',
          properties: {
            limit: { type: 'integer', minimum: 1, maximum: 1000, default: 100 },
            offset: { type: 'integer', minimum: 0, maximum: 1_000_000, default: 0 },
          },
        },
        response: {
          200: {
            type: 'object',
            required: ['events'],
            properties: { events: { type: 'array', items: loginEventSchema } },
          },
        },
      },
    },
    async function adminListLogins(request, reply) {
      void reply.header('cache-control', 'no-store');
      return { events: await listLogins(db, request.query.limit, request.query.offset) };
    },
  );
}
