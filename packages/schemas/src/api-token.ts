import type { FromSchema } from 'json-schema-to-ts';

/**
 * The kinds of API token: `client` (server-side SDKs, proxies, Edge: the client API), `frontend`
 * (frontend SDKs: the frontend API) and `admin` (the admin API). Each works on its own API only.
 * Unleash's newer name `backend` is accepted on creation and stored (and shown) as `client`,
 * because older Unleash Edge releases refuse a token reported as `backend` (Edge issue #1130).
 */
export const API_TOKEN_TYPES = ['client', 'frontend', 'admin'] as const;

/**
 * An API token as the admin API shows it (Unleash's field names, plus `id`). The whole secret is
 * in the answer that creates the token and nowhere else: lists carry in `secret` the masked form
 * `<projects>:<environment>.ab12…` (the scope prefix and the first four characters of the
 * secret part), so a client reading `secret` from a list gets a string that authenticates nothing.
 */
export const apiTokenSchema = {
  type: 'object',
  required: [
    'id',
    'secret',
    'tokenName',
    'type',
    'environment',
    'project',
    'projects',
    'createdAt',
    'expiresAt',
  ],
  additionalProperties: false,
  properties: {
    id: {
      type: 'integer',
      description:
        'Names the token in `DELETE /api/admin/api-tokens/:token` when the secret is lost.',
    },
    secret: {
      type: 'string',
      description: 'The whole secret when the token is created; the masked form in lists.',
    },
    tokenName: { type: 'string' },
    type: { type: 'string', enum: API_TOKEN_TYPES },
    environment: {
      type: 'string',
      description: '`*` for admin tokens; client and frontend tokens have exactly one.',
    },
    project: { type: 'string', description: 'The one project, `*` for all, `[]` for several.' },
    projects: { type: 'array', items: { type: 'string' } },
    createdAt: { type: 'string', format: 'date-time' },
    expiresAt: { type: ['string', 'null'], format: 'date-time' },
  },
} as const;

/** `GET /api/admin/api-tokens`. */
export const apiTokensSchema = {
  type: 'object',
  required: ['tokens'],
  additionalProperties: false,
  properties: { tokens: { type: 'array', items: apiTokenSchema } },
} as const;

/**
 * `POST /api/admin/api-tokens` (`username` is Unleash's older name of `tokenName`). Client and
 * frontend tokens take one environment (not `*`) and a project list or `*`; admin tokens neither.
 */
export const apiTokenCreateSchema = {
  type: 'object',
  required: ['type'],
  properties: {
    tokenName: { type: 'string', minLength: 1, maxLength: 100 },
    username: { type: 'string', minLength: 1, maxLength: 100 },
    type: {
      type: 'string',
      enum: ['client', 'backend', 'frontend', 'admin', 'CLIENT', 'BACKEND', 'FRONTEND', 'ADMIN'],
    },
    environment: { type: 'string', minLength: 1 },
    project: { type: 'string', minLength: 1 },
    projects: { type: 'array', items: { type: 'string', minLength: 1 }, minItems: 1 },
    expiresAt: { type: 'string', format: 'date-time' },
  },
} as const;

export type ApiTokenJson = FromSchema<typeof apiTokenSchema>;
export type ApiTokenCreate = FromSchema<typeof apiTokenCreateSchema>;
export type ApiTokenType = (typeof API_TOKEN_TYPES)[number];
