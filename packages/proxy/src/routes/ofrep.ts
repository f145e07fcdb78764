import type { Evaluation, EvaluationVisitor } from '@flags/engine';
import {
  type Context,
  type OfrepErrorBody,
  type OfrepErrorCode,
  type OfrepEvaluation,
  type OfrepFlagParams,
  ofrepBulkResponseSchema,
  ofrepErrorSchema,
  ofrepEvaluationSchema,
  ofrepFlagParamsSchema,
  ofrepRequestSchema,
} from '@flags/schemas';
import type { CompiledState, Enrichers } from '@flags/serving';
import {
  type ContextDefaults,
  contextFromBody,
  errorResponses,
  ListTag,
  notModified,
  OFREP_TAG,
  type ResultTag,
  resultTag,
  ServingError,
} from '@flags/serving';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AuthorizeHook as Authenticate, KeyReader } from '../auth/access.js';
import {
  contextEtag,
  contextTagBase,
  contextTagHit,
  type StateRevisions,
} from '../http/context-etag.js';
import type { OfrepEvents } from './ofrep-events.js';

/**
 * OFREP, the OpenFeature Remote Evaluation Protocol: `POST /ofrep/v1/evaluate/flags/{key}` and the
 * bulk `POST /ofrep/v1/evaluate/flags`, so every OpenFeature SDK with an OFREP provider can use
 * the proxy. Same readiness and client keys as `/proxy`; keys are also accepted as
 * `Authorization: Bearer <key>` and `X-API-Key: <key>` (the protocol's two security schemes).
 */

class OfrepError extends Error {
  constructor(
    readonly status: number,
    readonly errorCode: OfrepErrorCode,
    readonly errorDetails: string,
  ) {
    super(errorDetails);
  }
}

/** One result's OFREP JSON and the tag standing for it in bulk ETags, cached per interned result. */
interface Fragment extends ResultTag {
  readonly json: string;
}

function payloadValue(payload: { readonly type: string; readonly value: string }): unknown {
  switch (payload.type) {
    case 'json':
      try {
        return JSON.parse(payload.value) as unknown;
      } catch {
        return payload.value;
      }
    case 'number': {
      const number = Number(payload.value);
      return payload.value.trim() === '' || Number.isNaN(number) ? payload.value : number;
    }
    default:
      return payload.value;
  }
}

/** `{ key, value, reason, variant, metadata }` of one engine result. */
export function ofrepResult(result: Evaluation): OfrepEvaluation {
  const variant = result.variant;
  const real = result.enabled && variant.enabled;
  return {
    key: result.name,
    value: real
      ? variant.payload === undefined
        ? true
        : payloadValue(variant.payload)
      : result.enabled,
    reason: result.reason,
    variant: real ? variant.name : result.enabled ? 'enabled' : 'disabled',
    metadata: { impressionData: result.impressionData },
  };
}

/** The OFREP fragments of one app, per snapshot. */
class OfrepFragments {
  private readonly byState = new WeakMap<CompiledState, Map<Evaluation, Fragment>>();

  of(compiled: CompiledState, result: Evaluation): Fragment {
    let fragments = this.byState.get(compiled);
    if (fragments === undefined) {
      fragments = new Map();
      this.byState.set(compiled, fragments);
    }
    let found = fragments.get(result);
    if (found === undefined) {
      const json = JSON.stringify(ofrepResult(result));
      found = { json, ...resultTag(json) };
      fragments.set(result, found);
    }
    return found;
  }
}

const ATTRIBUTE_FIELDS: ReadonlySet<string> = new Set(['properties', 'currentTime']);

