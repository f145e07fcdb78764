import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Actor } from '../../auth/actor.js';
import type { Queryable, Transaction } from '../../db/database.js';
import { ApiError } from '../../errors.js';
import { type PayloadInput, payloadProblems, refuseProblems } from '../constraint-rules.js';
import { recordEvent, tagsOfFlag } from '../events/event-store.js';
import { EVENT_TYPES } from '../events/event-types.js';
import { insertStrategy, listStrategies, nextSortOrder } from './feature-strategy-store.js';
import { environmentParams, jsonPatchSchema, variantsSchema } from './flag-schemas.js';
import {
  type FlagRow,
  findFlag,
  flagEnvironments,
  requireProjectEnvironment,
} from './flag-store.js';
import { type FlagDeps, writeFlag } from './flag-write.js';
import { applyJsonPatch, patchedValidator } from './patched-document.js';
import { defaultRollout } from './strategy-input.js';
import { balanceVariants } from './variant-weights.js';

const EDIT = { permission: 'edit' } as const;
const validVariants = patchedValidator(variantsSchema);

async function currentVariants(tx: Queryable, name: string, environment: string) {
  const rows = await tx.query<{ variants: unknown[] }>(
    'SELECT variants FROM feature_environments WHERE feature_name = $1 AND environment = $2',
    [name, environment],
  );
  return rows[0]?.variants ?? [];
}

/** Whether the flag is on in the environment. */
async function enabledIn(tx: Queryable, name: string, environment: string): Promise<boolean> {
  const rows = await tx.query<{ enabled: boolean }>(
    'SELECT enabled FROM feature_environments WHERE feature_name = $1 AND environment = $2',
    [name, environment],
  );
  return rows[0]?.enabled === true;
}

/** Writes a flag's state in an environment, creating its row when missing (sent). */
function setEnvironmentState(
  tx: Transaction,
  name: string,
  environment: string,
  state: { enabled?: boolean; variants?: unknown[] },
): void {
  tx.send(
    `INSERT INTO feature_environments (feature_name, environment, enabled, variants)
     VALUES ($1, $2, COALESCE($3::boolean, false), COALESCE($4::jsonb, '[]'::jsonb))
     ON CONFLICT (feature_name, environment) DO UPDATE
       SET enabled = COALESCE($3::boolean, feature_environments.enabled),
           variants = COALESCE($4::jsonb, feature_environments.variants)`,
    [
      name,
      environment,
      state.enabled ?? null,
      state.variants === undefined ? null : JSON.stringify(state.variants),
    ],
  );
}

/** What a toggle reads before it writes: all of it with the flag's lock, one wait on PostgreSQL. */
interface ToggleState {
  readonly enabled: boolean;
  readonly strategies: Awaited<ReturnType<typeof listStrategies>>;
  readonly tags: Awaited<ReturnType<typeof tagsOfFlag>>;
}

/**
 * The toggle state of `feature` of `project` in `environment`, read by the names in the URL (the
 * flag's lock checks they are an active flag's); 404 when the project does not have the environment.
 */
async function toggleState(
  tx: Transaction,
  { project, feature, environment }: { project: string; feature: string; environment: string },
  withStrategies: boolean,
): Promise<ToggleState> {
  const [, enabled, strategies, tags] = await Promise.all([
    requireProjectEnvironment(tx, project, environment),
    enabledIn(tx, feature, environment),
    withStrategies ? listStrategies(tx, feature, environment) : [],
    tagsOfFlag(tx, feature),
  ]);
  return { enabled, strategies, tags };
}

/**
 * Turns a flag on in an environment as unleash-server does: with `shouldActivateDisabledStrategies`
 * its disabled strategies are enabled; when it has none left enabled, a 100 % `flexibleRollout`
 * is added. Nothing is written (nor recorded) when it is on already.
 */
async function turnOn(
  tx: Transaction,
  flag: FlagRow,
  environment: string,
  by: Actor,
  { enabled, strategies, tags }: ToggleState,
  activateDisabled: boolean,
): Promise<void> {
  if (enabled) return;
  const common = { by, project: flag.project, environment, featureName: flag.name, tags };
  if (activateDisabled) {
    for (const strategy of strategies.filter((s) => s.disabled)) {
      tx.send('UPDATE feature_strategies SET disabled = false WHERE id = $1', [strategy.id]);
      const { environment: _, ...preData } = strategy;
      recordEvent(tx, {
        ...common,
        type: EVENT_TYPES.featureStrategyUpdate,
        data: { ...preData, disabled: false },
        preData,
      });
    }
  }
  const anyEnabled = activateDisabled
    ? strategies.length > 0
    : strategies.some((strategy) => !strategy.disabled);
  if (!anyEnabled) {
    const added = await insertStrategy(
      tx,
      flag.name,
      environment,
      defaultRollout(flag.name, await nextSortOrder(tx, flag.name, environment)),
    );
    recordEvent(tx, { ...common, type: EVENT_TYPES.featureStrategyAdd, data: added });
  }
  setEnvironmentState(tx, flag.name, environment, { enabled: true });
  recordEvent(tx, { ...common, type: EVENT_TYPES.featureEnvironmentEnabled });
}

