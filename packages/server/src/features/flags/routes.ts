import type { FastifyInstance, FastifyRequest } from 'fastify';
import { dependencyRoutes } from './dependency-routes.js';
import { featureStrategyRoutes } from './feature-strategy-routes.js';
import { flagEnvironmentRoutes } from './flag-environment-routes.js';
import { flagRoutes } from './flag-routes.js';
import { flagSearchRoutes } from './flag-search.js';
import type { FlagDeps } from './flag-write.js';

/** The single-flag admin API (unleash-server 8.2's paths, bodies and status codes). */
export function singleFlagRoutes(
  app: FastifyInstance,
  deps: FlagDeps,
  guard: (request: FastifyRequest) => Promise<void>,
): void {
  flagRoutes(app, deps, guard);
  flagEnvironmentRoutes(app, deps, guard);
  featureStrategyRoutes(app, deps, guard);
  dependencyRoutes(app, deps, guard);
  flagSearchRoutes(app, deps.db, guard);
}