/** The engine context of an OFREP request body (`{ context: { targetingKey?, ...attributes } }`). */
function contextOf(body: unknown, ip: string, defaults: ContextDefaults): Context {
  if (body === undefined || body === null) return contextFromBody(undefined, ip, defaults);
  if (typeof body !== 'object' || Array.isArray(body)) {
    throw new OfrepError(400, 'PARSE_ERROR', 'the body must be an object { context }');
  }
  const raw = (body as { context?: unknown }).context;
  if (raw === undefined || raw === null) return contextFromBody(undefined, ip, defaults);
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    throw new OfrepError(400, 'INVALID_CONTEXT', '"context" must be an object');
  }
  const input: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(raw as Record<string, unknown>)) {
    if (name === 'targetingKey') continue;
    if (value !== null && typeof value === 'object' && !ATTRIBUTE_FIELDS.has(name)) {
      throw new OfrepError(
        400,
        'INVALID_CONTEXT',
        `context attribute "${name}" must be a string, number or boolean`,
      );
    }
    input[name] = value;
  }
  const targetingKey = (raw as { targetingKey?: unknown }).targetingKey;
  if (targetingKey !== undefined && targetingKey !== null) input.userId = targetingKey;
  try {
    return contextFromBody(input, ip, defaults);
  } catch (error) {
    if (error instanceof ServingError) {
      throw new OfrepError(400, 'INVALID_CONTEXT', error.details.join('; '));
    }
    throw error;
  }
}

export interface OfrepRouteOptions {
  /**
   * `enableAllEndpoint`: flags that are off for the context are answered too. Without it the key
   * (public: it ships in every page) learns no more than `/proxy` tells it: the bulk answer lists
   * the enabled flags, and a flag that is off is answered exactly as an unknown one.
   */
  readonly all: boolean;
  /** The client key or frontend token in the configured header or in OFREP's (`ofrepKey`). */
  readonly authenticate: Authenticate;
  readonly defaults: ContextDefaults;
  readonly enrichers: Enrichers;
  /** `Vary` of every evaluation answer (`KeyedAnswerHeaders.ofrepVary`). */
  readonly vary: string;
  /** Reads the presented key (the event-stream credential is derived from it). */
  readonly readKey: KeyReader;
  readonly revisions: StateRevisions;
  /** The event streams bulk answers point at; `undefined`: none (`ofrepEventStreams` off). */
  readonly events: OfrepEvents | undefined;
}

/**
 * Collects a bulk answer from `evaluateEach`: the flags' JSON (only enabled ones unless `all`)
 * and the tag of the exact list of results.
 */
class BulkCollector implements EvaluationVisitor {
  json = '';
  readonly tag = new ListTag();
  private count = 0;

  constructor(
    private readonly compiled: CompiledState,
    private readonly fragments: OfrepFragments,
    private readonly all: boolean,
  ) {}

  visit(_index: number, result: Evaluation): void {
    if (!this.all && !result.enabled) return;
    const part = this.fragments.of(this.compiled, result);
    this.json = this.count === 0 ? part.json : `${this.json},${part.json}`;
    this.tag.add(part);
    this.count++;
  }
}

/** Errors of the OFREP routes in the protocol's shape (`{ key?, errorCode, errorDetails }`). */
function ofrepErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  const key = (request.params as { key?: string } | undefined)?.key;
  let status = 500;
  let errorCode: OfrepErrorCode = 'GENERAL';
  let details = 'the flag could not be evaluated';
  if (error instanceof OfrepError) {
    status = error.status;
    errorCode = error.errorCode;
    details = error.errorDetails;
  } else if (error instanceof ServingError) {
    status = error.status;
    errorCode = status < 500 ? 'PARSE_ERROR' : 'GENERAL';
    details = error.details.join('; ');
  } else if (error instanceof SyntaxError || error.statusCode === 400) {
    status = 400;
    errorCode = 'PARSE_ERROR';
    details = error.message;
  } else if (typeof error.statusCode === 'number' && error.statusCode < 500) {
    status = error.statusCode;
    errorCode = 'PARSE_ERROR';
    details = error.message;
  }
  const body: OfrepErrorBody =
    key === undefined
      ? { errorCode, errorDetails: details }
      : { key, errorCode, errorDetails: details };
  void reply.code(status).type('application/json; charset=utf-8').send(JSON.stringify(body));
}

