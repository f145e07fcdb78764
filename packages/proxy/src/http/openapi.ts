import type { FastifyInstance } from 'fastify';
import type { ProxyConfig } from '../config/load.js';
import { PROXY_VERSION } from '../sync/upstream.js';
import type {} from './route-config.js';

/** Route config read by the document transform: schema parts that document without validating. */
interface DocsConfig {
  readonly docs?: Record<string, unknown>;
}

/**
 * `enableOAS`: `GET {base}/docs/openapi.json` (OpenAPI 3, generated at run time from the route
 * schemas) and the Swagger UI at `GET {base}/docs/openapi`, its assets served from the package
 * (no CDN). Must be registered before the routes it describes. The hot evaluation routes parse
 * their input by hand; their query and body schemas sit in `config.docs` and only document.
 */
/**
 * A schema as OpenAPI 3.0 can describe it: without `propertyNames` (the bounds on report keys, issue
 * 40), which it lacks; validation keeps them. Answers that list reports carry them too.
 */
function withoutPropertyNames(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withoutPropertyNames);
  if (typeof schema !== 'object' || schema === null) return schema;
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema))
    if (key !== 'propertyNames') copy[key] = withoutPropertyNames(value);
  return copy;
}

export async function registerOpenApi(app: FastifyInstance, config: ProxyConfig): Promise<void> {
  const base = config.proxyBasePath;
  // Loaded only when enabled: the document generator and UI assets cost memory otherwise.
  const [{ default: swagger }, { default: swaggerUi }] = await Promise.all([
    import('@fastify/swagger'),
    import('@fastify/swagger-ui'),
  ]);
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'flags-proxy',
        description:
          'Evaluates feature flags for client-side apps (Unleash Proxy protocol), serves the synced configuration to server-side SDKs, and speaks OFREP.',
        version: PROXY_VERSION,
      },
      components: {
        securitySchemes: {
          apiKey: { type: 'apiKey', in: 'header', name: config.clientKeysHeaderName },
          bearerAuth: { type: 'http', scheme: 'bearer' },
          ofrepApiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
        },
      },
      security: [{ apiKey: [] }],
      tags: [
        { name: 'Proxy client', description: 'Evaluation for frontend SDKs.' },
        {
          name: 'Server-side client',
          description: 'Configuration, metrics and registration for SDKs.',
        },
        { name: 'OFREP', description: 'OpenFeature Remote Evaluation Protocol.' },
        { name: 'Operational', description: 'Health and metrics.' },
      ],
    },
    transform({ schema, url, route }) {
      // The CORS preflight catch-all is not an API operation.
      if (route.method === 'OPTIONS' || url === '*' || url.endsWith('/*')) {
        return { schema: { ...schema, hide: true }, url };
      }
      const docs = (route.config as DocsConfig | undefined)?.docs;
      const body = schema?.body === undefined ? {} : { body: withoutPropertyNames(schema.body) };
      const response =
        schema?.response === undefined ? {} : { response: withoutPropertyNames(schema.response) };
      return { schema: { ...schema, ...body, ...response, ...docs }, url };
    },
  });
  await app.register(swaggerUi, {
    routePrefix: `${base}/docs/openapi`,
    uiConfig: { docExpansion: 'list', deepLinking: false },
    staticCSP: true,
  });
  app.get(
    `${base}/docs/openapi.json`,
    { schema: { hide: true } },
    function docsGetOpenApi(_request, reply) {
      return reply.type('application/json; charset=utf-8').send(app.swagger());
    },
  );
}
