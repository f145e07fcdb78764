import type { RateLimitOptions } from '@fastify/rate-limit';
import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import {
  createInvitedUserSchema,
  inviteSignupAnswerSchema,
  publicSignupTokenCreateSchema,
  publicSignupTokenSchema,
  publicSignupTokensSchema,
  publicSignupTokenUpdateSchema,
} from '@flags/schemas';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { actorOf } from '../../auth/actor.js';
import { isCrossOrigin } from '../../auth/same-origin.js';
import { cookiePath, sessionCookie } from '../../auth/session-cookie.js';
import type { SessionStore } from '../../auth/sessions.js';
import type { Database } from '../../db/database.js';
import { ApiError } from '../../errors.js';
import { recordEvent } from '../events/event-store.js';
import { EVENT_TYPES } from '../events/event-types.js';
import type { PasswordHasher } from '../users/password.js';
import {
  createUser,
  emailTaken,
  findRootRole,
  userClash,
  usernameTaken,
} from '../users/user-store.js';
import {
  addSignupTokenUser,
  findSignupToken,
  getSignupToken,
  insertSignupToken,
  isAdminRole,
  isUsable,
  lacksAdminConsent,
  listSignupTokens,
  newSignupSecret,
  type StoredSignupToken,
  tokensJson,
  updateSignupToken,
} from './signup-token-store.js';

// The plugin's own typing augments `fastify`, which does not reach this re-exported interface
// under NodeNext resolution; the route option it reads is declared where the interface lives.
declare module 'fastify/types/context.js' {
  interface FastifyContextConfig {
    rateLimit?: RateLimitOptions | false;
  }
}

export interface SignupTokenOptions {
  /** Base of the invite links (`PUBLIC_URL`). */
  publicUrl: URL;
  now: () => Date;
  /** Signups accepted per client address and minute (`SIGNUP_RATE_LIMIT_PER_MINUTE`). */
  signupsPerMinute: number;
  /** Hashes the passwords of signups, within its concurrency bound. */
  passwords: PasswordHasher;
  /** Opens the session a new account is signed in with. */
  sessions: SessionStore;
  /** The session cookie's lifetime (`SESSION_MAX_AGE_MS`), as a password login sets it. */
  sessionMaxAgeMs: number;
}

/**
 * The one answer to a signup on a usable link, whether or not the account could be created: an
 * e-mail or user name someone already has is not revealed by status, body or the time taken. Only
 * a new account gets a session cookie with it (see SECURITY.md).
 */
const SIGNED_UP = {
  message:
    'If no account had this e-mail or user name, the account is created and signed in; if one had, nothing changed: log in with that account.',
} as const;

const tokenParams = {
  type: 'object',
  required: ['token'],
  properties: { token: { type: 'string', minLength: 1, maxLength: 255 } },
} as const;

/**
 * Fastify's Ajv strips properties a schema does not allow instead of failing; these bodies must
 * fail instead (a `rootRole` in a signup body is an attempt to choose one's own role).
 */
function rejectUnknownProperties(schema: { properties: Record<string, unknown> }) {
  const allowed = new Set(Object.keys(schema.properties));
  return async function checkProperties(request: FastifyRequest): Promise<void> {
    const body = request.body;
    if (body === null || typeof body !== 'object' || Array.isArray(body)) return;
    const unknown = Object.keys(body).filter((key) => !allowed.has(key));
    if (unknown.length > 0) {
      const details = unknown.map((key) => `body must NOT have additional properties (${key})`);
      throw new ApiError('BAD_DATA', `Request validation failed: ${details[0]}`, details);
    }
  };
}

/** Upstream caps a new link's lifetime at one month (Unleash PR #2308). */
function oneMonthAfter(now: Date): Date {
  const cap = new Date(now);
  cap.setUTCMonth(cap.getUTCMonth() + 1);
  return cap;
}

const notFound = () => new ApiError('NOT_FOUND', 'Could not find public signup token.');

/** Why a known token admits nobody (see `isUsable`). */
const unusable = (token: StoredSignupToken) =>
  lacksAdminConsent(token)
    ? new ApiError(
        'INVITE_INVALID',
        'This invite link grants the Admin role but was not created with allowAdmin; ask for a new link.',
      )
    : new ApiError('INVITE_INVALID');

