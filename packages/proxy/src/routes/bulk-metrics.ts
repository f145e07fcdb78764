import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import { bulkMetricsSchema, instantMs } from '@flags/schemas';
import { errorResponses, SERVER_SIDE_TAG, textResponse } from '@flags/serving';
import type { FastifyInstance } from 'fastify';
import type { AuthorizeHook as Authenticate } from '../auth/access.js';
import { ProxyError } from '../errors.js';
import type { EdgeUpstreamMetrics } from '../prometheus-edge-upstream.js';

export interface BulkMetricsRouteOptions {
  /** Client tokens only: downstream Edges and proxies hold one of the environment they report for. */
  readonly authenticate: Authenticate;
  /** Counts the body's flags in Edge's `feature_toggle_usage_total`. */
  readonly edgeMetrics: EdgeUpstreamMetrics;
}

/**
 * `POST /api/client/metrics/bulk`: a downstream Unleash Edge's or proxy's batched metrics (Edge's
 * body `{ applications, metrics, impactMetrics? }`), added to the usage of the token's environment
 * (entries of other environments are skipped, as the upstream skips them) and sent upstream with
 * the next report, the registrations with the proxy added to their `connectVia`. 202, as Edge.
 */
export function bulkMetricsRoutes(
  app: FastifyInstance,
  options: BulkMetricsRouteOptions,
  done: () => void,
): void {
  app.withTypeProvider<JsonSchemaToTsProvider>().post(
    '/api/client/metrics/bulk',
    {
      schema: {
        summary:
          'Send batched usage metrics from a downstream Edge or proxy; they are forwarded upstream with the next report.',
        tags: [SERVER_SIDE_TAG],
        body: bulkMetricsSchema,
        response: {
          202: textResponse('Accepted'),
          ...errorResponses(400, 401, 403, 429, 503),
        },
      },
      onRequest: options.authenticate,
    },
    function clientPostBulkMetrics(request, reply) {
      // As the upstream refuses them (issue 40): the schema keeps years to 1970..9999, an offset
      // can still move an instant outside.
      for (const metric of request.body.metrics)
        if (Number.isNaN(instantMs(metric.timestamp)))
          throw new ProxyError('BAD_BODY', ['Every metric timestamp must be a valid date.']);
      request.access.environment.usage?.addBulk(request.body);
      options.edgeMetrics.reportedBulk(request.body);
      return reply.code(202).send();
    },
  );
  done();
}
