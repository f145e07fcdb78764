import type { FastifyInstance } from 'fastify';
import { errorResponses, OPERATIONAL_TAG, textResponse } from '../http/route-docs.js';
import type { ProxyMetrics } from '../prometheus.js';

/** `GET /proxy/internal-backstage/prometheus`: the exposition text; no key (readiness applies). */
export function prometheusRoutes(
  app: FastifyInstance,
  options: { readonly metrics: ProxyMetrics },
  done: () => void,
): void {
  const { registry } = options.metrics;
  app.get(
    '/proxy/internal-backstage/prometheus',
    {
      schema: {
        summary: 'Prometheus metrics of this proxy.',
        tags: [OPERATIONAL_TAG],
        security: [],
        response: {
          200: textResponse('Prometheus text exposition format 0.0.4.'),
          ...errorResponses(503),
        },
      },
    },
    async function operationalGetPrometheus(_request, reply) {
      const text = await registry.metrics();
      return reply.code(200).type(registry.contentType).send(text);
    },
  );
  done();
}
