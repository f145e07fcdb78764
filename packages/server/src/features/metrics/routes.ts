import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import { bulkMetricsSchema, clientMetricsSchema, clientRegisterSchema } from '@flags/schemas';
import type { FastifyInstance } from 'fastify';
import type { TokenGuard } from '../../auth/token-guard.js';
import type { Database } from '../../db/database.js';
import { ApiError } from '../../errors.js';
import { countsOfBulk, countsOfReport, recordInstances } from './metrics-store.js';
import { headerValue, sdkInstance } from './sdk-instance.js';
import type { UsageBuffer } from './usage-buffer.js';

/** `/api/client/metrics/edge` takes any JSON object: Edge's instance data, which is not stored. */
const edgeInstanceDataSchema = { type: 'object' } as const;

/** Where one API takes SDK registrations and usage reports, and how many per address. */
export interface ReportPaths {
  readonly register: string;
  readonly metrics: string;
  /**
   * Requests per client address and minute on each path (429 beyond); `undefined`: no limit (the
   * client API's tokens are secrets, the frontend API's ship in every page).
   */
  readonly perMinute?: number;
  /**
   * Whether registrations' strategy lists are stored: not from the frontend API, whose token is
   * public and whose SDKs (browsers, mobile apps) evaluate nothing themselves (issue 40: each
   * list was up to 25 KB a request).
   */
  readonly storesStrategies: boolean;
}

/**
 * `POST <register>` and `POST <metrics>` of one API (the client API's, or the frontend API's for
 * browser SDKs), behind that API's guard: registrations and usage counts, recorded under the
 * token's environment in the same hourly buckets, so insights count both APIs alike.
 */
export function sdkReportRoutes(
  app: FastifyInstance,
  db: Database,
  guard: TokenGuard,
  version: string,
  paths: ReportPaths,
  usage: UsageBuffer,
): void {
  const typed = app.withTypeProvider<JsonSchemaToTsProvider>();
  const config =
    paths.perMinute === undefined
      ? {}
      : {
          rateLimit: {
            max: paths.perMinute,
            timeWindow: 60_000,
            errorResponseBuilder: () => new ApiError('RATE_LIMITED'),
          },
        };

  typed.post(
    paths.register,
    { schema: { body: clientRegisterSchema }, onRequest: guard, config },
    async function sdkPostRegister(request, reply) {
      const environment = request.apiToken.environment ?? 'default';
      // Without a list, an application's stored one stays as it is (or empty).
      const { strategies, ...withoutStrategies } = request.body;
      const instance = sdkInstance(
        paths.storesStrategies ? request.body : withoutStrategies,
        request.headers,
      );
      await db.transaction((tx) => recordInstances(tx, environment, [instance], request.ip));
      return reply.status(202).header('x-unleash-version', version).send();
    },
  );

  typed.post(
    paths.metrics,
    { schema: { body: clientMetricsSchema }, onRequest: guard, config },
    async function sdkPostMetrics(request, reply) {
      const environment = request.apiToken.environment ?? 'default';
      const counts = countsOfReport(request.body);
      if (!counts) {
        throw new ApiError('BAD_DATA', 'bucket.start and bucket.stop must be valid dates.');
      }
      const instance = sdkInstance(request.body, request.headers);
      await usage.record({ environment, counts, instances: [instance], clientIp: request.ip });
      return reply.status(202).send();
    },
  );
}

export function clientMetricsRoutes(
  app: FastifyInstance,
  db: Database,
  guard: TokenGuard,
  version: string,
  usage: UsageBuffer,
): void {
  sdkReportRoutes(
    app,
    db,
    guard,
    version,
    { register: '/api/client/register', metrics: '/api/client/metrics', storesStrategies: true },
    usage,
  );
  const typed = app.withTypeProvider<JsonSchemaToTsProvider>();

  typed.post(
    '/api/client/metrics/bulk',
    { schema: { body: bulkMetricsSchema }, onRequest: guard },
    async function clientPostBulkMetrics(request, reply) {
      const environment = request.apiToken.environment ?? 'default';
      const { applications, metrics } = request.body;
      // A token speaks for its own environment only: as unleash-server does, metrics and
      // applications of other environments are dropped (and the answer is still 202).
      const counts = countsOfBulk(metrics, environment);
      if (!counts) throw new ApiError('BAD_DATA', 'Every metric timestamp must be a valid date.');
      const instances = applications
        .filter((application) => (application.environment ?? environment) === environment)
        .map((application) => sdkInstance(application));
      await usage.record({ environment, counts, instances, clientIp: request.ip });
      return reply.status(202).send();
    },
  );

  typed.post(
    '/api/client/metrics/edge',
    { schema: { body: edgeInstanceDataSchema }, onRequest: guard },
    async function clientPostEdgeInstanceData(request, reply) {
      // Only the sender is recorded as seen, by the `UNLEASH-*` headers Edge sends upstream.
      const appName = headerValue(request.headers, 'unleash-appname');
      if (appName) {
        const environment = request.apiToken.environment ?? 'default';
        const instance = sdkInstance({ appName }, request.headers);
        await db.transaction((tx) => recordInstances(tx, environment, [instance], request.ip));
      }
      return reply.status(202).send();
    },
  );
}
