import type { Context } from '@flags/schemas';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ContextDefaults } from '../context/from-request.js';
import { contextFromBody, contextFromQuery } from '../context/from-request.js';
import { ProxyError } from '../errors.js';
import type { CompiledState, ProxyState } from '../state.js';
import type { Enrichers } from './hooks.js';
import { type Rendered, renderEvaluations, renderNamed, sendRendered } from './serialize.js';

export interface EvaluationRouteOptions {
  readonly state: ProxyState;
  readonly authenticate: (request: FastifyRequest, reply: FastifyReply, done: () => void) => void;
  readonly defaults: ContextDefaults;
  readonly enrichers: Enrichers;
}

export interface EvaluationBody {
  readonly context: unknown;
  /** `undefined` (or empty): every toggle enabled for the context. */
  readonly toggles: readonly string[] | undefined;
}

/** Reads `{ context, toggles? }` without a schema pass: the hot path checks by hand. */
export function readEvaluationBody(body: unknown): EvaluationBody {
  if (body === undefined || body === null) return { context: undefined, toggles: undefined };
  if (typeof body !== 'object' || Array.isArray(body)) {
    throw new ProxyError('BAD_BODY', ['the body must be an object { context, toggles? }']);
  }
  const { context, toggles } = body as { context?: unknown; toggles?: unknown };
  if (toggles === undefined || toggles === null) return { context, toggles: undefined };
  if (!Array.isArray(toggles))
    throw new ProxyError('BAD_BODY', ['"toggles" must be a list of toggle names']);
  const names = new Array<string>(toggles.length);
  for (let i = 0; i < toggles.length; i++) {
    const name: unknown = toggles[i];
    if (typeof name === 'string') names[i] = name;
    else if (typeof name === 'number') names[i] = String(name);
    else throw new ProxyError('BAD_BODY', [`"toggles[${i}]" must be a toggle name`]);
  }
  return { context, toggles: names.length === 0 ? undefined : names };
}

/** Runs the enrichers when there are any; stays synchronous otherwise. */
export function withContext(
  enrichers: Enrichers,
  context: Context,
  render: (context: Context) => Rendered,
  request: FastifyRequest,
  reply: FastifyReply,
): FastifyReply | Promise<FastifyReply> {
  if (enrichers.empty) return sendRendered(request, reply, render(context));
  return enrichers
    .apply(context)
    .then((enriched) => sendRendered(request, reply, render(enriched)));
}

/** The readiness hook guarantees a snapshot on every route behind it. */
export function currentState(state: ProxyState): CompiledState {
  return state.current as CompiledState;
}

/** `GET /proxy` and `POST /proxy`: the toggles enabled for a context, or the named ones. */
export function frontendRoutes(
  app: FastifyInstance,
  options: EvaluationRouteOptions,
  done: () => void,
): void {
  const { state, authenticate, defaults, enrichers } = options;

  app.get('/proxy', { onRequest: authenticate }, function frontendGetEnabled(request, reply) {
    const compiled = currentState(state);
    const context = contextFromQuery(
      request.query as Record<string, string | string[]>,
      request.ip,
      defaults,
    );
    return withContext(
      enrichers,
      context,
      (ctx) => renderEvaluations(compiled, ctx, false),
      request,
      reply,
    );
  });

  app.post('/proxy', { onRequest: authenticate }, function frontendPostEvaluate(request, reply) {
    const compiled = currentState(state);
    const body = readEvaluationBody(request.body);
    const context = contextFromBody(body.context, request.ip, defaults);
    const names = body.toggles;
    return withContext(
      enrichers,
      context,
      names === undefined
        ? (ctx) => renderEvaluations(compiled, ctx, false)
        : (ctx) => renderNamed(compiled, ctx, names),
      request,
      reply,
    );
  });

  done();
}
