import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import { createInvitedUserSchema, roleSchema, type User, userSchema } from '@flags/schemas';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { actorOf } from '../../auth/actor.js';
import type { CredentialChanges } from '../../auth/credential-changes.js';
import type { Database, Queryable } from '../../db/database.js';
import { ApiError } from '../../errors.js';
import { recordEvent } from '../events/event-store.js';
import { EVENT_TYPES } from '../events/event-types.js';
import type { PasswordHasher } from './password.js';
import { issuePasswordLink } from './password-links.js';
import { setPassword } from './set-password.js';
import {
  createUser,
  deleteUser,
  emailTaken,
  findRootRole,
  getRole,
  getUsers,
  isAdminRoleId,
  listRoles,
  listUsers,
  lockAdminCount,
  setRootRole,
  setUserDisabled,
  updateUserDetails,
  userClash,
  usernameTaken,
} from './user-store.js';

export interface UserRoutesOptions {
  readonly passwords: PasswordHasher;
  readonly now: () => Date;
  /** Base of reset and welcome links (`PUBLIC_URL`). */
  readonly publicUrl: URL;
  /** Told of each change to who may do what, so open admin streams are checked at once. */
  readonly changes: CredentialChanges;
}

/** A password as every route that sets one takes it. */
export const passwordProperty = createInvitedUserSchema.properties.password;

const idParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'integer', minimum: 1, maximum: 2_147_483_647 } },
} as const;

const updateUserSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    name: createInvitedUserSchema.properties.name,
    email: createInvitedUserSchema.properties.email,
    rootRole: { type: ['integer', 'string'], minLength: 1, maxLength: 255 },
    disabled: { type: 'boolean' },
  },
} as const;

const createUserSchema = {
  type: 'object',
  required: ['rootRole'],
  additionalProperties: false,
  properties: {
    ...createInvitedUserSchema.properties,
    rootRole: { type: ['integer', 'string'], minLength: 1, maxLength: 255 },
  },
} as const;

/** The user `id`, read in `tx`, or the 404 that names it. */
async function existingUser(tx: Queryable, id: number): Promise<User> {
  const [user] = await getUsers(tx, [id]);
  if (!user) throw new ApiError('NOT_FOUND', `Could not find user ${id}.`);
  return user;
}

/**
 * Users and roles of the admin API (`/api/admin/user-admin`, `/api/admin/roles`): Admin-only, as
 * unleash-server's. Deleting a user ends their sessions and personal access tokens with the row;
 * disabling one (`disabled` in the update) ends their sessions and refuses their tokens until they
 * are enabled again; a changed role applies to their next request; the last active Admin can be
 * neither deleted, demoted nor disabled. Every change is an event.
 */
