import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { readJsonBodies } from '../http/json-body.js';
import {
  type EvaluationRouteOptions,
  evaluateBody,
  evaluateQuery,
  evaluationDocs,
  evaluationSchema,
  type QueryRoute,
  type TextBodyRoute,
} from './frontend.js';

export const ALL_DISABLED_MESSAGE =
  'The /proxy/all endpoint is disabled. Please check your server configuration. To enable it, set the `enableAllEndpoint` configuration option or `ENABLE_ALL_ENDPOINT` environment variable to `true`.';

export interface AllRouteOptions extends EvaluationRouteOptions {
  /** `/proxy`, `/api/frontend`, `/api/proxy` (or `''` under a prefix): the routes are `<mount>/all`. */
  readonly mount: string;
  readonly enabled: boolean;
}

/** `GET <mount>/all` and `POST <mount>/all`: enabled and disabled toggles (only with `enableAllEndpoint`). */
export function allRoutes(app: FastifyInstance, options: AllRouteOptions, done: () => void): void {
  const { authenticate, enabled, mount } = options;
  readJsonBodies(app, 'text');
  // The path as callers send it: under the plugin's prefix (a base path, or flags-server's mount).
  const message = ALL_DISABLED_MESSAGE.replace('/proxy/all', `${app.prefix}${mount}/all`);
  const disabled = function allEndpointDisabled(_request: FastifyRequest, reply: FastifyReply) {
    return reply.code(501).type('text/html; charset=utf-8').send(message);
  };
  app.get<QueryRoute>(
    `${mount}/all`,
    {
      onRequest: authenticate,
      schema: evaluationSchema('Every toggle, enabled or not (`enableAllEndpoint`).', 'GET', true),
      config: { docs: evaluationDocs.GET },
    },
    enabled ? evaluateQuery(options, true) : disabled,
  );
  app.post<TextBodyRoute>(
    `${mount}/all`,
    {
      onRequest: authenticate,
      schema: evaluationSchema(
        'Every toggle, or every named toggle (`enableAllEndpoint`).',
        'POST',
        true,
      ),
      config: { docs: evaluationDocs.POST },
    },
    enabled ? evaluateBody(options, true) : disabled,
  );
  done();
}
