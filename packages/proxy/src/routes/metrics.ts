import { type UsageReport, usageReportSchema } from '@flags/schemas';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { UsageAggregator } from '../usage/aggregator.js';
import { errorResponses, SERVER_SIDE_TAG, textResponse } from './docs.js';

export interface MetricsRouteOptions {
  /** Client keys and server-side tokens. */
  readonly authenticate: (request: FastifyRequest, reply: FastifyReply, done: () => void) => void;
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
  const { authenticate, aggregator } = options;
  const schema = {
    summary: 'Send usage metrics; they are forwarded upstream under the sender’s appName.',
    tags: [SERVER_SIDE_TAG],
    body: usageReportSchema,
    response: { 200: textResponse('OK'), ...errorResponses(400, 401, 429, 503) },
  };
  const handler = function clientPostMetrics(request: FastifyRequest, reply: FastifyReply) {
    aggregator?.addReport(request.body as UsageReport);
    return reply.code(200).type('text/plain; charset=utf-8').send('OK');
  };
  app.post('/proxy/client/metrics', { schema, onRequest: authenticate }, handler);
  app.post('/proxy/all/client/metrics', { schema, onRequest: authenticate }, handler);
  done();
}
