import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import {
  type EdgeValidatedTokens,
  edgeValidatedTokensSchema,
  edgeValidateRequestSchema,
  MAX_TOKEN_LENGTH,
  MAX_VALIDATE_BODY_BYTES,
} from '@flags/schemas';
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../errors.js';
import type { TokenStore } from '../api-tokens/token-store.js';

export interface EdgeValidateOptions {
  /** Largest request body of ordinary routes; this route never takes more. */
  readonly bodyLimitBytes: number;
  /** Requests accepted per client address and minute (`EDGE_VALIDATE_RATE_LIMIT_PER_MINUTE`). */
  readonly requestsPerMinute: number;
}

/**
 * `POST /edge/validate`, no token (as unleash-server): Unleash Edge, or flags-proxy, asks which of
 * the tokens its callers presented it may accept. Only client and frontend tokens are confirmed:
 * an admin token is of no use to an Edge, so the route never tells whether a string is one.
 * Each token is hashed and looked up by its hash (`TokenStore.lookupAll`), so the answer's timing
 * does not depend on how much of some stored secret a guess matches; the per-address rate limit
 * and the size bounds keep it from being a cheap guessing service.
 */
export function edgeValidateRoutes(
  app: FastifyInstance,
  store: TokenStore,
  options: EdgeValidateOptions,
): void {
  app.withTypeProvider<JsonSchemaToTsProvider>().post(
    '/edge/validate',
    {
      bodyLimit: Math.min(options.bodyLimitBytes, MAX_VALIDATE_BODY_BYTES),
      config: {
        rateLimit: {
          max: options.requestsPerMinute,
          timeWindow: 60_000,
          errorResponseBuilder: () => new ApiError('RATE_LIMITED'),
        },
      },
      schema: { body: edgeValidateRequestSchema, response: { 200: edgeValidatedTokensSchema } },
    },
    async function edgeValidateTokens(request): Promise<EdgeValidatedTokens> {
      // A string longer than any issued token is no token: left out unhashed, as an unknown one.
      const asked = [
        ...new Set(request.body.tokens.filter((token) => token.length <= MAX_TOKEN_LENGTH)),
      ];
      const found = await store.lookupAll(asked);
      const tokens: EdgeValidatedTokens['tokens'] = [];
      for (const [index, secret] of asked.entries()) {
        const token = found[index];
        if (!token || token.type === 'admin') continue;
        tokens.push({
          token: secret,
          type: token.type,
          environment: token.environment ?? 'default',
          projects: [...token.projects],
        });
      }
      return { tokens };
    },
  );
}
