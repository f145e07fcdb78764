import { errorSchema } from '@flags/schemas';

/**
 * OpenAPI pieces shared by the route schemas: tags and the documented error answers. They only
 * document; the hot evaluation routes send pre-serialized strings, which Fastify never runs
 * through a response serializer.
 */
export const FRONTEND_TAG = 'Proxy client';
export const SERVER_SIDE_TAG = 'Server-side client';
export const OPERATIONAL_TAG = 'Operational';
export const OFREP_TAG = 'OFREP';

const text = (description: string) =>
  ({
    description,
    content: { 'text/plain': { schema: { type: 'string' } } },
  }) as const;

const json = (description: string) => ({ description, ...errorSchema });

const answers = {
  400: json('The body, query or context is invalid.'),
  401: text('Unauthorized: no accepted key in the key header.'),
  403: json(
    'The token is refused: unknown upstream, of the wrong type for this path, or of an environment this proxy does not serve.',
  ),
  404: json('Nothing at this path.'),
  413: json('The body is larger than `maxBodyBytes`.'),
  415: json('The content type is not JSON.'),
  429: json('More registrations and usage reports from this address than `reportsPerMinute`.'),
  500: json('A custom context enricher failed.'),
  501: text('`/proxy/all` is disabled (`enableAllEndpoint`).'),
  503: text('Not Ready: the proxy has not synchronized with the upstream yet.'),
} as const;

type Documented = keyof typeof answers;

/** The documented error answers of a route, by status. */
export function errorResponses(...codes: Documented[]): Record<number, unknown> {
  const out: Record<number, unknown> = {};
  for (const code of codes) out[code] = answers[code];
  return out;
}

/** A 200 answer sent as text (health, Prometheus, metrics). */
export function textResponse(description: string, type = 'text/plain') {
  return { description, content: { [type]: { schema: { type: 'string' } } } };
}
