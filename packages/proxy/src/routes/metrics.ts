import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import { instantMs, usageReportSchema } from '@flags/schemas';
import { errorResponses, SERVER_SIDE_TAG, textResponse } from '@flags/serving';
import type { FastifyInstance } from 'fastify';
import type { AuthorizeHook as Authenticate } from '../auth/access.js';
import { ProxyError } from '../errors.js';
import type { EdgeUpstreamMetrics } from '../prometheus-edge-upstream.js';

export interface MetricsRouteOptions {
  /** The paths of one family: `/proxy/client/metrics` (and `/all`), `/api/frontend/client/metrics`, … */
  readonly paths: readonly string[];
  /** 200 `OK` (`/proxy`, as Unleash Proxy) or 202 with no body (`/api`, as Edge). */
  readonly accepted: 200 | 202;
  readonly authenticate: Authenticate;
  /** Counts each report's flags in Edge's `feature_toggle_usage_total`. */
  readonly edgeMetrics: EdgeUpstreamMetrics;
}

/**
 * `POST /proxy/client/metrics` (and `/proxy/all/client/metrics`, the path older SDKs use, and the
 * same under `/api`): a frontend or server-side SDK's usage counts and impact metrics, added to its
 * application's bucket in the environment of the key it came with and sent upstream under its own
 * `appName` with the next report. With `metricsInterval` 0 reports are validated and answered,
 * not kept.
 */
export function metricsRoutes(
  app: FastifyInstance,
  options: MetricsRouteOptions,
  done: () => void,
): void {
  const { paths, accepted, authenticate, edgeMetrics } = options;
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
        const { start, stop } = request.body.bucket;
        // The schema keeps years to 1970..9999; an offset can still move an instant outside,
        // and the upstream refuses those (issue 40).
        if (Number.isNaN(instantMs(start)) || Number.isNaN(instantMs(stop)))
          throw new ProxyError('BAD_BODY', ['bucket.start and bucket.stop must be valid dates.']);
        request.access.environment.usage?.addReport(request.body);
        edgeMetrics.reported(request.body);
        if (accepted === 202) return reply.code(202).send();
        return reply.code(200).type('text/plain; charset=utf-8').send('OK');
      },
    );
  }
  done();
}
