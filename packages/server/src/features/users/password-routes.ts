import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import { roleSchema } from '@flags/schemas';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { actorOf } from '../../auth/actor.js';
import type { CredentialChanges } from '../../auth/credential-changes.js';
import { readSessionCookie } from '../../auth/session-cookie.js';
import type { Database } from '../../db/database.js';
import { ApiError } from '../../errors.js';
import type { PasswordHasher } from './password.js';
import { findPasswordLink } from './password-links.js';
import { passwordProperty } from './routes.js';
import { setPassword } from './set-password.js';
import { getRole } from './user-store.js';

export interface PasswordRoutesOptions {
  readonly passwords: PasswordHasher;
  readonly now: () => Date;
  readonly changes: CredentialChanges;
  /** Requests per client address and minute on the public routes (`LOGIN_RATE_LIMIT_PER_MINUTE`). */
  readonly requestsPerMinute: number;
}

/** unleash-server's `tokenUserSchema`: whose password a link sets. */
const tokenUserSchema = {
  type: 'object',
  required: ['id', 'email', 'token', 'createdBy', 'role'],
  properties: {
    id: { type: 'integer' },
    name: { type: 'string' },
    email: { type: 'string' },
    token: { type: 'string' },
    createdBy: { type: ['string', 'null'] },
    role: roleSchema,
  },
} as const;

const linkToken = { type: 'string', minLength: 1, maxLength: 255 } as const;

const linkInvalid = () => new ApiError('PASSWORD_LINK_INVALID');

/**
 * Setting passwords: one's own (`POST /api/admin/user/change-password`, the current password
 * asked for) and through a link an Admin made (`/auth/reset/*`, public: the secret in the link is
 * the credential), as unleash-server's routes. A new password ends the user's other sessions and
 * every other link of theirs; each change is an event.
 */
export function passwordRoutes(
  app: FastifyInstance,
  db: Database,
  guard: (request: FastifyRequest) => Promise<void>,
  options: PasswordRoutesOptions,
): void {
  const { passwords, now, changes, requestsPerMinute } = options;
  const typed = app.withTypeProvider<JsonSchemaToTsProvider>();
  const limited = {
    rateLimit: {
      max: requestsPerMinute,
      timeWindow: 60_000,
      errorResponseBuilder: () => new ApiError('RATE_LIMITED'),
    },
  };

  typed.post(
    '/api/admin/user/change-password',
    {
      onRequest: guard,
      // Anyone signed in changes their own password, whatever their role.
      config: { permission: 'read' },
      schema: {
        body: {
          type: 'object',
          required: ['password', 'confirmPassword', 'oldPassword'],
          properties: {
            password: passwordProperty,
            confirmPassword: { type: 'string', maxLength: 256 },
            oldPassword: { type: 'string', maxLength: 256 },
          },
        },
      },
    },
    async function adminChangeOwnPassword(request, reply) {
      const by = actorOf(request);
      if (by.userId === undefined) throw new ApiError('PATS_NEED_USER');
      const { password, confirmPassword, oldPassword } = request.body;
      if (password !== confirmPassword) {
        throw new ApiError('BAD_DATA', 'The new password and its confirmation differ.');
      }
      const [row] = await db.query<{ password_hash: string | null }>(
        'SELECT password_hash FROM users WHERE id = $1',
        [by.userId],
      );
      if (!(await passwords.verify(oldPassword, row?.password_hash ?? null, request.ip))) {
        throw new ApiError('OLD_PASSWORD_WRONG');
      }
      const passwordHash = await passwords.hash(password, request.ip);
      const userId = by.userId;
      await db.transaction((tx) =>
        // The session that changed it stays; every other one ends.
        setPassword(tx, {
          userId,
          passwordHash,
          by,
          changedBy: 'self',
          keepSession: readSessionCookie(request),
        }),
      );
      changes.changed();
      return reply.status(200).send();
    },
  );

  typed.get(
    '/auth/reset/validate',
    {
      config: limited,
      schema: {
        querystring: { type: 'object', required: ['token'], properties: { token: linkToken } },
        response: { 200: tokenUserSchema },
      },
    },
    async function resetValidateLink(request, reply) {
      const { token } = request.query;
      const user = await findPasswordLink(db, token, now());
      if (!user) throw linkInvalid();
      const role = user.roleId === null ? undefined : await getRole(db, user.roleId);
      void reply.header('cache-control', 'no-store');
      return {
        id: user.userId,
        ...(user.name === null ? {} : { name: user.name }),
        email: user.email ?? user.username ?? '',
        token,
        createdBy: user.createdBy,
        role: role ?? { id: 0, type: 'root', name: 'Viewer', project: null },
      };
    },
  );

  typed.post(
    '/auth/reset/validate-password',
    {
      config: limited,
      schema: {
        body: {
          type: 'object',
          required: ['password'],
          properties: { password: passwordProperty },
        },
      },
    },
    async function resetValidatePassword(_request, reply) {
      // The schema is the policy: reaching here, the password meets it.
      return reply.status(200).send();
    },
  );

  typed.post(
    '/auth/reset/password',
    {
      config: limited,
      schema: {
        body: {
          type: 'object',
          required: ['token', 'password'],
          properties: { token: linkToken, password: passwordProperty },
        },
      },
    },
    async function resetSetPassword(request, reply) {
      const { token, password } = request.body;
      // Checked before the slow hash, and again under the link's lock.
      if (!(await findPasswordLink(db, token, now()))) throw linkInvalid();
      const passwordHash = await passwords.hash(password, request.ip);
      await db.transaction(async (tx) => {
        const at = now();
        const user = await findPasswordLink(tx, token, at, true);
        if (!user) throw linkInvalid();
        // This link and every other of the user's stop working.
        await setPassword(tx, {
          userId: user.userId,
          passwordHash,
          by: { name: user.username ?? user.email ?? `user ${user.userId}`, userId: user.userId },
          changedBy: 'link',
        });
      });
      changes.changed();
      return reply.status(200).send();
    },
  );
}
