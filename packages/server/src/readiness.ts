import type { FastifyInstance } from 'fastify';
import { Gauge, Registry } from 'prom-client';
import type { DatabaseAvailability } from './db/availability.js';
import { ApiError } from './errors.js';
import type { UsageBuffer } from './features/metrics/usage-buffer.js';

const PROMETHEUS_PATH = '/internal-backstage/prometheus';

/** Probes answer before the first load; every other route waits for it. */
const ANSWERED_BEFORE_LOAD: ReadonlySet<string | undefined> = new Set([
  '/health',
  '/ready',
  PROMETHEUS_PATH,
]);

/** The gauges of the database's state, read when scraped (one registry per app). */
function databaseGauges(availability: DatabaseAvailability, usage: UsageBuffer): Registry {
  const registry = new Registry();
  const gauge = (name: string, help: string, value: () => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(value());
      },
    });
  gauge('flags_server_ready', '1 once the first load from the database has completed.', () =>
    availability.ready ? 1 : 0,
  );
  gauge(
    'flags_server_database_up',
    '1 while the database answers; 0 while it is unreachable (the server is degraded: it answers from memory).',
    () => (availability.state === 'unreachable' ? 0 : 1),
  );
  gauge(
    'flags_server_usage_reports_held',
    'Usage reports held in memory for the database to return.',
    () => usage.size,
  );
  return registry;
}

/**
 * `/health` (alive: the process answers) and `/ready` (503 until the first load from the
 * database; 200 after it, also while the database is unreachable and the server answers from
 * memory, with `status: "DEGRADED"`), and the Prometheus gauges of both at
 * `/internal-backstage/prometheus`. Until the first load every other route answers 503.
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
  const registry = databaseGauges(availability, usage);
  app.get(PROMETHEUS_PATH, async function backstageGetPrometheus(_request, reply) {
    return reply.type(registry.contentType).send(await registry.metrics());
  });
}
