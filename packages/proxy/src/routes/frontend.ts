import {
  type Context,
  contextQuerySchema,
  frontendRequestSchema,
  frontendResponseSchema,
} from '@flags/schemas';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteGenericInterface } from 'fastify';
import type { Authenticate } from '../auth/require-key.js';
import type { Enrichers } from '../context/enrichers.js';
import type { ContextDefaults } from '../context/from-request.js';
import { contextFromBody, contextFromQuery } from '../context/from-request.js';
import { ProxyError } from '../errors.js';
import { parseJson, readJsonBodies } from '../http/json-body.js';
import { errorResponses, FRONTEND_TAG } from '../http/route-docs.js';
import { type AnswerWriter, type Rendered, renderNamed, sendRendered } from '../http/serialize.js';
import type { CompiledState, ProxyState } from '../state.js';

export interface EvaluationRouteOptions {
  readonly state: ProxyState;
  readonly authenticate: Authenticate;
  readonly defaults: ContextDefaults;
  readonly enrichers: Enrichers;
  /** Headers of every answer (`KeyedAnswerHeaders.evaluation`). */
  readonly headers: Readonly<Record<string, string>>;
  /** The app's writer of evaluation answers. */
  readonly writer: AnswerWriter;
}

/** The query as Fastify parses it: no schema runs on the hot path (see `evaluationDocs`). */
export interface QueryRoute extends RouteGenericInterface {
  Querystring: Record<string, string | string[]>;
}

/** The body as JSON text (`readJsonBodies(app, 'text')`), parsed only when no answer is kept. */
export interface TextBodyRoute extends RouteGenericInterface {
  Body: string | undefined;
}

export type EvaluationHandler<Route extends RouteGenericInterface> = (
  request: FastifyRequest<Route>,
  reply: FastifyReply,
) => FastifyReply | Promise<FastifyReply>;

export interface EvaluationBody {
  readonly context: unknown;
  /** `undefined` (or empty): every toggle enabled for the context. */
  readonly toggles: readonly string[] | undefined;
}

/**
 * OpenAPI of the evaluation routes. The handlers read query and body by hand (no schema pass on
 * the hot path), so those two schemas go in `config.docs` and only document; the response schemas
 * never serialize, since the answers are pre-serialized strings.
 */
export function evaluationSchema(summary: string, method: 'GET' | 'POST', all: boolean) {
  return {
    summary,
    tags: [FRONTEND_TAG],
    response: {
      200: { description: 'Toggle results.', ...frontendResponseSchema },
      ...(method === 'GET'
        ? { 304: { description: 'Not modified (`If-None-Match`).', type: 'null' } }
        : {}),
      ...errorResponses(
        ...(method === 'GET'
          ? ([400, 401, 500, 503] as const)
          : ([400, 401, 413, 415, 500, 503] as const)),
        ...(all ? ([501] as const) : []),
      ),
    },
  };
}

export const evaluationDocs = {
  GET: { querystring: contextQuerySchema },
  POST: { body: frontendRequestSchema },
} as const;

/**
 * Reads `{ context, toggles? }` from the JSON text the body parser leaves (`readJsonBodies`), with
 * no schema pass: the hot path checks by hand.
 */
function readEvaluationBody(text: string): EvaluationBody {
  const body = text === '' ? undefined : parseJson(text);
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
function withContext(
  options: EvaluationRouteOptions,
  context: Context,
  render: (context: Context) => Rendered,
  request: FastifyRequest,
  reply: FastifyReply,
): FastifyReply | Promise<FastifyReply> {
  const { enrichers, headers } = options;
  if (enrichers.empty) return sendRendered(request, reply, render(context), headers);
  return enrichers
    .apply(context)
    .then((enriched) => sendRendered(request, reply, render(enriched), headers));
}

/**
 * The answer-cache key of a request: what its context is built from, as sent, so that a kept answer
 * is found without parsing the query or body, building the context or serializing it. Two spellings
 * of one context are two entries, which only costs memory. The client address is part of the key:
 * the context takes `remoteAddress` from it when the caller gives none, or always with
 * `ignoreCallerRemoteAddress` (then it is the only address that counts). `undefined` when the cache
 * is off (it is whenever there are enrichers, whose output the raw request does not determine).
 */
function requestKey(
  compiled: CompiledState,
  source: 'query' | 'body',
  all: boolean,
  ip: string,
  raw: string,
): string | undefined {
  if (compiled.answers === undefined) return undefined;
  return `${source} ${all ? 'all' : 'enabled'} ${ip} ${raw}`;
}

/**
 * The `GET` handler of an evaluation route: context from the query, the toggles that are enabled
 * (or, with `all`, every toggle).
 */
export function evaluateQuery(
  options: EvaluationRouteOptions,
  all: boolean,
): EvaluationHandler<QueryRoute> {
  const { state, defaults, headers, writer } = options;
  return function evaluateQueryContext(request, reply) {
    const compiled = state.serving();
    const key = requestKey(compiled, 'query', all, request.ip, request.url);
    const kept = compiled.keptAnswer(key);
    if (kept !== undefined) return sendRendered(request, reply, kept, headers);
    const context = contextFromQuery(request.query, request.ip, defaults);
    return withContext(
      options,
      context,
      (ctx) => writer.renderEvaluations(compiled, ctx, all, key),
      request,
      reply,
    );
  };
}

/**
 * The `POST` handler of an evaluation route: `{ context, toggles? }`; every named toggle when
 * `toggles` is given, else as `evaluateQuery`.
 */
export function evaluateBody(
  options: EvaluationRouteOptions,
  all: boolean,
): EvaluationHandler<TextBodyRoute> {
  const { state, defaults, headers, writer } = options;
  return function evaluateBodyContext(request, reply) {
    const compiled = state.serving();
    const text = request.body ?? '';
    const key = requestKey(compiled, 'body', all, request.ip, text);
    const kept = compiled.keptAnswer(key);
    if (kept !== undefined) return sendRendered(request, reply, kept, headers);
    const body = readEvaluationBody(text);
    const context = contextFromBody(body.context, request.ip, defaults);
    const names = body.toggles;
    return withContext(
      options,
      context,
      names === undefined
        ? (ctx) => writer.renderEvaluations(compiled, ctx, all, key)
        : (ctx) => renderNamed(compiled, ctx, names),
      request,
      reply,
    );
  };
}

/** `GET /proxy` and `POST /proxy`: the toggles enabled for a context, or the named ones. */
export function frontendRoutes(
  app: FastifyInstance,
  options: EvaluationRouteOptions,
  done: () => void,
): void {
  const { authenticate } = options;
  readJsonBodies(app, 'text');
  app.get<QueryRoute>(
    '/proxy',
    {
      onRequest: authenticate,
      schema: evaluationSchema('The toggles enabled for the context in the query.', 'GET', false),
      config: { docs: evaluationDocs.GET },
    },
    evaluateQuery(options, false),
  );
  app.post<TextBodyRoute>(
    '/proxy',
    {
      onRequest: authenticate,
      schema: evaluationSchema(
        'The toggles enabled for the context, or every named toggle (`toggles`).',
        'POST',
        false,
      ),
      config: { docs: evaluationDocs.POST },
    },
    evaluateBody(options, false),
  );
  done();
}
