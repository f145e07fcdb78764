import { createHash } from 'node:crypto';
import { clientFeaturesSchema } from '@flags/schemas';
import type { FastifyInstance } from 'fastify';
import type { Authenticate } from '../auth/require-key.js';
import { notModified } from '../http/conditional.js';
import { errorResponses, SERVER_SIDE_TAG } from '../http/route-docs.js';
import type { CompiledState, ProxyState } from '../state.js';

export interface ClientFeaturesRouteOptions {
  readonly state: ProxyState;
  /** Server-side tokens only (`expServerSideSdkConfig.tokens`); client keys get 401. */
  readonly authenticate: Authenticate;
  /** `KeyedAnswerHeaders.serverSide`: `private` caching, `Vary` on the key header. */
  readonly headers: Readonly<Record<string, string>>;
}

interface Body {
  readonly json: string;
  readonly etag: string;
}

/**
 * `GET /proxy/client/features`: the client-features payload this proxy synced, segments included
 * (Unleash Proxy drops them), so server-side SDKs and other proxies can use it as their upstream.
 */
export function clientFeaturesRoutes(
  app: FastifyInstance,
  options: ClientFeaturesRouteOptions,
  done: () => void,
): void {
  const { state, authenticate, headers } = options;
  /**
   * The synced payload and its strong validator, serialized and hashed once per snapshot rather
   * than per request; kept by this app, so it goes with the app and with its snapshots.
   */
  const bodies = new WeakMap<CompiledState, Body>();
  const bodyOf = (compiled: CompiledState): Body => {
    let body = bodies.get(compiled);
    if (body === undefined) {
      const json = compiled.clientFeaturesJson();
      const digest = createHash('sha256').update(json).digest('base64url').slice(0, 27);
      body = { json, etag: `"${json.length.toString(36)}-${digest}"` };
      bodies.set(compiled, body);
    }
    return body;
  };

  app.get(
    '/proxy/client/features',
    {
      schema: {
        summary: 'The synced feature configuration, for server-side SDKs and other proxies.',
        tags: [SERVER_SIDE_TAG],
        response: {
          200: { description: 'The client features payload.', ...clientFeaturesSchema },
          304: { description: 'Not modified (`If-None-Match`).', type: 'null' },
          ...errorResponses(401, 503),
        },
      },
      onRequest: authenticate,
    },
    function clientGetFeatures(request, reply) {
      const body = bodyOf(state.serving());
      reply.headers(headers);
      reply.header('etag', body.etag);
      if (notModified(request, body.etag)) return reply.code(304).send();
      return reply.code(200).type('application/json; charset=utf-8').send(body.json);
    },
  );
  done();
}
