import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import {
  type EdgeValidatedTokens,
  edgeValidatedTokensSchema,
  edgeValidateRequestSchema,
  MAX_VALIDATE_BODY_BYTES,
} from '@flags/schemas';
import { errorResponses, SERVER_SIDE_TAG } from '@flags/serving';
import type { FastifyInstance } from 'fastify';
import type { TokenValidator } from '../auth/token-validator.js';

export interface EdgeValidateRouteOptions {
  readonly validator: TokenValidator;
}

/**
 * `POST /edge/validate`, no key, as Unleash Edge and the upstream answer it: a downstream Edge or
 * proxy asks which of the tokens its callers presented it may accept. The answer is this proxy's
 * own validator's (`TokenValidator`: cached, batched and bounded towards the upstream), so a
 * chain of proxies asks the upstream about each token once per revalidation, and a flood of
 * made-up tokens costs the upstream no more than at this proxy's own routes. Answered before the
 * first sync (validation does not need the flags), within the per-address budget of the reports.
 */
export function edgeValidateRoutes(
  app: FastifyInstance,
  options: EdgeValidateRouteOptions,
  done: () => void,
): void {
  const { validator } = options;
  app.withTypeProvider<JsonSchemaToTsProvider>().post(
    '/edge/validate',
    {
      bodyLimit: MAX_VALIDATE_BODY_BYTES,
      config: { beforeReady: true },
      schema: {
        summary:
          'Which of these tokens this proxy accepts (for downstream Unleash Edges and proxies), as the upstream answers it.',
        tags: [SERVER_SIDE_TAG],
        security: [],
        body: edgeValidateRequestSchema,
        response: { 200: edgeValidatedTokensSchema, ...errorResponses(400, 413, 415, 429) },
      },
    },
    async function edgeValidateTokens(request): Promise<EdgeValidatedTokens> {
      const asked = [...new Set(request.body.tokens)];
      const statuses = await Promise.all(asked.map((token) => validator.validate(token)));
      const tokens: EdgeValidatedTokens['tokens'] = [];
      for (const status of statuses) {
        if (typeof status === 'string') continue;
        const { token, type, environment, projects } = status;
        tokens.push({ token, type, environment, projects: [...projects] });
      }
      return { tokens };
    },
  );
  done();
}
