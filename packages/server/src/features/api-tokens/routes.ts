import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import {
  type ApiTokenCreate,
  type ApiTokenJson,
  apiTokenCreateSchema,
  apiTokenSchema,
  apiTokensSchema,
} from '@flags/schemas';
import type { FastifyInstance } from 'fastify';
import { actorOf } from '../../auth/actor.js';
import type { TokenGuard } from '../../auth/token-guard.js';
import type { Database } from '../../db/database.js';
import { ApiError } from '../../errors.js';
import { recordEvent } from '../events/event-store.js';
import { EVENT_TYPES } from '../events/event-types.js';
import { type ApiToken, newSecret, type TokenStore, type TokenType } from './token-store.js';

/**
 * The wire form of a token (Unleash names, see `apiTokenSchema`): `secret` is the whole secret in
 * the answer that creates the token, the masked form everywhere else.
 */
export function tokenJson(token: ApiToken, secret?: string): ApiTokenJson {
  return {
    id: token.id,
    secret: secret ?? token.masked,
    tokenName: token.tokenName,
    type: token.type,
    environment: token.environment ?? '*',
    project: token.projects.length === 1 ? token.projects[0]! : '[]',
    projects: [...token.projects],
    createdAt: token.createdAt.toISOString(),
    expiresAt: token.expiresAt ? token.expiresAt.toISOString() : null,
  };
}

interface TokenScope {
  readonly environment: string | null;
  readonly projects: readonly string[];
}

/** The stored type of a requested one: any case; `backend` (Unleash's newer name) is `client`. */
function tokenType(requested: ApiTokenCreate['type']): TokenType {
  const type = requested.toLowerCase();
  return type === 'admin' || type === 'frontend' ? type : 'client';
}

function adminScope(body: ApiTokenCreate): TokenScope {
  if ((body.environment && body.environment !== '*') || (body.project && body.project !== '*')) {
    throw new ApiError('BAD_DATA', 'An admin token cannot be scoped to a project or environment.');
  }
  return { environment: null, projects: ['*'] };
}

/**
 * The scope of a client or frontend token: exactly one existing environment (`development` when
 * none is given, as in Unleash; never `*`) and existing projects, or `*` for all of them.
 */
async function scopeOf(
  db: Database,
  type: Exclude<TokenType, 'admin'>,
  body: ApiTokenCreate,
): Promise<TokenScope> {
  const environment = body.environment ?? 'development';
  if (environment === '*') {
    throw new ApiError('BAD_DATA', `A ${type} token cannot be scoped to all environments.`);
  }
  const projects = [...new Set(body.projects ?? [body.project ?? '*'])];
  const wanted = projects.filter((project) => project !== '*');
  const [environments, known] = await Promise.all([
    db.query('SELECT 1 FROM environments WHERE name = $1', [environment]),
    db.query<{ id: string }>(
      'SELECT id FROM projects WHERE id IN (SELECT jsonb_array_elements_text($1::jsonb))',
      [JSON.stringify(wanted)],
    ),
  ]);
  if (environments.length === 0) {
    throw new ApiError('BAD_DATA', `Environment "${environment}" does not exist.`);
  }
  const missing = wanted.filter((project) => !known.some((row) => row.id === project));
  if (missing.length > 0) {
    throw new ApiError('BAD_DATA', `Projects do not exist: ${missing.join(', ')}.`);
  }
  return { environment, projects: projects.includes('*') ? ['*'] : projects };
}

export function apiTokenRoutes(
  app: FastifyInstance,
  db: Database,
  store: TokenStore,
  guard: TokenGuard,
): void {
  const typed = app.withTypeProvider<JsonSchemaToTsProvider>();

  typed.get(
    '/api/admin/api-tokens',
    {
      onRequest: guard,
      config: { permission: 'admin' },
      schema: { response: { 200: apiTokensSchema } },
    },
    async function adminListTokens() {
      return { tokens: (await store.list()).map((token) => tokenJson(token)) };
    },
  );

  typed.post(
    '/api/admin/api-tokens',
    { schema: { body: apiTokenCreateSchema, response: { 201: apiTokenSchema } }, onRequest: guard },
    async function adminCreateToken(request, reply) {
      const body = request.body;
      const tokenName = body.tokenName ?? body.username;
      if (!tokenName) throw new ApiError('BAD_DATA', 'tokenName is required.');
      const type = tokenType(body.type);
      const scope = type === 'admin' ? adminScope(body) : await scopeOf(db, type, body);
      const secret = newSecret(scope.projects, scope.environment);
      const by = actorOf(request);
      const token = await db.transaction(async (tx) => {
        const created = await store.insert(
          {
            secret,
            tokenName,
            type,
            ...scope,
            expiresAt: body.expiresAt ? new Date(body.expiresAt) : null,
            source: 'api',
          },
          tx,
        );
        if (!created) throw new ApiError('INTERNAL');
        // The event shows the secret masked: the log is no place for it.
        recordEvent(tx, {
          type: EVENT_TYPES.apiTokenCreated,
          by,
          environment: created.environment,
          data: tokenJson(created),
        });
        return created;
      });
      store.changed();
      return reply.status(201).header('location', 'api-tokens').send(tokenJson(token, secret));
    },
  );

  typed.put(
    '/api/admin/api-tokens/:token',
    {
      schema: {
        params: { type: 'object', required: ['token'], properties: { token: { type: 'string' } } },
        body: {
          type: 'object',
          required: ['expiresAt'],
          properties: { expiresAt: { type: 'string', format: 'date-time' } },
        },
      },
      onRequest: guard,
    },
    async function adminSetTokenExpiry(request, reply) {
      const expiresAt = new Date(request.body.expiresAt);
      if (Number.isNaN(expiresAt.getTime())) {
        throw new ApiError('BAD_DATA', 'expiresAt is not a date the server can store.');
      }
      const by = actorOf(request);
      await db.transaction(async (tx) => {
        const changed = await store.setExpiry(request.params.token, expiresAt, tx);
        if (!changed) throw new ApiError('NOT_FOUND', 'There is no such API token.');
        await recordEvent(tx, {
          type: EVENT_TYPES.apiTokenUpdated,
          by,
          environment: changed.after.environment,
          data: tokenJson(changed.after),
          preData: tokenJson(changed.before),
        });
      });
      store.changed();
      return reply.status(200).send();
    },
  );

  typed.delete(
    '/api/admin/api-tokens/:token',
    {
      schema: {
        params: { type: 'object', required: ['token'], properties: { token: { type: 'string' } } },
      },
      onRequest: guard,
      // The path names a secret: request log lines show it masked.
    },
    async function adminDeleteToken(request, reply) {
      const by = actorOf(request);
      // As unleash-server: 200 whether or not the token existed.
      await db.transaction(async (tx) => {
        const deleted = await store.delete(request.params.token, tx);
        if (!deleted) return;
        recordEvent(tx, {
          type: EVENT_TYPES.apiTokenDeleted,
          by,
          environment: deleted.environment,
          preData: tokenJson(deleted),
        });
      });
      store.changed();
      return reply.status(200).send();
    },
  );
}
