import type { IncomingHttpHeaders, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Context } from '@flags/schemas';
import type {
  AnswerWriter,
  CompiledState,
  ContextDefaults,
  Enrichers,
  Rendered,
} from '@flags/serving';
import {
  contextFromBody,
  type EvaluationFlavour,
  fixedCorsHeaders,
  ifNoneMatchHits,
  nonBlank,
  readEvaluationBody,
  renderBody,
  requestKey,
  trustsForwardedAddress,
} from '@flags/serving';
import type { Authorizer, KeyReader } from '../auth/access.js';
import type { ProxyConfig } from '../config/load.js';
import type { Logger } from '../config/options.js';
import { contextFromQueryString } from '../context/query-string.js';
import { answeredError, ERROR_CONTENT_TYPE, errorBody } from '../errors.js';
import type { ProxyMetrics } from '../prometheus.js';
import type { AddressFilter } from './address-filter.js';
import type { AnswerCompression } from './compression.js';
import { NOSNIFF } from './hooks.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The app's evaluation front, when it has one (`evaluationFrontFor`). */
    readonly evaluationFront: EvaluationFront | undefined;
  }
}

/** One evaluation route the front answers: `GET <prefix><mount>`. */
interface FrontRoute {
  /** The route's path as Fastify registered it, which is also its duration-histogram label. */
  readonly path: string;
  readonly flavour: EvaluationFlavour;
}

/**
 * Answers the commonest requests of the evaluation routes, `GET` and `POST` `/proxy`,
 * `/api/frontend` and `/api/proxy` with a key, in Node's `request` event, before Fastify: the same
 * answer, headers, usage counts and duration histogram as the routes, without the router, the
 * hooks and Fastify's request and reply objects (about a quarter of a cached answer's CPU). It
 * takes only what the routes would answer at once, and hands every other request to Fastify
 * untouched: other methods and paths (a trailing slash, an encoded character), no key or one the
 * routes would refuse or look up upstream, a query the routes refuse, a `GET` with a body, a
 * `POST` body that is chunked, over the body limit or not typed `application/json`, anything
 * before the first sync. A `POST` it takes is answered once its body has arrived, with the
 * routes' answer or, for a body they refuse (not JSON, not `{ context, toggles? }`), their error.
 *
 * `evaluationFrontFor` leaves it out where the routes do more than it does: with enrichers,
 * request logging, `trustProxy` (the address comes from forwarded headers) or an origin list
 * (the cross-origin headers depend on the request). `evaluation-front.test.ts` compares its
 * answers over real sockets with the routes' own (`inject`, which never reaches it).
 */
export class EvaluationFront {
  private readonly routes: ReadonlyMap<string, FrontRoute>;
  /**
   * Every header of an answer before its ETag, in the order Fastify's hooks and the route write
   * them (`x-content-type-options`, the cross-origin ones, then the evaluation ones), lower-cased
   * as Fastify writes them.
   */
  private readonly headers: Readonly<Record<string, string>>;
  /** The headers of an error answer before its length (a refused `POST` body). */
  private readonly errorHeaders: Readonly<Record<string, string>>;
  /** Requests answered here, not by Fastify (for tests and debugging). */
  answered = 0;
  /** Body bytes of the answer just written (`send`, `sendError`), for `http_response_size`. */
  private sentBytes = 0;

  /** `cors`: `fixedCorsHeaders`; `basePath`: the routes' prefix (`proxyBasePath`). */
  constructor(
    private readonly parts: EvaluationParts,
    basePath: string,
    cors: Readonly<Record<string, string>>,
  ) {
    const routes = parts.mounts.map(({ mount, flavour }) => ({
      path: `${basePath}${mount}`,
      flavour,
    }));
    this.routes = new Map(routes.map((route) => [route.path, route]));
    const headers: Record<string, string> = { ...NOSNIFF, ...cors };
    for (const [name, value] of Object.entries(parts.headers)) headers[name.toLowerCase()] = value;
    this.headers = Object.freeze(headers);
    this.errorHeaders = Object.freeze({
      ...NOSNIFF,
      ...cors,
      'content-type': ERROR_CONTENT_TYPE,
    });
  }

