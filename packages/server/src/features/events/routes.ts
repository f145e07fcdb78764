import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Database } from '../../db/database.js';
import { filterDate, filterValues, pagingProperties } from '../search-filter.js';
import { searchEvents } from './event-store.js';

/** `GET /api/admin/search/events`: unleash-server's event search, newest first. */
export function eventRoutes(
  app: FastifyInstance,
  db: Database,
  guard: (request: FastifyRequest) => Promise<void>,
): void {
  const typed = app.withTypeProvider<JsonSchemaToTsProvider>();
  typed.get(
    '/api/admin/search/events',
    {
      schema: {
        querystring: {
          type: 'object',
          properties: {
            query: { type: 'string', maxLength: 1000 },
            feature: { type: 'string' },
            project: { type: 'string' },
            type: { type: 'string' },
            createdBy: { type: 'string' },
            from: { type: 'string' },
            to: { type: 'string' },
            ...pagingProperties,
          },
        },
      },
      onRequest: guard,
    },
    async function adminSearchEvents(request) {
      const q = request.query;
      return searchEvents(db, {
        ...(q.query ? { query: q.query } : {}),
        features: filterValues('feature', q.feature),
        projects: filterValues('project', q.project),
        types: filterValues('type', q.type),
        createdBy: filterValues('createdBy', q.createdBy),
        from: filterDate('from', q.from),
        to: filterDate('to', q.to),
        offset: q.offset ?? 0,
        limit: q.limit ?? 50,
      });
    },
  );
}
