import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { actorOf } from '../../auth/actor.js';
import type { Database, Queryable } from '../../db/database.js';
import { ApiError } from '../../errors.js';
import type { RevisionTracker } from '../../revision.js';
import { idSchema, refuseDuplicate, writeConfig } from '../config-write.js';
import { recordEvent } from '../events/event-store.js';
import { EVENT_TYPES } from '../events/event-types.js';
import { refuseWhileUsed } from '../in-use.js';
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

/** The environment locked for the rest of the transaction; 404 when there is none. */
async function lockEnvironment(tx: Queryable, name: string): Promise<Environment> {
  await tx.query('SELECT 1 FROM environments WHERE name = $1 FOR UPDATE', [name]);
  const environment = await findEnvironment(tx, name);
  if (!environment) {
    throw new ApiError('NOT_FOUND', `Could not find environment with name: ${name}.`);
  }
  return environment;
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

  typed.get(
    '/api/admin/environments',
    { onRequest: guard },
    async function adminListEnvironments() {
      return { version: 1, environments: await listEnvironments(db) };
    },
  );

  typed.post(
    '/api/admin/environments',
    {
      schema: {
        body: {
          type: 'object',
          required: ['name', 'type'],
          properties: {
            name: idSchema,
            type: { type: 'string', minLength: 1, maxLength: 100 },
            sortOrder: sortOrderSchema,
          },
        },
      },
      onRequest: guard,
    },
    async function adminCreateEnvironment(request, reply) {
      const { name, type, sortOrder } = request.body;
      const environment = { name, type, sortOrder: sortOrder ?? 0 };
      const actor = actorOf(request);
      await refuseDuplicate(`Environment "${name}"`, () =>
        writeConfig(db, revisions, async (tx) => {
          await insertEnvironment(tx, environment);
          await recordEvent(tx, {
            type: EVENT_TYPES.environmentCreated,
            by: actor,
            environment: name,
            data: { ...environment, enabled: true },
          });
        }),
      );
      return reply.status(201).send({ ...environment, enabled: true });
    },
  );

  typed.get(
    '/api/admin/environments/:name',
    { schema: { params: nameParams }, onRequest: guard },
    async function adminReadEnvironment(request) {
      const environment = await findEnvironment(db, request.params.name);
      if (!environment) {
        throw new ApiError(
          'NOT_FOUND',
          `Could not find environment with name: ${request.params.name}.`,
        );
      }
      return { ...environment, protected: false };
    },
  );

  /** Writes the environment's new state and records `environment-updated`. */
  const update = (
    request: FastifyRequest,
    name: string,
    change: (before: Environment) => Environment,
  ) => {
    const actor = actorOf(request);
    return writeConfig(db, revisions, async (tx) => {
      const before = await lockEnvironment(tx, name);
      const after = change(before);
      await tx.query(
        'UPDATE environments SET type = $2, sort_order = $3, enabled = $4 WHERE name = $1',
        [name, after.type, after.sortOrder, after.enabled],
      );
      await recordEvent(tx, {
        type: EVENT_TYPES.environmentUpdated,
        by: actor,
        environment: name,
        data: after,
        preData: before,
      });
      return after;
    });
  };

  // unleash-server's path for an update (its enterprise edition's), beside the read path.
  typed.put(
    '/api/admin/environments/update/:name',
    {
      schema: {
        params: nameParams,
        body: {
          type: 'object',
          properties: {
            type: { type: 'string', minLength: 1, maxLength: 100 },
            sortOrder: sortOrderSchema,
          },
        },
      },
      onRequest: guard,
    },
    async function adminUpdateEnvironment(request) {
      const { type, sortOrder } = request.body;
      const after = await update(request, request.params.name, (before) => ({
        ...before,
        type: type ?? before.type,
        sortOrder: sortOrder ?? before.sortOrder,
      }));
      return { ...after, protected: false };
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
        await update(request, request.params.name, (before) => ({ ...before, enabled }));
        return reply.status(204).send();
      },
    );
  }

  typed.delete(
    '/api/admin/environments/:name',
    { schema: { params: nameParams }, onRequest: guard },
    async function adminDeleteEnvironment(request, reply) {
      const { name } = request.params;
      const actor = actorOf(request);
      await writeConfig(db, revisions, async (tx) => {
        const before = await lockEnvironment(tx, name);
        const flags = await flagsUsingEnvironment(tx, name);
        const tokens = await tokensOfEnvironment(tx, name);
        refuseWhileUsed(
          `Environment "${name}"`,
          [
            ...flags.map((flag) => `flag "${flag.name}" (project "${flag.project}")`),
            ...tokens.map((token) => `API token "${token.tokenName}" (id ${token.id})`),
          ],
          'Disable those flags and remove their strategies there, and delete those tokens, first.',
        );
        await tx.query('DELETE FROM environments WHERE name = $1', [name]);
        await recordEvent(tx, {
          type: EVENT_TYPES.environmentDeleted,
          by: actor,
          environment: name,
          preData: before,
        });
      });
      return reply.status(200).send();
    },
  );
}
