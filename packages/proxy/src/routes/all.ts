import type { FastifyInstance } from 'fastify';
import { contextFromBody, contextFromQuery } from '../context/from-request.js';
import {
  currentState,
  type EvaluationRouteOptions,
  evaluationDocs,
  evaluationSchema,
  readEvaluationBody,
  withContext,
} from './frontend.js';
import { renderEvaluations, renderNamed } from './serialize.js';

export const ALL_DISABLED_MESSAGE =
  'The /proxy/all endpoint is disabled. Please check your server configuration. To enable it, set the `enableAllEndpoint` configuration option or `ENABLE_ALL_ENDPOINT` environment variable to `true`.';

export interface AllRouteOptions extends EvaluationRouteOptions {
  readonly enabled: boolean;
}

/** `GET /proxy/all` and `POST /proxy/all`: enabled and disabled toggles (only with `enableAllEndpoint`). */
export function allRoutes(app: FastifyInstance, options: AllRouteOptions, done: () => void): void {
  const { state, authenticate, defaults, enrichers, enabled } = options;

  const getOptions = {
    onRequest: authenticate,
    schema: evaluationSchema('Every toggle, enabled or not (`enableAllEndpoint`).', 'GET', true),
    config: { docs: evaluationDocs.GET },
  };
  const postOptions = {
    onRequest: authenticate,
    schema: evaluationSchema(
      'Every toggle, or every named toggle (`enableAllEndpoint`).',
      'POST',
      true,
    ),
    config: { docs: evaluationDocs.POST },
  };

  app.get('/proxy/all', getOptions, function frontendGetAll(request, reply) {
    if (!enabled)
      return reply.code(501).type('text/html; charset=utf-8').send(ALL_DISABLED_MESSAGE);
    const compiled = currentState(state);
    const context = contextFromQuery(
      request.query as Record<string, string | string[]>,
      request.ip,
      defaults,
    );
    return withContext(
      enrichers,
      context,
      (ctx) => renderEvaluations(compiled, ctx, true),
      request,
      reply,
    );
  });

  app.post('/proxy/all', postOptions, function frontendPostAll(request, reply) {
    if (!enabled)
      return reply.code(501).type('text/html; charset=utf-8').send(ALL_DISABLED_MESSAGE);
    const compiled = currentState(state);
    const body = readEvaluationBody(request.body);
    const context = contextFromBody(body.context, request.ip, defaults);
    const names = body.toggles;
    return withContext(
      enrichers,
      context,
      names === undefined
        ? (ctx) => renderEvaluations(compiled, ctx, true)
        : (ctx) => renderNamed(compiled, ctx, names),
      request,
      reply,
    );
  });

  done();
}