export function ofrepRoutes(
  app: FastifyInstance,
  options: OfrepRouteOptions,
  done: () => void,
): void {
  const { defaults, enrichers, all, vary, authenticate, readKey, revisions, events } = options;
  const fragments = new OfrepFragments();
  const enrich = (context: Context): Context | Promise<Context> =>
    enrichers.empty ? context : enrichers.apply(context);

  // The answers are JSON text written here, so the response schemas only document: the route
  // types its params alone, from their schema.
  app.post<{ Params: OfrepFlagParams }>(
    '/ofrep/v1/evaluate/flags/:key',
    {
      schema: {
        summary: 'OFREP: evaluate one flag.',
        tags: [OFREP_TAG],
        params: ofrepFlagParamsSchema,
        response: {
          200: { description: 'The evaluation.', ...ofrepEvaluationSchema },
          400: { description: 'PARSE_ERROR or INVALID_CONTEXT.', ...ofrepErrorSchema },
          404: {
            description:
              'FLAG_NOT_FOUND: no such flag, or (without `enableAllEndpoint`) the flag is off for the context.',
            ...ofrepErrorSchema,
          },
          ...errorResponses(401, 503),
        },
      },
      config: { docs: { body: ofrepRequestSchema } },
      onRequest: authenticate,
      errorHandler: ofrepErrorHandler,
    },
    async function ofrepEvaluateFlag(request, reply) {
      const compiled = request.served;
      const key = request.params.key;
      const context = await enrich(contextOf(request.body, request.ip, defaults));
      const result = compiled.evaluate(key, context);
      if (result === undefined || (!all && !result.enabled)) {
        throw new OfrepError(404, 'FLAG_NOT_FOUND', `flag "${key}" was not found`);
      }
      return reply
        .code(200)
        .header('vary', vary)
        .type('application/json; charset=utf-8')
        .send(fragments.of(compiled, result).json);
    },
  );

  app.post(
    '/ofrep/v1/evaluate/flags',
    {
      schema: {
        summary:
          'OFREP: evaluate the flags enabled for the context (every flag with `enableAllEndpoint`); `If-None-Match` with the last `ETag` gives 304.',
        tags: [OFREP_TAG],
        response: {
          200: {
            description:
              'The flags enabled for the context (with `enableAllEndpoint`, every flag).',
            ...ofrepBulkResponseSchema,
          },
          304: { description: 'Not modified (`If-None-Match`).', type: 'null' },
          400: { description: 'PARSE_ERROR or INVALID_CONTEXT.', ...ofrepErrorSchema },
          ...errorResponses(401, 503),
        },
      },
      config: { docs: { body: ofrepRequestSchema } },
      onRequest: authenticate,
      errorHandler: ofrepErrorHandler,
    },
    async function ofrepEvaluateFlags(request, reply) {
      const compiled = request.served;
      const context = await enrich(contextOf(request.body, request.ip, defaults));
      const nowMs = Date.now();
      const streams =
        events === undefined
          ? undefined
          : events.eventStreamsJson(readKey(request) ?? '', request.access, compiled, nowMs);
      // The tag is known before evaluating: the snapshot's revision, the rest of the answer (the
      // option, the event-stream URL) and the whole context as evaluated.
      const base = contextTagBase(
        revisions.of(compiled),
        `${all ? 'all' : 'enabled'}\n${streams ?? ''}`,
        context,
      );
      reply.header('vary', vary);
      const hit = contextTagHit(request.headers['if-none-match'], base, nowMs);
      if (hit !== undefined) return reply.header('etag', hit).code(304).send();
      const collector = new BulkCollector(compiled, fragments, all);
      const validUntilMs = compiled.evaluateEach(context, collector);
      let etag: string;
      if (validUntilMs > nowMs) etag = contextEtag(base, validUntilMs);
      else {
        // A random draw or a custom strategy: the same context may get other results, so the tag
        // stands for the results themselves (and the event-stream URL), checked after evaluating.
        if (streams !== undefined) collector.tag.add(resultTag(streams));
        etag = collector.tag.etag();
      }
      reply.header('etag', etag);
      if (notModified(request, etag)) return reply.code(304).send();
      const body =
        streams === undefined
          ? `{"flags":[${collector.json}]}`
          : `{"flags":[${collector.json}],"eventStreams":${streams}}`;
      return reply.code(200).type('application/json; charset=utf-8').send(body);
    },
  );
  done();
}