/**
 * Public signup tokens: the admin side under `/api/admin/invite-link/tokens` (admin token) and the
 * public side under `/invite/:token` (no token: the secret in the link is the credential).
 */
export function signupTokenRoutes(
  app: FastifyInstance,
  db: Database,
  guard: (request: FastifyRequest) => Promise<void>,
  options: SignupTokenOptions,
): void {
  const { publicUrl, now, signupsPerMinute, passwords, sessions, sessionMaxAgeMs } = options;
  const path = cookiePath(publicUrl);
  const typed = app.withTypeProvider<JsonSchemaToTsProvider>();
  const render = async (token: StoredSignupToken, created?: { secret: string }) =>
    (await tokensJson(db, [token], publicUrl, now(), created))[0]!;

  typed.get(
    '/api/admin/invite-link/tokens',
    {
      onRequest: guard,
      config: { permission: 'admin' },
      schema: { response: { 200: publicSignupTokensSchema } },
    },
    async function adminListSignupTokens() {
      return { tokens: await tokensJson(db, await listSignupTokens(db), publicUrl, now()) };
    },
  );

  typed.post(
    '/api/admin/invite-link/tokens',
    {
      onRequest: guard,
      preValidation: rejectUnknownProperties(publicSignupTokenCreateSchema),
      schema: { body: publicSignupTokenCreateSchema, response: { 201: publicSignupTokenSchema } },
    },
    async function adminCreateSignupToken(request, reply) {
      const { name, role: wanted = 'Viewer', allowAdmin = false } = request.body;
      const at = now();
      const requested = new Date(request.body.expiresAt);
      if (requested.getTime() <= at.getTime()) {
        throw new ApiError('BAD_DATA', 'expiresAt must be in the future.');
      }
      const role = await findRootRole(db, wanted);
      if (!role) {
        throw new ApiError(
          'BAD_DATA',
          `"${wanted}" is not a root role; use Admin, Editor or Viewer (or their ids).`,
        );
      }
      // Anyone holding the link gets its role: Admin must be asked for twice.
      if (isAdminRole(role) && !allowAdmin) {
        throw new ApiError(
          'BAD_DATA',
          'A signup link with the Admin role makes everyone holding it an admin: send allowAdmin: true to create one.',
        );
      }
      const cap = oneMonthAfter(at);
      const secret = newSignupSecret();
      const by = actorOf(request);
      const expiresAt = requested > cap ? cap : requested;
      const id = await db.transaction(async (tx) => {
        const inserted = await insertSignupToken(tx, {
          secret,
          name,
          expiresAt,
          createdAt: at,
          // The admin token's name, or the signed-in user's.
          createdBy: by.name,
          roleId: role.id,
          allowAdmin,
        });
        // Never the secret: the event log is no place for it.
        recordEvent(tx, {
          type: EVENT_TYPES.publicSignupTokenCreated,
          by,
          data: { id: inserted, name, role: role.name, expiresAt: expiresAt.toISOString() },
        });
        return inserted;
      });
      const token = await getSignupToken(db, secret);
      if (!token) throw new ApiError('INTERNAL');
      // The only answer that shows the secret; the location names the token by id, so the secret
      // stays out of anything that records locations.
      return reply
        .status(201)
        .header('location', `tokens/${id}`)
        .send(await render(token, { secret }));
    },
  );

  typed.get(
    '/api/admin/invite-link/tokens/:token',
    {
      onRequest: guard,
      config: { permission: 'admin' },
      schema: { params: tokenParams, response: { 200: publicSignupTokenSchema } },
    },
    async function adminGetSignupToken(request) {
      const token = await findSignupToken(db, request.params.token);
      if (!token) throw notFound();
      return render(token);
    },
  );

  typed.put(
    '/api/admin/invite-link/tokens/:token',
    {
      onRequest: guard,
      preValidation: rejectUnknownProperties(publicSignupTokenUpdateSchema),
      schema: {
        params: tokenParams,
        body: publicSignupTokenUpdateSchema,
        response: { 200: publicSignupTokenSchema },
      },
    },
    async function adminUpdateSignupToken(request) {
      const { expiresAt, enabled } = request.body;
      if (expiresAt === undefined && enabled === undefined) {
        throw new ApiError('BAD_DATA', 'Send expiresAt, enabled or both.');
      }
      const change = {
        ...(expiresAt === undefined ? {} : { expiresAt: new Date(expiresAt) }),
        ...(enabled === undefined ? {} : { enabled }),
      };
      const found = await findSignupToken(db, request.params.token);
      if (!found) throw notFound();
      const by = actorOf(request);
      await db.transaction(async (tx) => {
        if (!(await updateSignupToken(tx, found.id, change))) throw notFound();
        recordEvent(tx, {
          type: EVENT_TYPES.publicSignupTokenUpdated,
          by,
          preData: { id: found.id, expiresAt: found.expiresAt, enabled: found.enabled },
          data: { id: found.id, ...change },
        });
      });
      const token = await findSignupToken(db, String(found.id));
      if (!token) throw notFound();
      return render(token);
    },
  );

  typed.get(
    '/invite/:token/validate',
    { schema: { params: tokenParams } },
    async function inviteValidate(request, reply) {
      const token = await getSignupToken(db, request.params.token);
      if (!token) throw notFound();
      if (!isUsable(token, now())) throw unusable(token);
      return reply.status(200).send();
    },
  );

  typed.post(
    '/invite/:token/signup',
    {
      // Anyone holding a link can sign up: one address cannot create accounts in bulk.
      config: {
        rateLimit: {
          max: signupsPerMinute,
          timeWindow: 60_000,
          errorResponseBuilder: () => new ApiError('RATE_LIMITED'),
        },
      },
      // The answer signs a browser in: no other site may sign one in to an account it made.
      onRequest: async (request) => {
        if (isCrossOrigin(request, publicUrl.origin)) throw new ApiError('CROSS_ORIGIN');
      },
      preValidation: rejectUnknownProperties(createInvitedUserSchema),
      schema: {
        params: tokenParams,
        body: createInvitedUserSchema,
        response: { 202: inviteSignupAnswerSchema },
      },
    },
    async function inviteSignup(request, reply) {
      const { name, email, username, password } = request.body;
      const secret = request.params.token;
      const known = await getSignupToken(db, secret);
      if (!known) throw notFound();
      if (!isUsable(known, now())) throw unusable(known);
      // Hashed whether or not the account can be created, so both answers take as long. Slow on
      // purpose: done before the transaction so it holds no lock meanwhile.
      const passwordHash =
        password === undefined ? null : await passwords.hash(password, request.ip);
      void reply.status(202).header('cache-control', 'no-store');
      // An account that exists is left as it is and not revealed: the same answer, no session.
      const taken = async () => {
        request.log.info(
          { signupToken: known.id },
          'invite signup with an e-mail or user name that has an account: nothing changed',
        );
        return SIGNED_UP;
      };
      if ((await emailTaken(db, email)) || (username && (await usernameTaken(db, username)))) {
        return taken();
      }
      let userId: number;
      try {
        userId = await db.transaction(async (tx) => {
          // Read again inside the transaction: a token disabled meanwhile admits nobody.
          const token = await getSignupToken(tx, secret);
          const at = now();
          if (!token) throw notFound();
          if (!isUsable(token, at)) throw unusable(token);
          const created = await createUser(tx, {
            name,
            email,
            username: username ?? null,
            passwordHash,
            rootRoleId: token.role.id,
            createdAt: at,
          });
          await addSignupTokenUser(tx, token.id, created.id, at);
          const by = { name: username ?? email, userId: created.id };
          recordEvent(tx, { type: EVENT_TYPES.userCreated, by, data: created });
          recordEvent(tx, {
            type: EVENT_TYPES.publicSignupTokenUserAdded,
            by,
            data: { tokenId: token.id, tokenName: token.name, userId: created.id, name },
          });
          return created.id;
        });
      } catch (error) {
        // Taken by a signup at the same moment: the same as taken before.
        if (userClash(error)) return taken();
        throw error;
      }
      // The invitee lands signed in, as after a password login.
      const session = await sessions.create(userId);
      await db.query('UPDATE users SET seen_at = $2 WHERE id = $1', [userId, now()]);
      void reply.header('set-cookie', sessionCookie(request, session, sessionMaxAgeMs, path));
      return SIGNED_UP;
    },
  );
}
