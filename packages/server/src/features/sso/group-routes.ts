import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { actorOf } from '../../auth/actor.js';
import type { Database, Queryable } from '../../db/database.js';
import { ApiError } from '../../errors.js';
import { recordEvent } from '../events/event-store.js';
import { EVENT_TYPES } from '../events/event-types.js';
import { findRootRole } from '../users/user-store.js';
import {
  deleteGroup,
  type Group,
  type GroupFields,
  getGroup,
  groupNameTaken,
  insertGroup,
  listGroups,
  updateGroup,
} from './groups.js';

/** Unleash's `groupSchema` (members are the provider's: always none here). */
const groupSchema = {
  type: 'object',
  required: ['id', 'name', 'mappingsSSO', 'rootRole', 'users', 'userCount'],
  properties: {
    id: { type: 'integer' },
    name: { type: 'string' },
    description: { type: ['string', 'null'] },
    mappingsSSO: { type: 'array', items: { type: 'string' } },
    rootRole: { type: ['integer', 'null'] },
    createdBy: { type: ['string', 'null'] },
    createdAt: { type: ['string', 'null'], format: 'date-time' },
    users: { type: 'array', items: { type: 'object', additionalProperties: true } },
    userCount: { type: 'integer' },
  },
} as const;

/**
 * Unleash's `createGroupSchema`: `name`, `description`, `mappingsSSO`, `rootRole` (a root role's
 * id, or null for none). Its `users` are taken when empty only: members come from the provider.
 */
const groupBodySchema = {
  type: 'object',
  required: ['name'],
  additionalProperties: false,
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 255, pattern: '\\S' },
    description: { type: ['string', 'null'], maxLength: 2048 },
    mappingsSSO: {
      type: 'array',
      maxItems: 100,
      items: { type: 'string', minLength: 1, maxLength: 512 },
    },
    rootRole: { type: ['integer', 'null'], minimum: 1, maximum: 2_147_483_647 },
    users: { type: 'array', maxItems: 0 },
  },
} as const;

const idParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'integer', minimum: 1, maximum: 2_147_483_647 } },
} as const;

interface GroupBody {
  name: string;
  description?: string | null;
  mappingsSSO?: string[];
  rootRole?: number | null;
}

/** The body as stored, checked: a root role that is none is a 400, a taken name a 409. */
async function groupFields(db: Queryable, body: GroupBody, exceptId?: number) {
  const name = body.name.trim();
  const rootRole = body.rootRole ?? null;
  if (rootRole !== null && !(await findRootRole(db, rootRole))) {
    throw new ApiError('BAD_DATA', `rootRole ${rootRole} is not a root role.`);
  }
  if (await groupNameTaken(db, name, exceptId)) {
    throw new ApiError('NAME_EXISTS', `A group named "${name}" already exists.`);
  }
  const fields: GroupFields = {
    name,
    description: body.description ?? null,
    mappingsSSO: [...new Set((body.mappingsSSO ?? []).map((mapping) => mapping.trim()))].filter(
      Boolean,
    ),
    rootRole,
  };
  return fields;
}

async function existingGroup(db: Queryable, id: number): Promise<Group> {
  const group = await getGroup(db, id);
  if (!group) throw new ApiError('NOT_FOUND', `Could not find group ${id}.`);
  return group;
}

/**
 * `/api/admin/groups`: groups with a root role and the provider's group names that map to them,
 * in Unleash's shape (`name`, `description`, `mappingsSSO`, `rootRole`). With group syncing on, a
 * single sign-on takes the highest root role of the groups its groups claim matches. Admin-only;
 * every change is an event.
 */
export function groupRoutes(
  app: FastifyInstance,
  db: Database,
  guard: (request: FastifyRequest) => Promise<void>,
  now: () => Date,
): void {
  const typed = app.withTypeProvider<JsonSchemaToTsProvider>();
  const admin = { permission: 'admin' } as const;

  typed.get(
    '/api/admin/groups',
    {
      onRequest: guard,
      config: admin,
      schema: {
        response: {
          200: {
            type: 'object',
            required: ['groups'],
            properties: { groups: { type: 'array', items: groupSchema } },
          },
        },
      },
    },
    async function adminListGroups() {
      return { groups: await listGroups(db) };
    },
  );

  typed.get(
    '/api/admin/groups/:id',
    {
      onRequest: guard,
      config: admin,
      schema: { params: idParams, response: { 200: groupSchema } },
    },
    async function adminGetGroup(request) {
      return existingGroup(db, request.params.id);
    },
  );

  typed.post(
    '/api/admin/groups',
    { onRequest: guard, schema: { body: groupBodySchema, response: { 201: groupSchema } } },
    async function adminCreateGroup(request, reply) {
      const by = actorOf(request);
      const group = await db.transaction(async (tx) => {
        const fields = await groupFields(tx, request.body);
        const created = await insertGroup(tx, fields, by.name, now());
        recordEvent(tx, { type: EVENT_TYPES.groupCreated, by, data: created });
        return created;
      });
      return reply.code(201).send(group);
    },
  );

  typed.put(
    '/api/admin/groups/:id',
    {
      onRequest: guard,
      schema: { params: idParams, body: groupBodySchema, response: { 200: groupSchema } },
    },
    async function adminUpdateGroup(request) {
      const by = actorOf(request);
      const { id } = request.params;
      return db.transaction(async (tx) => {
        const before = await existingGroup(tx, id);
        const fields = await groupFields(tx, request.body, id);
        await updateGroup(tx, id, fields);
        const after = await existingGroup(tx, id);
        recordEvent(tx, { type: EVENT_TYPES.groupUpdated, by, preData: before, data: after });
        return after;
      });
    },
  );

  typed.delete(
    '/api/admin/groups/:id',
    { onRequest: guard, schema: { params: idParams } },
    async function adminDeleteGroup(request, reply) {
      const by = actorOf(request);
      await db.transaction(async (tx) => {
        const before = await existingGroup(tx, request.params.id);
        await deleteGroup(tx, before.id);
        recordEvent(tx, { type: EVENT_TYPES.groupDeleted, by, preData: before });
      });
      return reply.code(200).send();
    },
  );
}
