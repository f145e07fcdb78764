import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Database } from '../../db/database.js';
import type { RevisionTracker } from '../../revision.js';
import { featureTagRoutes } from './feature-tag-routes.js';
import { tagRoutes } from './tag-routes.js';

/** Tags, tag types and flags' tags (unleash-server 8.2's paths, bodies and status codes). */
export function tagAdminRoutes(
  app: FastifyInstance,
  db: Database,
  revisions: RevisionTracker,
  guard: (request: FastifyRequest) => Promise<void>,
): void {
  featureTagRoutes(app, db, revisions, guard);
  tagRoutes(app, db, revisions, guard);
}
