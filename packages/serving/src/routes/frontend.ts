import {
  type Context,
  contextQuerySchema,
  frontendRequestSchema,
  frontendResponseSchema,
} from '@flags/schemas';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteGenericInterface } from 'fastify';
import type { AuthorizeHook } from '../authorize.js';
import type { Enrichers } from '../context/enrichers.js';
import type { ContextDefaults } from '../context/from-request.js';
import { contextFromBody, contextFromQuery } from '../context/from-request.js';
import { servingError } from '../errors.js';
import { ListTag } from '../http/conditional.js';
import { parseJson, readJsonBodies } from '../http/json-body.js';
import type {} from '../http/route-config.js';
import { errorResponses, FRONTEND_TAG } from '../http/route-docs.js';
import {
  type AnswerWriter,
  type Rendered,
  renderNamed,
  sendKept,
  sendRendered,
} from '../http/serialize.js';
import type { CompiledState } from '../state.js';

/** How one family of evaluation routes (`/proxy`, `/api/frontend`, `/api/proxy`) answers. */
export interface EvaluationFlavour {
  /** Toggles listed by name (`/api`, as Edge and unleash-server), else in the upstream's order. */
  readonly nameOrder: boolean;
  /** `If-None-Match` gets 304 on POST too (`/api`, as Edge; Unleash Proxy never did). */
  readonly conditionalPost: boolean;
  /** A POST body may be the context itself (`/api`, as Edge and unleash-server), besides `{ context }`. */
  readonly bareContext: boolean;
}

/** `/proxy`: Unleash Proxy's answers (upstream order, no 304 to POST, `{ context }` bodies). */
export const PROXY_FLAVOUR: EvaluationFlavour = {
  nameOrder: false,
  conditionalPost: false,
  bareContext: false,
};
/** `/api/frontend`, `/api/proxy`: Unleash Edge's (name order, 304 to POST too, bare contexts). */
export const API_FLAVOUR: EvaluationFlavour = {
  nameOrder: true,
  conditionalPost: true,
  bareContext: true,
};