/** Turns a flag off in an environment; nothing is written (nor recorded) when it is off already. */
function turnOff(
  tx: Transaction,
  flag: FlagRow,
  environment: string,
  by: Actor,
  { enabled, tags }: ToggleState,
): void {
  if (!enabled) return;
  setEnvironmentState(tx, flag.name, environment, { enabled: false });
  recordEvent(tx, {
    type: EVENT_TYPES.featureEnvironmentDisabled,
    by,
    project: flag.project,
    environment,
    featureName: flag.name,
    tags,
  });
}

/** A flag in one environment: its state, turning it on and off, its variants. */
export function flagEnvironmentRoutes(
  app: FastifyInstance,
  deps: FlagDeps,
  guard: (request: FastifyRequest) => Promise<void>,
): void {
  const typed = app.withTypeProvider<JsonSchemaToTsProvider>();
  const { db } = deps;
  const base = '/api/admin/projects/:project/features/:feature/environments/:environment';

  /** The active flag of the project and the environment of its project; 404 otherwise. */
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

  typed.get(
    base,
    { schema: { params: environmentParams }, onRequest: guard },
    async function adminReadFlagEnvironment(request) {
      const { project, feature, environment } = request.params;
      const flag = await readTarget(project, feature, environment);
      const [state] = await flagEnvironments(db, flag, environment);
      return state;
    },
  );

  for (const action of ['on', 'off'] as const) {
    typed.post(
      `${base}/${action}`,
      {
        schema: {
          params: environmentParams,
          querystring: {
            type: 'object',
            properties: { shouldActivateDisabledStrategies: { type: 'boolean' } },
          },
        },
        onRequest: guard,
        config: { ...EDIT, acceptsEmptyBody: true },
      },
      async function adminToggleFlagEnvironment(request, reply) {
        const { project, feature, environment } = request.params;
        await writeFlag(
          deps,
          request,
          {
            project,
            feature,
            readAhead: (tx) => toggleState(tx, request.params, action === 'on'),
          },
          async (tx, flag, by, scope, state) => {
            // Its state, strategies and events are this environment's: the others are not diffed.
            scope.onlyIn(environment);
            if (action === 'on') {
              await turnOn(
                tx,
                flag,
                environment,
                by,
                state,
                request.query.shouldActivateDisabledStrategies === true,
              );
            } else turnOff(tx, flag, environment, by, state);
          },
        );
        return reply.status(200).send();
      },
    );
  }

  typed.get(
    `${base}/variants`,
    { schema: { params: environmentParams }, onRequest: guard },
    async function adminReadFlagVariants(request) {
      const { project, feature, environment } = request.params;
      const flag = await readTarget(project, feature, environment);
      return { version: 1, variants: await currentVariants(db, flag.name, environment) };
    },
  );

  /** Replaces the variants with `next(current)`, balanced; records the change. */
  const writeVariants = (
    request: FastifyRequest,
    params: { project: string; feature: string; environment: string },
    next: (current: unknown[]) => unknown[],
  ) =>
    writeFlag(
      deps,
      request,
      {
        ...params,
        readAhead: async (tx) => {
          const [, before, tags] = await Promise.all([
            requireProjectEnvironment(tx, params.project, params.environment),
            currentVariants(tx, params.feature, params.environment),
            tagsOfFlag(tx, params.feature),
          ]);
          return { before, tags };
        },
      },
      async (tx, flag, by, scope, { before, tags }) => {
        scope.onlyIn(params.environment);
        const wanted = next(before) as Parameters<typeof balanceVariants>[0];
        refuseProblems(payloadProblems(wanted as readonly PayloadInput[], 'body'));
        const variants = balanceVariants(wanted);
        setEnvironmentState(tx, flag.name, params.environment, { variants });
        recordEvent(tx, {
          type: EVENT_TYPES.featureEnvironmentVariantsUpdated,
          by,
          project: params.project,
          environment: params.environment,
          featureName: flag.name,
          data: { variants },
          preData: { variants: before },
          tags,
        });
        return { version: 1, variants };
      },
    );

  typed.put(
    `${base}/variants`,
    { schema: { params: environmentParams, body: variantsSchema }, onRequest: guard, config: EDIT },
    async function adminSetFlagVariants(request) {
      return writeVariants(request, request.params, () => request.body);
    },
  );

  typed.patch(
    `${base}/variants`,
    {
      schema: { params: environmentParams, body: jsonPatchSchema },
      onRequest: guard,
      config: EDIT,
    },
    async function adminPatchFlagVariants(request) {
      return writeVariants(request, request.params, (current) =>
        applyJsonPatch(current, request.body, validVariants),
      );
    },
  );
}
