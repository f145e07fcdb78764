import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import { ifNoneMatchHits } from '@flags/serving';
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../errors.js';
import type { ApiToken } from '../api-tokens/token-store.js';
import type { ClientFeaturesCache, ServedConfiguration } from './client-features-cache.js';
import type { FeatureQuery } from './client-features-store.js';

const querySchema = {
  type: 'object',
  properties: {
    project: { type: 'array', items: { type: 'string' } },
    namePrefix: { type: 'string' },
    tag: { type: 'array', items: { type: 'string' } },
    environment: { type: 'string' },
  },
} as const;

const SPEC_HEADER = 'unleash-client-spec';

/**
 * Client API answers depend on the token (its environment and projects): only the caller's own
 * cache may keep them, and only to revalidate with the ETag, never to serve them unasked. `Vary`
 * names the token header for caches that ignore `private`.
 */
export const CACHE_CONTROL = 'private, no-cache';
export const VARY_BY_TOKEN = 'Authorization';

/** `Unleash-Client-Spec` ≥ 4.2.0 understands segments by reference; older or absent → inline. */
function inlineSegments(header: string | string[] | undefined): boolean {
  if (header === undefined) return true;
  const value = Array.isArray(header) ? header[0]! : header;
  const match = /^v?(\d+)\.(\d+)\.(\d+)(?:[-+].*)?$/.exec(value.trim());
  if (!match) {
    throw new ApiError('BAD_DATA', `Invalid SemVer in the Unleash-Client-Spec header: "${value}".`);
  }
  const major = Number(match[1]);
  const minor = Number(match[2]);
  return major < 4 || (major === 4 && minor < 2);
}

function parseTags(tags: readonly string[] | undefined): [string, string][] | undefined {
  if (!tags || tags.length === 0) return undefined;
  return tags.map((tag) => {
    const colon = tag.indexOf(':');
    if (colon <= 0 || colon === tag.length - 1) {
      throw new ApiError('BAD_DATA', `The tag filter "${tag}" is not of the form type:value.`);
    }
    return [tag.slice(0, colon), tag.slice(colon + 1)];
  });
}

/** The token's projects narrowed by the `project` filter (never widened). */
export function visibleProjects(token: ApiToken, requested: readonly string[] | undefined) {
  const all = token.projects.includes('*');
  if (!requested || requested.length === 0) return all ? undefined : [...token.projects].sort();
  const wanted = [...new Set(requested)].sort();
  return all ? wanted : wanted.filter((project) => token.projects.includes(project));
}

/** `gzip` listed in Accept-Encoding without `q=0` (the SDKs' fetch sends `gzip, deflate`). */
function acceptsGzip(header: string | undefined): boolean {
  if (!header) return false;
  return header.split(',').some((entry) => {
    const [coding, ...params] = entry.trim().split(';');
    if (coding?.trim().toLowerCase() !== 'gzip') return false;
    return !params.some((param) => /^\s*q\s*=\s*0(\.0*)?\s*$/.test(param));
  });
}

export function clientFeaturesRoutes(
  app: FastifyInstance,
  cache: ClientFeaturesCache,
  guard: (request: import('fastify').FastifyRequest) => Promise<void>,
  options: { readonly advertiseStreaming: boolean } = { advertiseStreaming: false },
): void {
  app
    .withTypeProvider<JsonSchemaToTsProvider>()
    .get(
      '/api/client/features',
      { schema: { querystring: querySchema }, onRequest: guard },
      async function clientGetFeatures(request, reply) {
        const token = request.apiToken;
        const query: FeatureQuery = {
          environment: token.environment ?? 'default',
          projects: visibleProjects(token, request.query.project),
          namePrefix: request.query.namePrefix || undefined,
          tags: parseTags(request.query.tag),
          inlineSegmentConstraints: inlineSegments(request.headers[SPEC_HEADER]),
        };
        const served: ServedConfiguration = await cache.get(query);
        void reply
          .header('etag', served.etag)
          .header('cache-control', CACHE_CONTROL)
          .header('vary', `${VARY_BY_TOKEN}, Accept-Encoding`);
        // unleash-client 6.12 in `experimentalMode` switches from polling to streaming on it.
        if (options.advertiseStreaming) void reply.header('fetch-mode', 'streaming');
        if (ifNoneMatchHits(request.headers['if-none-match'], served.etag)) {
          return reply.status(304).send();
        }
        void reply.type('application/json; charset=utf-8');
        if (acceptsGzip(request.headers['accept-encoding'])) {
          return reply.header('content-encoding', 'gzip').send(served.gzipped);
        }
        return reply.send(served.body);
      },
    );

  app.withTypeProvider<JsonSchemaToTsProvider>().get(
    '/api/client/features/:name',
    {
      schema: {
        params: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } },
      },
      onRequest: guard,
    },
    async function clientGetFeature(request, reply) {
      void reply.header('cache-control', CACHE_CONTROL).header('vary', VARY_BY_TOKEN);
      const token = request.apiToken;
      const served = await cache.get({
        environment: token.environment ?? 'default',
        projects: visibleProjects(token, undefined),
        namePrefix: undefined,
        tags: undefined,
        inlineSegmentConstraints: inlineSegments(request.headers[SPEC_HEADER]),
      });
      const feature = served.byName.get(request.params.name);
      if (!feature) {
        throw new ApiError('NOT_FOUND', `Could not find feature flag ${request.params.name}`);
      }
      return feature;
    },
  );
}
