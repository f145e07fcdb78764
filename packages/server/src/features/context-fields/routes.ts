import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { FromSchema } from 'json-schema-to-ts';
import { actorOf } from '../../auth/actor.js';
import type { Database, Queryable } from '../../db/database.js';
import { ApiError } from '../../errors.js';
import type { RevisionTracker } from '../../revision.js';
import { adminResource } from '../admin-resource.js';
import { idSchema } from '../config-write.js';
import { refuseProblems } from '../constraint-rules.js';
import { EVENT_TYPES } from '../events/event-types.js';
import {
  type ContextField,
  findContextField,
  insertContextField,
  type LegalValue,
  listContextFields,
  segmentsUsingContextField,
  strategiesUsingContextField,
  updateContextField,
} from './context-field-store.js';

const EDIT = { permission: 'edit' } as const;

const legalValueSchema = {
  type: 'object',
  required: ['value'],
  additionalProperties: false,
  properties: {
    value: { type: 'string', minLength: 1, maxLength: 100 },
    description: { type: 'string', maxLength: 1000 },
  },
} as const;

const fieldBody = {
  type: 'object',
  required: ['name'],
  properties: {
    name: idSchema,
    description: { type: 'string', maxLength: 1000 },
    stickiness: { type: 'boolean' },
    sortOrder: { type: 'integer', minimum: -2_147_483_648, maximum: 2_147_483_647 },
    legalValues: { type: 'array', maxItems: 10_000, items: legalValueSchema },
  },
} as const;

/** A PUT's body: every field may be left out. */
const fieldUpdateBody = { ...fieldBody, required: [] } as const;

const nameParams = {
  type: 'object',
  required: ['name'],
  properties: { name: { type: 'string' } },
} as const;

const notFound = (name: string) =>
  new ApiError('NOT_FOUND', `Could not find context field with name ${name}.`);

/** 400 when a body's legal values name one value twice, as unleash-server answers it. */
function refuseRepeatedValues(values: readonly LegalValue[] | undefined): void {
  const seen = new Set<string>();
  const repeated: string[] = [];
  values?.forEach((legal, n) => {
    if (seen.has(legal.value))
      repeated.push(`body/legalValues/${n} "${legal.value}" is given twice`);
    seen.add(legal.value);
  });
  refuseProblems(repeated);
}

/** Legal values with one entry per value (the last given wins), in the order given. */
function distinctValues(values: readonly LegalValue[]): LegalValue[] {
  const byValue = new Map<string, LegalValue>();
  for (const legal of values) {
    byValue.set(legal.value, {
      value: legal.value,
      ...(legal.description === undefined ? {} : { description: legal.description }),
    });
  }
  return [...byValue.values()];
}

/**
 * Context fields and their legal values. SDKs are not served context fields, so writes diff no
 * flag; a field that a strategy's or a segment's constraint names is not deleted (409).
 */
