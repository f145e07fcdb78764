import { createHash } from 'node:crypto';
import { clientFeaturesSchema } from '@flags/schemas';
import type { CompiledState } from '@flags/serving';
import { errorResponses, notModified, SERVER_SIDE_TAG } from '@flags/serving';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AuthorizeHook as Authenticate } from '../auth/access.js';
import { ProxyError } from '../errors.js';

export interface ClientFeaturesRouteOptions {
  /** `/proxy/client/features` or `/api/client/features`. */
  readonly path: string;
  /** Client tokens and server-side keys only; frontend keys are refused (`Authorizer.hook`). */
  readonly authenticate: Authenticate;
  /** `KeyedAnswerHeaders.serverSide`: `private` caching, `Vary` on the key header. */
  readonly headers: Readonly<Record<string, string>>;
  /** Answers `POST <path>` too, as Unleash Edge does at `/api/client/features`. */
  readonly post?: boolean;
}

interface Body {
  readonly json: string;
  readonly etag: string;
}

function bodyFor(json: string): Body {
  const digest = createHash('sha256').update(json).digest('base64url').slice(0, 27);
  return { json, etag: `"${json.length.toString(36)}-${digest}"` };
}

interface FeaturesQuery {
  readonly namePrefix?: string;
}

/**
 * `GET <path>` (+ `?namePrefix=`): the client-features payload this proxy synced for the caller's
 * environment and projects, segments included (Unleash Proxy drops them), so server-side SDKs and
 * other proxies can use it as their upstream; `POST <path>`: the same (Edge's form); `GET
 * <path>/:name`: one feature.
 */
export function clientFeaturesRoutes(
  app: FastifyInstance,
  options: ClientFeaturesRouteOptions,
  done: () => void,
): void {
  const { path, authenticate, headers } = options;
  /**
   * The synced payload and its strong validator, serialized and hashed once per snapshot rather
   * than per request; kept by this app, so it goes with the app and with its snapshots.
   */
  const bodies = new WeakMap<CompiledState, Body>();
  const bodyOf = (compiled: CompiledState): Body => {
    let body = bodies.get(compiled);
    if (body === undefined) {
      body = bodyFor(compiled.clientFeaturesJson());
      bodies.set(compiled, body);
    }
    return body;
  };
  /** Only the features whose names start with `prefix` (not kept: any prefix can be asked for). */
  const prefixed = (compiled: CompiledState, prefix: string): Body => {
    const payload = compiled.payload;
    return bodyFor(
      JSON.stringify({
        version: payload.version,
        features: payload.features.filter((feature) => feature.name.startsWith(prefix)),
        ...(payload.segments === undefined ? {} : { segments: payload.segments }),
      }),
    );
  };

  const querystring = {
    type: 'object',
    properties: { namePrefix: { type: 'string' } },
  } as const;
  const response = {
    200: { description: 'The client features payload.', ...clientFeaturesSchema },
    304: { description: 'Not modified (`If-None-Match`).', type: 'null' },
    ...errorResponses(401, 403, 503),
  };
  const answer = (
    request: FastifyRequest<{ Querystring: FeaturesQuery }>,
    reply: FastifyReply,
  ): FastifyReply => {
    const prefix = request.query.namePrefix;
    const body =
      prefix === undefined || prefix === ''
        ? bodyOf(request.served)
        : prefixed(request.served, prefix);
    reply.headers(headers);
    reply.header('etag', body.etag);
    if (notModified(request, body.etag)) return reply.code(304).send();
    return reply.code(200).type('application/json; charset=utf-8').send(body.json);
  };
  app.get<{ Querystring: FeaturesQuery }>(
    path,
    {
      schema: {
        summary: 'The synced feature configuration, for server-side SDKs and other proxies.',
        tags: [SERVER_SIDE_TAG],
        querystring,
        response,
      },
      onRequest: authenticate,
    },
    function clientGetFeatures(request, reply) {
      return answer(request, reply);
    },
  );
  // Unleash Edge 20 answers POST as GET (`post_features` in
  // `unleash-edge-client-api/src/features.rs`): filters come from the query, and the body, which
  // it never reads, is not read here either beyond being JSON within `maxBodyBytes`.
  if (options.post === true)
    app.post<{ Querystring: FeaturesQuery }>(
      path,
      {
        schema: {
          summary:
            'The synced feature configuration, as GET answers it (Unleash Edge’s POST form; the body is ignored).',
          tags: [SERVER_SIDE_TAG],
          querystring,
          response: { ...response, ...errorResponses(400, 401, 403, 413, 415, 503) },
        },
        onRequest: authenticate,
      },
      function clientPostFeatures(request, reply) {
        return answer(request, reply);
      },
    );
  app.get<{ Params: { name: string } }>(
    `${path}/:name`,
    {
      schema: {
        summary: 'One feature of the synced configuration.',
        tags: [SERVER_SIDE_TAG],
        params: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
        response: { ...errorResponses(401, 403, 404, 503) },
      },
      onRequest: authenticate,
    },
    function clientGetFeature(request, reply) {
      const feature = request.served.payload.features.find(
        (candidate) => candidate.name === request.params.name,
      );
      if (feature === undefined) throw new ProxyError('NOT_FOUND', ['No feature of that name.']);
      reply.headers(headers);
      return reply.code(200).type('application/json; charset=utf-8').send(JSON.stringify(feature));
    },
  );
  done();
}
