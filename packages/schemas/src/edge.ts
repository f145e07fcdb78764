import type { FromSchema } from 'json-schema-to-ts';

/** The most tokens one `POST /edge/validate` may ask about (more → 400). */
export const MAX_VALIDATE_TOKENS = 500;

/**
 * The longest API token string. Issued tokens are far shorter (`<project>:<environment>.<secret>`
 * with 56 hex characters of secret, as unleash-server and flags-server make them: under 300 even
 * with names of 100 characters), so a longer one is no token: flags-server leaves it out of a
 * `POST /edge/validate` answer without looking it up, and flags-proxy refuses it at once, never
 * asking its upstream about it (issue #40).
 */
export const MAX_TOKEN_LENGTH = 512;

/** The largest `POST /edge/validate` body: the most tokens of the longest kind, quoted and separated (more → 413). */
export const MAX_VALIDATE_BODY_BYTES = MAX_VALIDATE_TOKENS * (MAX_TOKEN_LENGTH + 3) + 64;

/**
 * `POST /edge/validate` (no auth): an Unleash Edge (or flags-proxy) asking which of the tokens
 * its callers presented are valid, before it serves them. A string of any length is taken, as
 * unleash-server takes it (one over `MAX_TOKEN_LENGTH` is answered as unknown, never a 400 for the
 * whole list, which failed every other token of a proxy's batch: #40); the body limit
 * (`MAX_VALIDATE_BODY_BYTES`) bounds them all.
 */
export const edgeValidateRequestSchema = {
  type: 'object',
  required: ['tokens'],
  properties: {
    tokens: {
      type: 'array',
      maxItems: MAX_VALIDATE_TOKENS,
      items: { type: 'string' },
    },
  },
} as const;

/**
 * The answer: the known, unexpired client and frontend tokens among those asked about, each as
 * sent; unknown ones (and admin tokens) are left out, which Edge reads as invalid. Client tokens
 * say `client`, never `backend`, which older Edge releases refuse (Edge issue #1130).
 */
export const edgeValidatedTokensSchema = {
  type: 'object',
  required: ['tokens'],
  additionalProperties: false,
  properties: {
    tokens: {
      type: 'array',
      items: {
        type: 'object',
        required: ['token', 'type', 'environment', 'projects'],
        additionalProperties: false,
        properties: {
          token: { type: 'string' },
          type: { type: 'string', enum: ['client', 'frontend'] },
          environment: { type: 'string' },
          projects: {
            type: 'array',
            items: { type: 'string' },
            description: '`["*"]` for every project.',
          },
        },
      },
    },
  },
} as const;

export type EdgeValidateRequest = FromSchema<typeof edgeValidateRequestSchema>;
export type EdgeValidatedTokens = FromSchema<typeof edgeValidatedTokensSchema>;
