import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { type Actor, actorOf } from '../../auth/actor.js';
import type { Database, Queryable, Transaction } from '../../db/database.js';
import { ApiError } from '../../errors.js';
import { idSchema, refuseDuplicate } from '../config-write.js';
import { recordEvent } from '../events/event-store.js';
import { EVENT_TYPES } from '../events/event-types.js';
import { refuseWhileUsed } from '../in-use.js';
import {
  findStrategy,
  flagsUsingStrategy,
  insertStrategy,
  listStrategies,
  type StoredStrategy,
  updateStrategy,
} from './strategy-store.js';

const nameParams = {
  type: 'object',
  required: ['name'],
  properties: { name: { type: 'string' } },
} as const;

const definitionProperties = {
  name: idSchema,
  title: { type: ['string', 'null'], maxLength: 100 },
  description: { type: ['string', 'null'], maxLength: 1000 },
  parameters: { type: 'array', maxItems: 100, items: { type: 'object' } },
} as const;

/** The strategy locked for the transaction: 404 when absent, 400 when it is a built-in one. */
async function customStrategy(tx: Queryable, name: string): Promise<StoredStrategy> {
  const strategy = await findStrategy(tx, name, true);
  if (!strategy) throw new ApiError('NOT_FOUND', `Could not find strategy with name ${name}.`);
  if (!strategy.editable) {
    throw new ApiError('BAD_DATA', `The built-in strategy "${name}" cannot be changed.`);
  }
  return strategy;
}

/**
 * Strategy definitions: listed, read, created, updated, deprecated and reactivated, and deleted
 * while no flag uses one (409 naming them). The client API does not serve definitions, so these
 * writes are no config change (the event log records them).
 */
export function strategyRoutes(
  app: FastifyInstance,
  db: Database,
  guard: (request: FastifyRequest) => Promise<void>,
): void {
  const typed = app.withTypeProvider<JsonSchemaToTsProvider>();

  /** One write to a definition and its event, committed together. */
  const write = <T>(
    request: FastifyRequest,
    change: (tx: Transaction, by: Actor) => Promise<T>,
  ) => {
    const actor = actorOf(request);
    return db.transaction((tx) => change(tx, actor));
  };

  typed.get('/api/admin/strategies', { onRequest: guard }, async function adminListStrategies() {
    return { version: 1, strategies: await listStrategies(db) };
  });

  typed.get(
    '/api/admin/strategies/:name',
    { schema: { params: nameParams }, onRequest: guard },
    async function adminReadStrategy(request) {
      const strategy = await findStrategy(db, request.params.name);
      if (!strategy) throw new ApiError('NOT_FOUND', 'No strategy found.');
      return strategy;
    },
  );

  typed.post(
    '/api/admin/strategies',
    {
      schema: { body: { type: 'object', required: ['name'], properties: definitionProperties } },
      onRequest: guard,
      config: { permission: 'edit' },
    },
    async function adminCreateStrategy(request, reply) {
      const { name, title, description, parameters } = request.body;
      const definition = {
        name,
        title: title ?? null,
        description: description ?? null,
        parameters: parameters ?? [],
      };
      await refuseDuplicate(`Strategy "${name}"`, () =>
        write(request, async (tx, by) => {
          await insertStrategy(tx, definition);
          await recordEvent(tx, { type: EVENT_TYPES.strategyCreated, by, data: definition });
        }),
      );
      return reply.status(201).send({ name, title, description, parameters: parameters ?? [] });
    },
  );

  typed.put(
    '/api/admin/strategies/:name',
    {
      schema: {
        params: nameParams,
        body: { type: 'object', properties: definitionProperties },
      },
      onRequest: guard,
      config: { permission: 'edit' },
    },
    async function adminUpdateStrategy(request, reply) {
      const { name } = request.params;
      const body = request.body;
      if (body.name !== undefined && body.name !== name) {
        throw new ApiError('BAD_DATA', 'A strategy cannot be renamed: the body names another.');
      }
      await write(request, async (tx, by) => {
        const before = await customStrategy(tx, name);
        const after = {
          name,
          title: body.title === undefined ? before.title : body.title,
          description: body.description === undefined ? before.description : body.description,
          parameters: body.parameters ?? before.parameters,
        };
        await updateStrategy(tx, after);
        await recordEvent(tx, {
          type: EVENT_TYPES.strategyUpdated,
          by,
          data: after,
          preData: before,
        });
      });
      return reply.status(200).send();
    },
  );

  for (const [action, deprecated] of [
    ['deprecate', true],
    ['reactivate', false],
  ] as const) {
    typed.post(
      `/api/admin/strategies/:name/${action}`,
      { schema: { params: nameParams }, onRequest: guard, config: { permission: 'edit' } },
      async function adminDeprecateStrategy(request, reply) {
        const { name } = request.params;
        await write(request, async (tx, by) => {
          // As unleash-server: built-in strategies may be deprecated too (the UI hides them).
          const strategy = await findStrategy(tx, name, true);
          if (!strategy) {
            throw new ApiError('NOT_FOUND', `Could not find strategy with name ${name}.`);
          }
          if (strategy.deprecated === deprecated) return;
          await tx.query('UPDATE strategies SET deprecated = $2 WHERE name = $1', [
            name,
            deprecated,
          ]);
          await recordEvent(tx, {
            type: deprecated ? EVENT_TYPES.strategyDeprecated : EVENT_TYPES.strategyReactivated,
            by,
            data: { name },
          });
        });
        return reply.status(200).send();
      },
    );
  }

  typed.delete(
    '/api/admin/strategies/:name',
    { schema: { params: nameParams }, onRequest: guard, config: { permission: 'edit' } },
    async function adminDeleteStrategy(request, reply) {
      const { name } = request.params;
      await write(request, async (tx, by) => {
        const before = await customStrategy(tx, name);
        const uses = await flagsUsingStrategy(tx, name);
        refuseWhileUsed(
          `Strategy "${name}"`,
          uses.map((use) => `flag "${use.featureName}" in ${use.environment}`),
          'Remove it from these flags first.',
        );
        await tx.query('DELETE FROM strategies WHERE name = $1', [name]);
        await recordEvent(tx, { type: EVENT_TYPES.strategyDeleted, by, preData: before });
      });
      return reply.status(200).send();
    },
  );
}
