import { errorResponses, OPERATIONAL_TAG, textResponse } from '@flags/serving';
import type { FastifyInstance } from 'fastify';
import type { ProxyMetrics } from '../prometheus.js';

export interface PrometheusRouteOptions {
  readonly metrics: ProxyMetrics;
  /** `/proxy/internal-backstage/prometheus` (Unleash Proxy's) or `/internal-backstage/metrics` (Edge's). */
  readonly path: string;
  /** Answered before the first sync too (Edge's path); otherwise readiness applies (503). */
  readonly beforeReady: boolean;
}

/** `GET <path>`: the Prometheus exposition text; no key. */
export function prometheusRoutes(
  app: FastifyInstance,
  options: PrometheusRouteOptions,
  done: () => void,
): void {
  const { registry } = options.metrics;
  app.get(
    options.path,
    {
      config: { beforeReady: options.beforeReady },
      schema: {
        summary: 'Prometheus metrics of this proxy.',
        tags: [OPERATIONAL_TAG],
        security: [],
        response: {
          200: textResponse('Prometheus text exposition format 0.0.4.'),
          ...(options.beforeReady ? {} : errorResponses(503)),
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