export function userRoutes(
  app: FastifyInstance,
  db: Database,
  guard: (request: FastifyRequest) => Promise<void>,
  options: UserRoutesOptions,
): void {
  const { passwords, now, publicUrl, changes } = options;
  const typed = app.withTypeProvider<JsonSchemaToTsProvider>();
  const admin = { permission: 'admin' } as const;

  typed.get(
    '/api/admin/user-admin',
    {
      onRequest: guard,
      config: admin,
      schema: {
        response: {
          200: {
            type: 'object',
            properties: {
              users: { type: 'array', items: userSchema },
              rootRoles: { type: 'array', items: roleSchema },
            },
          },
        },
      },
    },
    async function adminListUsers() {
      const [users, roles] = await Promise.all([listUsers(db), listRoles(db)]);
      return { users, rootRoles: roles.filter((role) => role.type === 'root') };
    },
  );

  typed.get(
    '/api/admin/user-admin/:id',
    {
      onRequest: guard,
      config: admin,
      schema: { params: idParams, response: { 200: userSchema } },
    },
    async function adminGetUser(request) {
      const [user] = await getUsers(db, [request.params.id]);
      if (!user) throw new ApiError('NOT_FOUND', `Could not find user ${request.params.id}.`);
      return user;
    },
  );

  typed.post(
    '/api/admin/user-admin',
    { onRequest: guard, schema: { body: createUserSchema, response: { 201: userSchema } } },
    async function adminCreateUser(request, reply) {
      const { name, email, username, password, rootRole } = request.body;
      if (!email && !username) {
        throw new ApiError('BAD_DATA', 'A user needs an email or a username.');
      }
      const role = await findRootRole(db, rootRole);
      if (!role) throw new ApiError('BAD_DATA', `"${rootRole}" is not a root role.`);
      if (email && (await emailTaken(db, email))) throw new ApiError('USER_EXISTS');
      if (username && (await usernameTaken(db, username))) throw new ApiError('USERNAME_EXISTS');
      const passwordHash = password === undefined ? null : await passwords.hash(password);
      const by = actorOf(request);
      try {
        const user = await db.transaction(async (tx) => {
          const at = now();
          const created = await createUser(tx, {
            name,
            email,
            username,
            passwordHash,
            rootRoleId: role.id,
            createdAt: at,
          });
          recordEvent(tx, { type: EVENT_TYPES.userCreated, by, data: created });
          // Without a password, the answer carries the link where the user sets one.
          if (passwordHash !== null) return created;
          const link = await issuePasswordLink(tx, {
            userId: created.id,
            kind: 'welcome',
            by,
            at,
            publicUrl,
          });
          return { ...created, inviteLink: link };
        });
        return reply.status(201).send(user);
      } catch (error) {
        throw userClash(error) ?? error;
      }
    },
  );

  typed.put(
    '/api/admin/user-admin/:id',
    {
      onRequest: guard,
      schema: { params: idParams, body: updateUserSchema, response: { 200: userSchema } },
    },
    async function adminUpdateUser(request) {
      const { id } = request.params;
      const { name, email, rootRole, disabled } = request.body;
      const role = rootRole === undefined ? undefined : await findRootRole(db, rootRole);
      if (rootRole !== undefined && !role) {
        throw new ApiError('BAD_DATA', `"${rootRole}" is not a root role.`);
      }
      const by = actorOf(request);
      try {
        const { updated, roleChanged, disabledChanged } = await db.transaction(async (tx) => {
          const admins = await lockAdminCount(tx);
          const before = await existingUser(tx, id);
          const lastActiveAdmin =
            admins <= 1 && !before.disabled && (await isAdminRoleId(tx, before.rootRole));
          const roleChanged = role !== undefined && role.id !== before.rootRole;
          if (roleChanged && lastActiveAdmin && !(await isAdminRoleId(tx, role.id))) {
            throw lastAdmin('demoted');
          }
          const disabledChanged = disabled !== undefined && disabled !== before.disabled;
          if (disabledChanged && disabled && lastActiveAdmin) throw lastAdmin('disabled');
          await updateUserDetails(tx, id, { name, email });
          if (roleChanged) await setRootRole(tx, id, role.id);
          if (disabledChanged) await setUserDisabled(tx, id, disabled ? now() : null);
          const updated = await existingUser(tx, id);
          recordEvent(tx, { type: EVENT_TYPES.userUpdated, by, preData: before, data: updated });
          return { updated, roleChanged, disabledChanged };
        });
        if (roleChanged || disabledChanged) changes.changed();
        return updated;
      } catch (error) {
        throw userClash(error) ?? error;
      }
    },
  );

  typed.delete(
    '/api/admin/user-admin/:id',
    { onRequest: guard, schema: { params: idParams } },
    async function adminDeleteUser(request, reply) {
      const { id } = request.params;
      const by = actorOf(request);
      await db.transaction(async (tx) => {
        const admins = await lockAdminCount(tx);
        const before = await existingUser(tx, id);
        if (admins <= 1 && !before.disabled && (await isAdminRoleId(tx, before.rootRole))) {
          throw lastAdmin('deleted');
        }
        await deleteUser(tx, id);
        recordEvent(tx, { type: EVENT_TYPES.userDeleted, by, preData: before });
      });
      changes.changed();
      return reply.status(200).send();
    },
  );

  typed.post(
    '/api/admin/user-admin/:id/change-password',
    {
      onRequest: guard,
      schema: {
        params: idParams,
        body: {
          type: 'object',
          required: ['password'],
          properties: { password: passwordProperty },
        },
      },
    },
    async function adminChangeUserPassword(request, reply) {
      const { id } = request.params;
      await existingUser(db, id);
      const passwordHash = await passwords.hash(request.body.password);
      const by = actorOf(request);
      await db.transaction(async (tx) => {
        await existingUser(tx, id);
        await setPassword(tx, { userId: id, passwordHash, by, changedBy: 'admin' });
      });
      changes.changed();
      return reply.status(200).send();
    },
  );

  typed.post(
    '/api/admin/user-admin/reset-password',
    {
      onRequest: guard,
      schema: {
        body: {
          type: 'object',
          required: ['id'],
          properties: { id: { type: 'string', minLength: 1, maxLength: 255 } },
        },
        response: {
          200: {
            type: 'object',
            required: ['resetPasswordUrl'],
            properties: { resetPasswordUrl: { type: 'string' } },
          },
        },
      },
    },
    async function adminCreateResetLink(request) {
      // unleash-server names the user by email; a username or an id works too.
      const wanted = request.body.id;
      const [found] = await db.query<{ id: number }>(
        `SELECT id FROM users WHERE deleted_at IS NULL
            AND (lower(email) = lower($1) OR lower(username) = lower($1) OR id::text = $1)
          ORDER BY (lower(email) = lower($1)) DESC NULLS LAST, id LIMIT 1`,
        [wanted],
      );
      if (!found) throw new ApiError('NOT_FOUND', `Could not find ${wanted}.`);
      const by = actorOf(request);
      const resetPasswordUrl = await db.transaction((tx) =>
        issuePasswordLink(tx, { userId: found.id, kind: 'reset', by, at: now(), publicUrl }),
      );
      return { resetPasswordUrl };
    },
  );

  typed.get(
    '/api/admin/roles',
    {
      onRequest: guard,
      config: admin,
      schema: {
        response: {
          200: {
            type: 'object',
            properties: { roles: { type: 'array', items: roleSchema } },
          },
        },
      },
    },
    async function adminListRoles() {
      return { roles: await listRoles(db) };
    },
  );

  typed.get(
    '/api/admin/roles/:id',
    {
      onRequest: guard,
      config: admin,
      schema: { params: idParams, response: { 200: roleSchema } },
    },
    async function adminGetRole(request) {
      const role = await getRole(db, request.params.id);
      if (!role) throw new ApiError('NOT_FOUND', `Could not find role ${request.params.id}.`);
      return role;
    },
  );
}

/** The 409 of a change that would leave the server without an Admin. */
function lastAdmin(change: 'deleted' | 'demoted' | 'disabled'): ApiError {
  return new ApiError(
    'LAST_ADMIN',
    `This user is the last Admin and cannot be ${change}: make another user Admin first.`,
  );
}
