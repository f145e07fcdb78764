import { createHash } from 'node:crypto';
import { clientFeaturesSchema } from '@flags/schemas';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { CompiledState, ProxyState } from '../state.js';
import { errorResponses, SERVER_SIDE_TAG } from './docs.js';
import { currentState } from './frontend.js';

export interface ClientFeaturesRouteOptions {
  readonly state: ProxyState;
  /** Server-side tokens only (`expServerSideSdkConfig.tokens`); client keys get 401. */
  readonly authenticate: (request: FastifyRequest, reply: FastifyReply, done: () => void) => void;
  /** `KeyedAnswerHeaders.serverSide`: `private` caching, `Vary` on the key header. */
  readonly headers: Readonly<Record<string, string>>;
}

interface Body {
  readonly json: string;
  readonly etag: string;
}

/** The synced payload and its strong validator, computed once per snapshot (habit 9). */
const bodies = new WeakMap<CompiledState, Body>();

function bodyOf(compiled: CompiledState): Body {
  let body = bodies.get(compiled);
  if (body === undefined) {
    const json = compiled.clientFeaturesJson();
    const digest = createHash('sha256').update(json).digest('base64url').slice(0, 27);
    body = { json, etag: `"${json.length.toString(36)}-${digest}"` };
    bodies.set(compiled, body);
  }
  return body;
}

/** `If-None-Match` against a strong tag, compared weakly (RFC 9110 §13.1.2: GET uses weak comparison). */
function matches(header: string, etag: string): boolean {
  for (const candidate of header.split(',')) {
    const tag = candidate.trim();
    if (tag === '*' || tag === etag || tag === `W/${etag}`) return true;
  }
  return false;
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
      const body = bodyOf(currentState(state));
      reply.headers(headers);
      reply.header('etag', body.etag);
      const ifNoneMatch = request.headers['if-none-match'];
      if (ifNoneMatch !== undefined && matches(ifNoneMatch, body.etag)) {
        return reply.code(304).send();
      }
      return reply.code(200).type('application/json; charset=utf-8').send(body.json);
    },
  );
  done();
}