export function contextFieldRoutes(
  app: FastifyInstance,
  db: Database,
  revisions: RevisionTracker,
  guard: (request: FastifyRequest) => Promise<void>,
): void {
  const typed = app.withTypeProvider<JsonSchemaToTsProvider>();

  const fields = adminResource(
    { app, db, revisions, guard },
    {
      path: '/api/admin/context',
      key: { param: 'name', schema: { type: 'string' } },
      permission: 'edit',
      served: false,
      events: {
        created: EVENT_TYPES.contextFieldCreated,
        updated: EVENT_TYPES.contextFieldUpdated,
        deleted: EVENT_TYPES.contextFieldDeleted,
      },
      notFound: (name: string, reading) =>
        reading ? new ApiError('NOT_FOUND', 'Could not find context field.') : notFound(name),
      find: async (q, name, lock) => (lock ? lockedField(q, name) : findContextField(q, name)),
      list: (q) => listContextFields(q),
      create: {
        body: fieldBody,
        async insert(tx, body: FromSchema<typeof fieldBody>) {
          refuseRepeatedValues(body.legalValues);
          const field: ContextField = {
            name: body.name,
            description: body.description ?? null,
            stickiness: body.stickiness ?? false,
            sortOrder: body.sortOrder ?? 0,
            legalValues: distinctValues(body.legalValues ?? []),
          };
          if (await findContextField(tx, field.name)) {
            throw new ApiError('NAME_EXISTS', 'A context field with that name already exists.');
          }
          await insertContextField(tx, field);
          return field;
        },
        answer: (field) => field,
      },
      update: {
        body: fieldUpdateBody,
        check(name, body: FromSchema<typeof fieldUpdateBody>) {
          if (body.name !== undefined && body.name !== name) {
            throw new ApiError(
              'BAD_DATA',
              'A context field cannot be renamed: the body names another.',
            );
          }
          refuseRepeatedValues(body.legalValues);
        },
        // As unleash-server: what the body leaves out keeps its value, but for stickiness and
        // legal values, which a PUT sets (to false and none).
        change: (_tx, before, body: FromSchema<typeof fieldUpdateBody>) => ({
          name: before.name,
          description: body.description ?? before.description,
          stickiness: body.stickiness ?? false,
          sortOrder: body.sortOrder ?? before.sortOrder,
          legalValues: distinctValues(body.legalValues ?? []),
        }),
        save: updateContextField,
        answer: () => ({ status: 200 }),
      },
      remove: {
        async usedBy(tx, field) {
          const strategies = await strategiesUsingContextField(tx, field.name);
          const segments = await segmentsUsingContextField(tx, field.name);
          return [
            ...strategies.map(
              (s) =>
                `strategy ${s.id} (${s.strategyName}) of flag "${s.featureName}" in ${s.environment}`,
            ),
            ...segments.map((segment) => `segment "${segment.name}" (id ${segment.id})`),
          ];
        },
        what: (field) => `Context field "${field.name}"`,
        remedy: 'Remove the constraints on it first.',
        table: 'context_fields',
        column: 'name',
        status: 200,
      },
    },
  );

  typed.get(
    '/api/admin/context/:name/strategies',
    { schema: { params: nameParams }, onRequest: guard },
    async function adminContextFieldStrategies(request) {
      const { name } = request.params;
      if (!(await findContextField(db, name))) throw notFound(name);
      return { strategies: await strategiesUsingContextField(db, name) };
    },
  );

  typed.post(
    '/api/admin/context/validate',
    {
      schema: { body: { ...fieldBody, additionalProperties: true } },
      onRequest: guard,
      config: EDIT,
    },
    async function adminValidateContextField(request, reply) {
      if (await findContextField(db, request.body.name)) {
        throw new ApiError('NAME_EXISTS', 'A context field with that name already exists.');
      }
      return reply.status(200).send();
    },
  );

  typed.post(
    '/api/admin/context/:name/legal-values',
    { schema: { params: nameParams, body: legalValueSchema }, onRequest: guard, config: EDIT },
    async function adminSetLegalValue(request, reply) {
      const legal = request.body;
      await fields.change(
        actorOf(request),
        request.params.name,
        (_tx, before) => ({
          ...before,
          legalValues: distinctValues([...before.legalValues, legal]),
        }),
        updateContextField,
      );
      return reply.status(200).send();
    },
  );

  typed.delete(
    '/api/admin/context/:name/legal-values/:value',
    {
      schema: {
        params: {
          type: 'object',
          required: ['name', 'value'],
          properties: { name: { type: 'string' }, value: { type: 'string' } },
        },
      },
      onRequest: guard,
      config: EDIT,
    },
    async function adminDeleteLegalValue(request, reply) {
      const { value } = request.params;
      await fields.change(
        actorOf(request),
        request.params.name,
        (_tx, before) => ({
          ...before,
          legalValues: before.legalValues.filter((legal) => legal.value !== value),
        }),
        updateContextField,
      );
      return reply.status(200).send();
    },
  );
}

async function lockedField(tx: Queryable, name: string): Promise<ContextField | undefined> {
  await tx.query('SELECT 1 FROM context_fields WHERE name = $1 FOR UPDATE', [name]);
  return findContextField(tx, name);
}
