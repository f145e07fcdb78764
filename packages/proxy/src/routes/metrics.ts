import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import { usageReportSchema } from '@flags/schemas';
import type { FastifyInstance } from 'fastify';
import type { AuthorizeHook as Authenticate } from '../auth/access.js';
import { errorResponses, SERVER_SIDE_TAG, textResponse } from '../http/route-docs.js';
import type { UsageAggregator } from '../usage/aggregator.js';

export interface MetricsRouteOptions {
  /** The paths of one family: `/proxy/client/metrics` (and `/all`), `/api/frontend/client/metrics`, … */
  readonly paths: readonly string[];
  /** 200 `OK` (`/proxy`, as Unleash Proxy) or 202 with no body (`/api`, as Edge). */
  readonly accepted: 200 | 202;
  readonly authenticate: Authenticate;
  /** `undefined` when `metricsInterval` is 0: reports are validated and answered, not kept. */
  readonly aggregator: UsageAggregator | undefined;
}

/**
 * `POST /proxy/client/metrics` (and `/proxy/all/client/metrics`, the path older SDKs use): a
 * frontend or server-side SDK's usage counts, added to its application's bucket and sent upstream
 * under its own `appName` with the next report.
 */
export function metricsRoutes(
  app: FastifyInstance,
  options: MetricsRouteOptions,
  done: () => void,
): void {
  const { paths, accepted, authenticate, aggregator } = options;
  const schema = {
    summary: 'Send usage metrics; they are forwarded upstream under the sender’s appName.',
    tags: [SERVER_SIDE_TAG],
    body: usageReportSchema,
    response: {
      ...(accepted === 200 ? { 200: textResponse('OK') } : { 202: textResponse('Accepted') }),
      ...errorResponses(400, 401, 403, 429, 503),
    },
  };
  const typed = app.withTypeProvider<JsonSchemaToTsProvider>();
  for (const path of paths) {
    typed.post(
      path,
      { schema, onRequest: authenticate },
      function clientPostMetrics(request, reply) {
        aggregator?.addReport(request.body);
        if (accepted === 202) return reply.code(202).send();
        return reply.code(200).type('text/plain; charset=utf-8').send('OK');
      },
    );
  }
  done();
}
