import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import { instanceInsightsQuerySchema, instanceInsightsSchema } from '@flags/schemas';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Database } from '../../db/database.js';
import { ApiError } from '../../errors.js';
import { addDays, parseDay, utcDay } from './calendar.js';
import { readInsights } from './insights-store.js';
import { startSnapshotJob } from './snapshot-job.js';

/** The range when the query gives no `from`: the last 12 weeks. */
const DEFAULT_RANGE_DAYS = 12 * 7;

function day(name: 'from' | 'to', value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (!parseDay(value)) {
    throw new ApiError(
      'BAD_DATA',
      `Request validation failed: "${name}" must be a date in yyyy-MM-dd format, got "${value}".`,
    );
  }
  return value;
}

/**
 * `GET /api/admin/insights?from=yyyy-MM-dd&to=yyyy-MM-dd` (admin token) and the snapshot job that
 * feeds it: today's rows at start, then hourly, stopped when the app closes.
 */
export async function insightsRoutes(
  app: FastifyInstance,
  db: Database,
  guard: (request: FastifyRequest) => Promise<void>,
  options: { now: () => Date; snapshotIntervalMs?: number },
): Promise<void> {
  const { now } = options;
  const job = await startSnapshotJob({
    db,
    now,
    log: app.log,
    ...(options.snapshotIntervalMs === undefined ? {} : { intervalMs: options.snapshotIntervalMs }),
  });
  app.addHook('onClose', async () => job.stop());

  app.withTypeProvider<JsonSchemaToTsProvider>().get(
    '/api/admin/insights',
    {
      onRequest: guard,
      schema: {
        querystring: instanceInsightsQuerySchema,
        response: { 200: instanceInsightsSchema },
      },
    },
    async function adminGetInsights(request) {
      const at = now();
      const from = day('from', request.query.from);
      const to = day('to', request.query.to) ?? utcDay(at);
      const start = from ?? addDays(to, -DEFAULT_RANGE_DAYS);
      if (start > to) {
        throw new ApiError(
          'BAD_DATA',
          `Request validation failed: "from" (${start}) is after "to" (${to}).`,
        );
      }
      return readInsights(db, start, to, at);
    },
  );
}
