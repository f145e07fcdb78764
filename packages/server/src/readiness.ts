import type { FastifyInstance } from 'fastify';
import type { DatabaseAvailability } from './db/availability.js';
import { ApiError } from './errors.js';
import type { UsageBuffer } from './features/metrics/usage-buffer.js';

/** Probes answer before the first load; every other route waits for it. */
const ANSWERED_BEFORE_LOAD: ReadonlySet<string | undefined> = new Set(['/health', '/ready']);

/**
 * `/health` (alive: the process answers) and `/ready` (503 until the first load from the
 * database; 200 after it, also while the database is unreachable and the server answers from
 * memory, with `status: "DEGRADED"`). Until the first load every other route answers 503.
 */
export function healthRoutes(
  app: FastifyInstance,
  availability: DatabaseAvailability,
  usage: UsageBuffer,
): void {
  app.addHook('onRequest', async (request) => {
    if (!availability.ready && !ANSWERED_BEFORE_LOAD.has(request.routeOptions.url)) {
      throw new ApiError('NOT_READY');
    }
  });
  app.get('/health', async function healthGet() {
    return { health: 'GOOD' };
  });
  app.get('/ready', async function readyGet() {
    if (!availability.ready) throw new ApiError('NOT_READY');
    const reachable = availability.state !== 'unreachable';
    return {
      status: reachable ? 'READY' : 'DEGRADED',
      database: reachable ? 'reachable' : 'unreachable',
      heldUsageReports: usage.size,
    };
  });
}