export interface EvaluationRouteOptions {
  /** Admits the caller and sets `request.served` (`Authorizer.hook`). */
  readonly authenticate: AuthorizeHook;
  readonly flavour: EvaluationFlavour;
  readonly defaults: ContextDefaults;
  readonly enrichers: Enrichers;
  /** Headers of every answer (`KeyedAnswerHeaders.evaluation`). */
  readonly headers: Readonly<Record<string, string>>;
  /** The app's writer of evaluation answers. */
  readonly writer: AnswerWriter;
  /**
   * `<mount>/features/:name` answers a toggle that is off for the context (200, `enabled: false`),
   * as Unleash Edge does; without it, 404 as for an unknown one.
   */
  readonly answersDisabledFeature?: boolean;
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
export function readEvaluationBody(text: string, bareContext: boolean): EvaluationBody {
  const body = text === '' ? undefined : parseJson(text);
  if (body === undefined || body === null) return { context: undefined, toggles: undefined };
  if (typeof body !== 'object' || Array.isArray(body)) {
    throw servingError('BAD_BODY', ['the body must be an object { context, toggles? }']);
  }
  if (bareContext && !('context' in body) && !('toggles' in body))
    return { context: body, toggles: undefined };
  const { context, toggles } = body as { context?: unknown; toggles?: unknown };
  if (toggles === undefined || toggles === null) return { context, toggles: undefined };
  if (!Array.isArray(toggles))
    throw servingError('BAD_BODY', ['"toggles" must be a list of toggle names']);
  const names = new Array<string>(toggles.length);
  for (let i = 0; i < toggles.length; i++) {
    const name: unknown = toggles[i];
    if (typeof name === 'string') names[i] = name;
    else if (typeof name === 'number') names[i] = String(name);
    else throw servingError('BAD_BODY', [`"toggles[${i}]" must be a toggle name`]);
  }
  return { context, toggles: names.length === 0 ? undefined : names };
}

/**
 * Sends an answer rendered for this request, then lets the writer take back the scratch memory the
 * answer was written to, if it has left already (`AnswerWriter.settle`).
 */
function sendFresh(
  options: EvaluationRouteOptions,
  request: FastifyRequest,
  reply: FastifyReply,
  rendered: Rendered,
): FastifyReply {
  sendRendered(request, reply, rendered, options.headers, options.flavour.conditionalPost);
  options.writer.settle(reply.raw, rendered);
  return reply;
}

/** Runs the enrichers when there are any; stays synchronous otherwise. */
function withContext(
  options: EvaluationRouteOptions,
  context: Context,
  render: (context: Context) => Rendered,
  request: FastifyRequest,
  reply: FastifyReply,
): FastifyReply | Promise<FastifyReply> {
  if (options.enrichers.empty) return sendFresh(options, request, reply, render(context));
  return options.enrichers
    .apply(context)
    .then((enriched) => sendFresh(options, request, reply, render(enriched)));
}

/**
 * The answer-cache key of a request: what its context is built from, as sent, so that a kept answer
 * is found without parsing the query or body, building the context or serializing it. Two spellings
 * of one context are two entries, which only costs memory. The client address is part of the key:
 * the context takes `remoteAddress` from it when the caller gives none, or always with
 * `ignoreCallerRemoteAddress` (then it is the only address that counts). `undefined` when the cache
 * is off (it is whenever there are enrichers, whose output the raw request does not determine).
 */
export function requestKey(
  compiled: CompiledState,
  source: 'query' | 'body',
  all: boolean,
  flavour: EvaluationFlavour,
  ip: string,
  raw: string,
): string | undefined {
  if (compiled.answers === undefined) return undefined;
  // The flavour's switches change the answer (order) or the reading of the body (bare context).
  const form = flavour.nameOrder ? 'api' : 'proxy';
  return `${source} ${all ? 'all' : 'enabled'} ${form} ${ip} ${raw}`;
}

/**
 * The `GET` handler of an evaluation route: context from the query, the toggles that are enabled
 * (or, with `all`, every toggle).
 */
export function evaluateQuery(
  options: EvaluationRouteOptions,
  all: boolean,
): EvaluationHandler<QueryRoute> {
  const { defaults, headers, writer, flavour } = options;
  const { nameOrder, conditionalPost } = flavour;
  return function evaluateQueryContext(request, reply) {
    const compiled = request.served;
    const key = requestKey(compiled, 'query', all, flavour, request.ip, request.url);
    const kept = compiled.keptAnswer(key);
    if (kept !== undefined) return sendKept(request, reply, kept, headers, conditionalPost);
    const context = contextFromQuery(request.query, request.ip, defaults);
    return withContext(
      options,
      context,
      (ctx) => writer.renderEvaluations(compiled, ctx, all, key, nameOrder),
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
  const { defaults, headers, writer, flavour } = options;
  const { nameOrder, conditionalPost, bareContext } = flavour;
  return function evaluateBodyContext(request, reply) {
    const compiled = request.served;
    const text = request.body ?? '';
    const key = requestKey(compiled, 'body', all, flavour, request.ip, text);
    const kept = compiled.keptAnswer(key);
    if (kept !== undefined) return sendKept(request, reply, kept, headers, conditionalPost);
    const body = readEvaluationBody(text, bareContext);
    const context = contextFromBody(body.context, request.ip, defaults);
    return withContext(
      options,
      context,
      (ctx) => renderBody(writer, compiled, ctx, body.toggles, { all, key, nameOrder }),
      request,
      reply,
    );
  };
}

/**
 * The answer to an evaluation body: its named toggles, in the order named, or without them every
 * toggle enabled for the context (`all`: every toggle), kept under `key` as `renderEvaluations` does.
 */
export function renderBody(
  writer: AnswerWriter,
  compiled: CompiledState,
  context: Context,
  toggles: readonly string[] | undefined,
  how: { readonly all: boolean; readonly key: string | undefined; readonly nameOrder: boolean },
): Rendered {
  return toggles === undefined
    ? writer.renderEvaluations(compiled, context, how.all, how.key, how.nameOrder)
    : renderNamed(compiled, context, toggles);
}

/**
 * One toggle by name, for the context in the query (GET) or body (POST): Edge's
 * `/api/frontend/features/:name`. An unknown toggle is 404, like one the caller cannot see; so is a
 * disabled one unless `answersDisabledFeature`.
 */
function evaluateOne(options: EvaluationRouteOptions, source: 'query' | 'body') {
  const { defaults, flavour } = options;
  const answersDisabled = options.answersDisabledFeature === true;
  return function evaluateNamedToggle(
    request: FastifyRequest<{ Params: { name: string } } & QueryRoute & TextBodyRoute>,
    reply: FastifyReply,
  ): FastifyReply | Promise<FastifyReply> {
    const compiled = request.served;
    const context =
      source === 'query'
        ? contextFromQuery(request.query, request.ip, defaults)
        : contextFromBody(
            readEvaluationBody(request.body ?? '', flavour.bareContext).context,
            request.ip,
            defaults,
          );
    const render = (ctx: Context): Rendered => {
      const result = compiled.evaluate(request.params.name, ctx);
      if (result === undefined || !(result.enabled || answersDisabled))
        throw servingError('FEATURE_NOT_FOUND');
      const fragment = compiled.fragment(result);
      const tag = new ListTag();
      tag.add(fragment);
      return { body: fragment.json, etag: tag.etag() };
    };
    return withContext(options, context, render, request, reply);
  };
}

/**
 * The evaluation routes of one mount (`/proxy`, `/api/frontend`, `/api/proxy`): `GET`/`POST`
 * `<mount>` (the toggles enabled for a context, or the named ones) and `<mount>/features/:name`.
 */
export function frontendRoutes(
  app: FastifyInstance,
  options: EvaluationRouteOptions & { readonly mount: string },
  done: () => void,
): void {
  const { authenticate, mount } = options;
  readJsonBodies(app, 'text');
  app.get<QueryRoute>(
    mount,
    {
      onRequest: authenticate,
      schema: evaluationSchema('The toggles enabled for the context in the query.', 'GET', false),
      config: { docs: evaluationDocs.GET },
    },
    evaluateQuery(options, false),
  );
  app.post<TextBodyRoute>(
    mount,
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
  const one = {
    summary: options.answersDisabledFeature
      ? 'One toggle for the context, enabled or not; 404 when it is unknown.'
      : 'One enabled toggle for the context; 404 when it is disabled or unknown.',
    tags: [FRONTEND_TAG],
    params: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
    response: { ...errorResponses(400, 401, 403, 404, 503) },
  } as const;
  app.get(
    `${mount}/features/:name`,
    { onRequest: authenticate, schema: one, config: { docs: evaluationDocs.GET } },
    evaluateOne(options, 'query') as never,
  );
  app.post(
    `${mount}/features/:name`,
    { onRequest: authenticate, schema: one, config: { docs: evaluationDocs.POST } },
    evaluateOne(options, 'body') as never,
  );
  done();
}
