import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import { createInvitedUserSchema, roleSchema, userSchema } from '@flags/schemas';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Database } from '../../db/database.js';
import { ApiError } from '../../errors.js';
import type { PasswordHasher } from './password.js';
import {
  createUser,
  emailTaken,
  findRootRole,
  getRole,
  getUsers,
  listRoles,
  listUsers,
  userClash,
  usernameTaken,
} from './user-store.js';

const idParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'integer', minimum: 1, maximum: 2_147_483_647 } },
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

/** Users and roles of the admin API (`/api/admin/user-admin`, `/api/admin/roles`). */
export function userRoutes(
  app: FastifyInstance,
  db: Database,
  guard: (request: FastifyRequest) => Promise<void>,
  passwords: PasswordHasher,
  now: () => Date = () => new Date(),
): void {
  const typed = app.withTypeProvider<JsonSchemaToTsProvider>();

  typed.get(
    '/api/admin/user-admin',
    {
      onRequest: guard,
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
    { onRequest: guard, schema: { params: idParams, response: { 200: userSchema } } },
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
      try {
        const user = await db.transaction((tx) =>
          createUser(tx, {
            name,
            email,
            username,
            passwordHash,
            rootRoleId: role.id,
            createdAt: now(),
          }),
        );
        return reply.status(201).send(user);
      } catch (error) {
        throw userClash(error) ?? error;
      }
    },
  );

  typed.get(
    '/api/admin/roles',
    {
      onRequest: guard,
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
    { onRequest: guard, schema: { params: idParams, response: { 200: roleSchema } } },
    async function adminGetRole(request) {
      const role = await getRole(db, request.params.id);
      if (!role) throw new ApiError('NOT_FOUND', `Could not find role ${request.params.id}.`);
      return role;
    },
  );
}