  /**
   * Answers `request` and returns `true`, or returns `false` having done nothing. A `POST` it takes
   * is answered once its body has arrived.
   */
  serve(request: IncomingMessage, response: ServerResponse): boolean {
    const startedAt = performance.now();
    const { method } = request;
    const post = method === 'POST';
    if (!post && method !== 'GET') return false;
    const url = request.url as string;
    const queryAt = url.indexOf('?');
    const route = this.routes.get(queryAt < 0 ? url : url.slice(0, queryAt));
    // `#` would end the query where the router ends it; no SDK sends one.
    if (route === undefined || url.includes('#')) return false;
    const { headers } = request;
    if (post ? !this.takesBody(headers) : hasBody(headers)) return false;
    const parts = this.parts;
    const presented = parts.readKey(request);
    if (presented === undefined || presented === '' || !parts.state.ready) return false;
    const compiled = parts.authorizer.frontendServed(presented);
    const { socket } = request;
    const ip = socket.remoteAddress;
    if (compiled === undefined || ip === undefined) return false;
    if (parts.addresses !== undefined && !parts.addresses.allowsConnection(socket)) return false;
    if (post) {
      this.readBody(request, response, route, compiled, ip, startedAt);
      return true;
    }
    const { writer } = parts;
    const { flavour } = route;
    const key = requestKey(compiled, 'query', false, flavour, ip, url);
    const kept = compiled.keptAnswer(key);
    let status: number;
    if (kept !== undefined) status = this.send(request, response, kept, true, true);
    else {
      const context = this.context(url, queryAt, ip);
      if (context === undefined) return false;
      const rendered = writer.renderEvaluations(compiled, context, false, key, flavour.nameOrder);
      status = this.send(request, response, rendered, true, false);
      // Only a freshly rendered answer is in the writer's scratch memory (see `AnswerWriter`).
      writer.settle(response, rendered);
    }
    this.done(request, route, 'GET', status, startedAt);
    return true;
  }

  /**
   * Whether the routes would read this `POST`'s body as JSON text at once: a `Content-Length`
   * within the body limit (a larger one is their 413), no chunked body, and the JSON type the
   * SDKs send (any other type, or none, is left to the routes' parser and its 415).
   */
  private takesBody(headers: IncomingHttpHeaders): boolean {
    const length = headers['content-length'];
    if (length === undefined || headers['transfer-encoding'] !== undefined) return false;
    if (Number(length) > this.parts.bodyLimit) return false;
    const type = headers['content-type']?.toLowerCase();
    return type === 'application/json' || type === 'application/json; charset=utf-8';
  }

  /**
   * Reads a `POST` body (as Fastify's parser does: the bytes, then UTF-8 text) and answers it. From
   * here on the request cannot go back to Fastify, so a body the routes refuse gets the error they
   * send; a client that goes away before the end of its body gets nothing.
   */
  private readBody(
    request: IncomingMessage,
    response: ServerResponse,
    route: FrontRoute,
    compiled: CompiledState,
    ip: string,
    startedAt: number,
  ): void {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const raw =
        chunks.length === 1
          ? (chunks[0] as Buffer).toString('utf8')
          : Buffer.concat(chunks).toString('utf8');
      // A blank body is no body, as the routes' parser reads it (`readJsonBodies`).
      const text = nonBlank(raw) ?? '';
      let status: number;
      try {
        status = this.answerBody(request, response, route.flavour, compiled, ip, text);
      } catch (error) {
        if (response.headersSent) {
          response.destroy();
          return;
        }
        status = this.sendError(response, error);
      }
      this.done(request, route, 'POST', status, startedAt);
    });
  }

  /** The answer of the `POST` routes to the body `text`; the status sent. */
  private answerBody(
    request: IncomingMessage,
    response: ServerResponse,
    flavour: EvaluationFlavour,
    compiled: CompiledState,
    ip: string,
    text: string,
  ): number {
    const { writer, defaults } = this.parts;
    const key = requestKey(compiled, 'body', false, flavour, ip, text);
    const kept = compiled.keptAnswer(key);
    if (kept !== undefined)
      return this.send(request, response, kept, flavour.conditionalPost, true);
    const body = readEvaluationBody(text, flavour.bareContext);
    const context = contextFromBody(body.context, ip, defaults);
    const rendered = renderBody(writer, compiled, context, body.toggles, {
      all: false,
      key,
      nameOrder: flavour.nameOrder,
    });
    const status = this.send(request, response, rendered, flavour.conditionalPost, false);
    writer.settle(response, rendered);
    return status;
  }

  /** The error answer the routes give (see `installErrorHandler`); the status sent. */
  private sendError(response: ServerResponse, thrown: unknown): number {
    const error = answeredError(thrown, this.parts.log);
    const body = JSON.stringify(errorBody(error));
    this.sentBytes = Buffer.byteLength(body);
    response.writeHead(error.status, {
      ...this.errorHeaders,
      'content-length': String(this.sentBytes),
    });
    response.end(body);
    return error.status;
  }

  /** Counts an answer sent here in the duration histogram, as the routes' `onSend` hook does. */
  private done(
    request: IncomingMessage,
    route: FrontRoute,
    method: string,
    status: number,
    startedAt: number,
  ): void {
    const ms = performance.now() - startedAt;
    const { metrics } = this.parts;
    metrics.observeRoute(route.path, method, status, ms, this.sentBytes, request.headers);
    this.answered++;
  }

  /**
   * The context in the query, read as the routes read it; `undefined` when they refuse it (a
   * repeated parameter: they answer 400).
   */
  private context(url: string, queryAt: number, ip: string): Context | undefined {
    try {
      return contextFromQueryString(
        queryAt < 0 ? '' : url.slice(queryAt + 1),
        ip,
        this.parts.defaults,
      );
    } catch {
      return undefined;
    }
  }

  /**
   * Writes the answer (304 when `conditional` and `If-None-Match` names it, as `sendRendered`),
   * encoded as the routes' compression would (`kept`: the answer cache's body); the status sent.
   */
  private send(
    request: IncomingMessage,
    response: ServerResponse,
    rendered: Rendered,
    conditional: boolean,
    kept: boolean,
  ): number {
    const headers: Record<string, string> = { ...this.headers, etag: rendered.etag };
    if (conditional && ifNoneMatchHits(request.headers['if-none-match'], rendered.etag)) {
      delete headers['content-type'];
      response.writeHead(304, headers);
      response.end();
      this.sentBytes = 0;
      return 304;
    }
    let body = rendered.body;
    const encoded = this.parts.compression?.encode(request.headers, body, kept, rendered.render);
    if (encoded !== undefined) {
      // `Vary` names `Accept-Encoding` already (`KeyedAnswerHeaders.evaluation`).
      headers['content-encoding'] = encoded.encoding;
      body = encoded.body;
    }
    this.sentBytes = Buffer.byteLength(body);
    headers['content-length'] = String(this.sentBytes);
    response.writeHead(200, headers);
    response.end(body);
    return 200;
  }
}

