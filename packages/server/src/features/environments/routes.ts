import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { FromSchema } from 'json-schema-to-ts';
import { actorOf } from '../../auth/actor.js';
import type { Database, Queryable } from '../../db/database.js';
import { ApiError } from '../../errors.js';
import type { RevisionTracker } from '../../revision.js';
import { adminResource } from '../admin-resource.js';
import { idSchema } from '../config-write.js';
import { EVENT_TYPES } from '../events/event-types.js';
import {
  type Environment,
  findEnvironment,
  flagsUsingEnvironment,
  insertEnvironment,
  listEnvironments,
  tokensOfEnvironment,
} from './environment-store.js';

const nameParams = {
  type: 'object',
  required: ['name'],
  properties: { name: { type: 'string' } },
} as const;

const sortOrderSchema = {
  type: 'integer',
  minimum: -2_147_483_648,
  maximum: 2_147_483_647,
} as const;

const createBody = {
  type: 'object',
  required: ['name', 'type'],
  properties: {
    name: idSchema,
    type: { type: 'string', minLength: 1, maxLength: 100 },
    sortOrder: sortOrderSchema,
  },
} as const;

const updateBody = {
  type: 'object',
  properties: {
    type: { type: 'string', minLength: 1, maxLength: 100 },
    sortOrder: sortOrderSchema,
  },
} as const;

/** The environment, locked for the rest of the transaction. */
async function lockEnvironment(tx: Queryable, name: string): Promise<Environment | undefined> {
  await tx.query('SELECT 1 FROM environments WHERE name = $1 FOR UPDATE', [name]);
  return findEnvironment(tx, name);
}

async function saveEnvironment(tx: Queryable, environment: Environment): Promise<void> {
  await tx.query(
    'UPDATE environments SET type = $2, sort_order = $3, enabled = $4 WHERE name = $1',
    [environment.name, environment.type, environment.sortOrder, environment.enabled],
  );
}

/**
 * Environments: listed, created for every project, read, updated (type and sort order), enabled
 * and disabled, and deleted while no flag is enabled or has strategies in one and no API token
 * is scoped to it (409 naming them). Every write diffs every flag.
 */
export function environmentRoutes(
  app: FastifyInstance,
  db: Database,
  revisions: RevisionTracker,
  guard: (request: FastifyRequest) => Promise<void>,
): void {
  const typed = app.withTypeProvider<JsonSchemaToTsProvider>();

  const environments = adminResource(
    { app, db, revisions, guard },
    {
      path: '/api/admin/environments',
      key: { param: 'name', schema: { type: 'string' } },
      served: true,
      events: {
        created: EVENT_TYPES.environmentCreated,
        updated: EVENT_TYPES.environmentUpdated,
        deleted: EVENT_TYPES.environmentDeleted,
      },
      eventScope: (environment: Environment) => ({ environment: environment.name }),
      notFound: (name: string) =>
        new ApiError('NOT_FOUND', `Could not find environment with name: ${name}.`),
      find: (q, name: string, lock) => (lock ? lockEnvironment(q, name) : findEnvironment(q, name)),
      list: async (q) => ({ version: 1, environments: await listEnvironments(q) }),
      read: (_q, environment) => ({ ...environment, protected: false }),
      create: {
        body: createBody,
        duplicate: (body: FromSchema<typeof createBody>) => `Environment "${body.name}"`,
        async insert(tx, body: FromSchema<typeof createBody>) {
          const environment = { name: body.name, type: body.type, sortOrder: body.sortOrder ?? 0 };
          await insertEnvironment(tx, environment);
          return { ...environment, enabled: true };
        },
        answer: (environment) => environment,
      },
      // unleash-server's path for an update (its enterprise edition's), beside the read path.
      update: {
        path: '/update/:name',
        body: updateBody,
        change: (_tx, before, body: FromSchema<typeof updateBody>) => ({
          ...before,
          type: body.type ?? before.type,
          sortOrder: body.sortOrder ?? before.sortOrder,
        }),
        save: saveEnvironment,
        answer: (after) => ({ status: 200, body: { ...after, protected: false } }),
      },
      remove: {
        async usedBy(tx, environment) {
          const flags = await flagsUsingEnvironment(tx, environment.name);
          const tokens = await tokensOfEnvironment(tx, environment.name);
          return [
            ...flags.map((flag) => `flag "${flag.name}" (project "${flag.project}")`),
            ...tokens.map((token) => `API token "${token.tokenName}" (id ${token.id})`),
          ];
        },
        what: (environment) => `Environment "${environment.name}"`,
        remedy:
          'Disable those flags and remove their strategies there, and delete those tokens, first.',
        table: 'environments',
        column: 'name',
        status: 200,
      },
    },
  );

  for (const [action, enabled] of [
    ['on', true],
    ['off', false],
  ] as const) {
    typed.post(
      `/api/admin/environments/:name/${action}`,
      { schema: { params: nameParams }, onRequest: guard },
      async function adminToggleEnvironment(request, reply) {
        await environments.change(
          actorOf(request),
          request.params.name,
          (_tx, before) => ({ ...before, enabled }),
          saveEnvironment,
        );
        return reply.status(204).send();
      },
    );
  }
}
