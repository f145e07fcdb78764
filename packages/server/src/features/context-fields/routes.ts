import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Database } from '../../db/database.js';
import { listContextFields } from './context-field-store.js';

/** Context fields, as imports create them (with their legal values). */
export function contextFieldRoutes(
  app: FastifyInstance,
  db: Database,
  guard: (request: FastifyRequest) => Promise<void>,
): void {
  app.get('/api/admin/context', { onRequest: guard }, async function adminListContextFields() {
    return listContextFields(db);
  });
}