/** Whether a request announces a body. */
function hasBody(headers: IncomingHttpHeaders): boolean {
  return headers['content-length'] !== undefined || headers['transfer-encoding'] !== undefined;
}

type RequestListener = (request: IncomingMessage, response: ServerResponse) => void;

/**
 * Puts `front` before Fastify in `server`'s `request` event: Fastify listens there with one
 * handler, which then gets every request the front does not answer (should Fastify ever listen
 * otherwise, the front stays out). A failure inside the front never reaches Node's event (which
 * would end the process): a request not yet answered goes to Fastify, any other is cut off.
 */
export function installEvaluationFront(server: Server, front: EvaluationFront): void {
  const listeners = server.listeners('request') as RequestListener[];
  if (listeners.length !== 1) return;
  const fastify = listeners[0] as RequestListener;
  server.removeListener('request', fastify);
  server.on('request', function evaluationFront(request, response) {
    let answered: boolean;
    try {
      answered = front.serve(request, response);
    } catch {
      answered = response.headersSent;
      if (answered) response.destroy();
    }
    if (!answered) fastify(request, response);
  });
}

/** What the evaluation routes of an app are made of (`buildApp`), as the front needs it. */
export interface EvaluationParts {
  /** Request logging is on (the routes log every request; the front would not). */
  readonly debug: boolean;
  /** Whether every startup environment holds a snapshot (before that, Fastify answers 503). */
  readonly state: { readonly ready: boolean };
  readonly authorizer: Authorizer;
  /** The routes' reader of the key (`keyInHeader`). */
  readonly readKey: KeyReader;
  readonly metrics: ProxyMetrics;
  readonly defaults: ContextDefaults;
  readonly enrichers: Enrichers;
  readonly writer: AnswerWriter;
  /** The routes' compression of evaluation answers, when `compression` is on. */
  readonly compression: AnswerCompression | undefined;
  /** `KeyedAnswerHeaders.evaluation`, as the routes send them. */
  readonly headers: Readonly<Record<string, string>>;
  /** The mounts of the frontend routes (`/proxy`, `/api/frontend`, `/api/proxy`). */
  readonly mounts: readonly { readonly mount: string; readonly flavour: EvaluationFlavour }[];
  /** The routes' address filter, if any: a refused address is left to them (403). */
  readonly addresses: AddressFilter | undefined;
  /** The routes' body limit in bytes (`maxBodyBytes`): a larger `POST` is left to them (413). */
  readonly bodyLimit: number;
  /** Where an unexpected failure answering a `POST` is logged, as the routes' error handler does. */
  readonly log: Logger;
}

/**
 * The front of an app's evaluation routes, or `undefined` where the routes do what it does not
 * (see `EvaluationFront`): request logging, enrichers (the answers are not kept, and the context
 * is enriched asynchronously), `trustProxy` and an origin list.
 */
export function evaluationFrontFor(
  config: ProxyConfig,
  parts: EvaluationParts,
): EvaluationFront | undefined {
  const cors = fixedCorsHeaders(config.cors);
  if (
    parts.debug ||
    !parts.enrichers.empty ||
    trustsForwardedAddress(config.trustProxy) ||
    cors === undefined
  )
    return undefined;
  return new EvaluationFront(parts, config.proxyBasePath, cors);
}
