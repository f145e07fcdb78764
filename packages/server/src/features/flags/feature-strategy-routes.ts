import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Actor } from '../../auth/actor.js';
import type { Transaction } from '../../db/database.js';
import { ApiError } from '../../errors.js';
import { type NewEvent, recordEvent, tagsOfFlag } from '../events/event-store.js';
import { EVENT_TYPES } from '../events/event-types.js';
import {
  checkStrategyReferences,
  deleteStrategy,
  findStrategy,
  insertStrategy,
  listStrategies,
  nextSortOrder,
  setSortOrders,
  updateStrategy,
} from './feature-strategy-store.js';
import {
  environmentParams,
  jsonPatchSchema,
  sortOrderSchema,
  strategyBodySchema,
  strategyParams,
} from './flag-schemas.js';
import { type FlagRow, findFlag, requireProjectEnvironment } from './flag-store.js';
import { type FlagDeps, writeFlag } from './flag-write.js';
import { applyJsonPatch, patchedValidator } from './patched-document.js';
import { type StrategyBody, strategyAsBody, strategyInput } from './strategy-input.js';

const EDIT = { permission: 'edit' } as const;
const validStrategy = patchedValidator(strategyBodySchema);

/** A flag's strategies in one environment: list, add, read, replace, patch, remove, reorder. */
export function featureStrategyRoutes(
  app: FastifyInstance,
  deps: FlagDeps,
  guard: (request: FastifyRequest) => Promise<void>,
): void {
  const typed = app.withTypeProvider<JsonSchemaToTsProvider>();
  const { db } = deps;
  const base =
    '/api/admin/projects/:project/features/:feature/environments/:environment/strategies';

  const readTarget = async (project: string, feature: string, environment: string) => {
    const flag = await findFlag(db, feature);
    if (!flag || flag.project !== project || flag.archived_at !== null) {
      throw new ApiError(
        'NOT_FOUND',
        `There is no active feature "${feature}" in project "${project}".`,
      );
    }
    await requireProjectEnvironment(db, project, environment);
    return flag;
  };

  const eventOf = async (
    tx: Transaction,
    flag: FlagRow,
    environment: string,
    by: Actor,
    event: Pick<NewEvent, 'type' | 'data' | 'preData'>,
  ) =>
    recordEvent(tx, {
      ...event,
      by,
      project: flag.project,
      environment,
      featureName: flag.name,
      tags: await tagsOfFlag(tx, flag.name),
    });

  /**
   * Turns the flag off in the environment when none of its strategies there is enabled (or none
   * is left), as unleash-server does after a strategy is updated or removed; records it when it
   * was on.
   */
  const offWithoutEnabledStrategies = async (
    tx: Transaction,
    flag: FlagRow,
    environment: string,
    by: Actor,
  ) => {
    const strategies = await listStrategies(tx, flag.name, environment);
    if (strategies.some((strategy) => !strategy.disabled)) return;
    const turnedOff = await tx.query(
      `UPDATE feature_environments SET enabled = false
        WHERE feature_name = $1 AND environment = $2 AND enabled RETURNING 1`,
      [flag.name, environment],
    );
    if (turnedOff.length > 0) {
      await eventOf(tx, flag, environment, by, { type: EVENT_TYPES.featureEnvironmentDisabled });
    }
  };

  typed.get(
    base,
    { schema: { params: environmentParams }, onRequest: guard },
    async function adminListFlagStrategies(request) {
      const { project, feature, environment } = request.params;
      const flag = await readTarget(project, feature, environment);
      return (await listStrategies(db, flag.name, environment)).map(
        ({ environment: _, ...strategy }) => strategy,
      );
    },
  );

  typed.post(
    base,
    {
      schema: { params: environmentParams, body: strategyBodySchema },
      onRequest: guard,
      config: EDIT,
    },
    async function adminAddFlagStrategy(request) {
      const { project, feature, environment } = request.params;
      return writeFlag(deps, request, { project, feature }, async (tx, flag, by) => {
        await requireProjectEnvironment(tx, project, environment);
        const input = strategyInput(
          flag.name,
          request.body,
          await nextSortOrder(tx, flag.name, environment),
        );
        await checkStrategyReferences(tx, project, input);
        await tx.query(
          `INSERT INTO feature_environments (feature_name, environment) VALUES ($1, $2)
           ON CONFLICT DO NOTHING`,
          [flag.name, environment],
        );
        const added = await insertStrategy(tx, flag.name, environment, input);
        await eventOf(tx, flag, environment, by, {
          type: EVENT_TYPES.featureStrategyAdd,
          data: added,
        });
        return added;
      });
    },
  );

  typed.get(
    `${base}/:strategyId`,
    { schema: { params: strategyParams }, onRequest: guard },
    async function adminReadFlagStrategy(request) {
      const { project, feature, environment, strategyId } = request.params;
      const flag = await readTarget(project, feature, environment);
      return findStrategy(db, flag.name, environment, strategyId);
    },
  );

  /** Replaces strategy `strategyId` with `next(current)`; records the change. */
  const replace = (
    request: FastifyRequest,
    params: { project: string; feature: string; environment: string; strategyId: string },
    next: (current: StrategyBody) => StrategyBody,
  ) =>
    writeFlag(deps, request, params, async (tx, flag, by) => {
      await requireProjectEnvironment(tx, params.project, params.environment);
      const before = await findStrategy(tx, flag.name, params.environment, params.strategyId);
      const input = strategyInput(flag.name, next(strategyAsBody(before)), before.sortOrder);
      await checkStrategyReferences(tx, params.project, input);
      const after = await updateStrategy(tx, flag.name, params.environment, before.id, input);
      await eventOf(tx, flag, params.environment, by, {
        type: EVENT_TYPES.featureStrategyUpdate,
        data: after,
        preData: before,
      });
      await offWithoutEnabledStrategies(tx, flag, params.environment, by);
      return after;
    });

  typed.put(
    `${base}/:strategyId`,
    {
      schema: { params: strategyParams, body: strategyBodySchema },
      onRequest: guard,
      config: EDIT,
    },
    async function adminReplaceFlagStrategy(request) {
      return replace(request, request.params, () => request.body);
    },
  );

  typed.patch(
    `${base}/:strategyId`,
    { schema: { params: strategyParams, body: jsonPatchSchema }, onRequest: guard, config: EDIT },
    async function adminPatchFlagStrategy(request) {
      return replace(request, request.params, (current) =>
        applyJsonPatch(current, request.body, validStrategy),
      );
    },
  );

  typed.delete(
    `${base}/:strategyId`,
    { schema: { params: strategyParams }, onRequest: guard, config: EDIT },
    async function adminRemoveFlagStrategy(request, reply) {
      const { project, feature, environment, strategyId } = request.params;
      await writeFlag(deps, request, { project, feature }, async (tx, flag, by) => {
        await requireProjectEnvironment(tx, project, environment);
        const before = await findStrategy(tx, flag.name, environment, strategyId);
        await deleteStrategy(tx, before.id);
        await offWithoutEnabledStrategies(tx, flag, environment, by);
        await eventOf(tx, flag, environment, by, {
          type: EVENT_TYPES.featureStrategyRemove,
          preData: before,
        });
      });
      return reply.status(200).send();
    },
  );

  typed.post(
    `${base}/set-sort-order`,
    {
      schema: { params: environmentParams, body: sortOrderSchema },
      onRequest: guard,
      config: EDIT,
    },
    async function adminSortFlagStrategies(request, reply) {
      const { project, feature, environment } = request.params;
      await writeFlag(deps, request, { project, feature }, async (tx, flag, by) => {
        await requireProjectEnvironment(tx, project, environment);
        const before = await listStrategies(tx, flag.name, environment);
        const ids = new Set(before.map((strategy) => strategy.id));
        const unknown = request.body.filter((entry) => !ids.has(entry.id)).map((entry) => entry.id);
        if (unknown.length > 0) {
          throw new ApiError(
            'BAD_DATA',
            `Feature "${flag.name}" has no strategies ${unknown.join(', ')} in environment "${environment}".`,
            unknown,
          );
        }
        await setSortOrders(tx, flag.name, environment, request.body);
        const after = await listStrategies(tx, flag.name, environment);
        const order = (list: typeof before) =>
          list.map((strategy) => ({
            id: strategy.id,
            name: strategy.name,
            sortOrder: strategy.sortOrder,
          }));
        await eventOf(tx, flag, environment, by, {
          type: EVENT_TYPES.strategyOrderChanged,
          data: order(after),
          preData: order(before),
        });
      });
      return reply.status(200).send();
    },
  );
}
