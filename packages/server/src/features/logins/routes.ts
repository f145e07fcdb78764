import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import { userSchema } from '@flags/schemas';
import { addressShare } from '@flags/serving';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Role } from '../../auth/actor.js';
import type { CredentialChanges } from '../../auth/credential-changes.js';
import { type LoginFailures, loginSubject } from '../../auth/login-failures.js';
import { isCrossOrigin } from '../../auth/same-origin.js';
import { cookiePath, readSessionCookie, sessionCookie } from '../../auth/session-cookie.js';
import type { SessionStore } from '../../auth/sessions.js';
import type { Database } from '../../db/database.js';
import { ApiError } from '../../errors.js';
import { readSetting } from '../settings/settings-store.js';
import { checkLogin, findLoginCandidate } from '../users/login.js';
import type { PasswordHasher } from '../users/password.js';
import { getUsers } from '../users/user-store.js';
import { recordLogin } from './login-history.js';

export interface LoginOptions {
  readonly sessions: SessionStore;
  readonly passwords: PasswordHasher;
  readonly failures: LoginFailures;
  readonly publicUrl: URL;
  readonly sessionMaxAgeMs: number;
  readonly loginsPerMinute: number;
  readonly now: () => Date;
  /** Told of each logout, so this server's open admin streams of that user close at once. */
  readonly changes: CredentialChanges;
  /** The user name or e-mail of the Admin who may log in with a password while they are off. */
  readonly breakGlassAdmin?: string | undefined;
}

/** Whether user `id` is the break-glass Admin: named by `breakGlass` and an Admin now. */
async function isBreakGlassAdmin(
  db: Database,
  id: number,
  breakGlass: string | undefined,
): Promise<boolean> {
  if (breakGlass === undefined) return false;
  const rows = await db.query(
    `SELECT 1 FROM users u JOIN role_user ru ON ru.user_id = u.id JOIN roles r ON r.id = ru.role_id
      WHERE u.id = $1 AND u.deleted_at IS NULL AND u.disabled_at IS NULL AND r.type = 'root' AND r.name = 'Admin'
        AND (lower(u.username) = lower($2) OR lower(u.email) = lower($2))`,
    [id, breakGlass.trim()],
  );
  return rows.length > 0;
}

/** unleash-server's login body (`loginSchema`), with lengths bounded. */
const loginSchema = {
  type: 'object',
  required: ['username', 'password'],
  additionalProperties: false,
  properties: {
    username: { type: 'string', maxLength: 255 },
    password: { type: 'string', maxLength: 256 },
  },
} as const;

const permissionSchema = {
  type: 'object',
  required: ['permission'],
  properties: {
    permission: { type: 'string' },
    project: { type: 'string' },
    environment: { type: 'string' },
  },
} as const;

/** `GET /api/admin/user`: unleash-server's `meSchema`. */
const meSchema = {
  type: 'object',
  required: ['user', 'permissions', 'feedback', 'splash'],
  properties: {
    user: userSchema,
    permissions: { type: 'array', items: permissionSchema },
    feedback: { type: 'array', items: { type: 'object', additionalProperties: true } },
    splash: { type: 'object', additionalProperties: { type: 'boolean' } },
  },
} as const;

/**
 * What the Unleash UI reads from `permissions` to show or hide controls: `ADMIN` for admins, the
 * Editor root role's permission names for editors, none for viewers (reads need none).
 */
const PERMISSIONS_OF: Readonly<Record<Role, readonly string[]>> = {
  admin: ['ADMIN'],
  editor: [
    'CREATE_FEATURE',
    'UPDATE_FEATURE',
    'DELETE_FEATURE',
    'UPDATE_FEATURE_VARIANTS',
    'CREATE_FEATURE_STRATEGY',
    'UPDATE_FEATURE_STRATEGY',
    'DELETE_FEATURE_STRATEGY',
    'UPDATE_FEATURE_ENVIRONMENT',
    'UPDATE_FEATURE_ENVIRONMENT_VARIANTS',
    'CREATE_STRATEGY',
    'UPDATE_STRATEGY',
    'DELETE_STRATEGY',
    'CREATE_SEGMENT',
    'UPDATE_SEGMENT',
    'DELETE_SEGMENT',
    'CREATE_CONTEXT_FIELD',
    'UPDATE_CONTEXT_FIELD',
    'DELETE_CONTEXT_FIELD',
    'CREATE_TAG_TYPE',
    'UPDATE_TAG_TYPE',
    'DELETE_TAG_TYPE',
  ],
  viewer: [],
};

/** Browsers signed in elsewhere never log in here on a page's behalf (login CSRF). */
function refuseCrossOrigin(publicOrigin: string) {
  return async (request: FastifyRequest) => {
    if (isCrossOrigin(request, publicOrigin)) throw new ApiError('CROSS_ORIGIN');
  };
}

/**
 * Logins with a password, as unleash-server's: `POST /auth/simple/login` opens a session (cookie),
 * `POST /logout` ends it, `GET /api/admin/user` says who is signed in (behind the admin guard).
 */
export function loginRoutes(
  app: FastifyInstance,
  db: Database,
  guard: (request: FastifyRequest) => Promise<void>,
  options: LoginOptions,
): void {
  const {
    sessions,
    passwords,
    failures,
    publicUrl,
    sessionMaxAgeMs,
    loginsPerMinute,
    now,
    changes,
    breakGlassAdmin,
  } = options;
  const typed = app.withTypeProvider<JsonSchemaToTsProvider>();
  const path = cookiePath(publicUrl);
  const sameSiteOnly = refuseCrossOrigin(publicUrl.origin);

  typed.post(
    '/auth/simple/login',
    {
      // Guessing passwords from one address is slow; `failures` slows it further, in the database.
      config: {
        rateLimit: {
          max: loginsPerMinute,
          timeWindow: 60_000,
          // One subscriber may use every address of its IPv6 /64.
          keyGenerator: (request: FastifyRequest) => addressShare(request.ip),
          errorResponseBuilder: () => new ApiError('RATE_LIMITED'),
        },
      },
      onRequest: sameSiteOnly,
      schema: { body: loginSchema, response: { 200: userSchema } },
    },
    async function authLogIn(request, reply) {
      const { username, password } = request.body;
      const candidate = await findLoginCandidate(db, username);
      // The same answers, in about the same time, for a name nobody has and a wrong password.
      const subject = loginSubject(candidate?.id, username, request.ip);
      const attempt = { username, userId: candidate?.id, authType: 'password' } as const;
      // With password logins off, only the break-glass Admin's password is even checked.
      if (
        (await readSetting(db, 'simpleAuth')).disabled &&
        (candidate === undefined || !(await isBreakGlassAdmin(db, candidate.id, breakGlassAdmin)))
      ) {
        await recordLogin(
          db,
          request,
          { ...attempt, successful: false, failureReason: 'password logins are off' },
          now(),
        );
        throw new ApiError('PASSWORD_LOGINS_DISABLED');
      }
      const waitMs = await failures.retryAfterMs(subject);
      if (waitMs > 0) {
        const seconds = Math.ceil(waitMs / 1000);
        await recordLogin(
          db,
          request,
          { ...attempt, successful: false, failureReason: 'throttled' },
          now(),
        );
        void reply.header('retry-after', String(seconds));
        throw new ApiError('LOGIN_LIMITED', undefined, [`Try again in ${seconds} s.`]);
      }
      const found = await checkLogin(db, passwords, candidate, password, request.ip);
      if (!found) {
        await failures.recordFailure(subject);
        // Admins read why; the caller is told the same in every case.
        const failureReason =
          candidate === undefined
            ? 'unknown user'
            : candidate.passwordHash === null
              ? 'no password set'
              : 'wrong password';
        await recordLogin(db, request, { ...attempt, successful: false, failureReason }, now());
        throw new ApiError('LOGIN_FAILED');
      }
      await failures.recordSuccess(subject);
      await recordLogin(db, request, { ...attempt, successful: true }, now());
      await db.query('UPDATE users SET seen_at = $2, login_attempts = 0 WHERE id = $1', [
        found.id,
        now(),
      ]);
      const secret = await sessions.create(found.id);
      const [user] = await getUsers(db, [found.id]);
      return reply
        .header('set-cookie', sessionCookie(request, secret, sessionMaxAgeMs, path))
        .header('cache-control', 'no-store')
        .send(user ?? found);
    },
  );

  // The UI's "Log out" is a form post (it works without script); scripts post JSON or nothing.
  // The body says nothing, so it is read and dropped, in this route's scope only.
  app.register(async function logoutScope(scope) {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser(
      ['application/x-www-form-urlencoded', 'application/json'],
      { parseAs: 'string', bodyLimit: 4096 },
      (_request, _body, done) => done(null, undefined),
    );
    scope.post('/logout', { onRequest: sameSiteOnly }, async function authLogOut(request, reply) {
      const secret = readSessionCookie(request);
      // As unleash-server: every session of the user ends, not just this browser's.
      const ended = secret === undefined ? undefined : await sessions.endAllOf(secret);
      if (ended !== undefined) changes.changed();
      const base = path === '/' ? '' : path;
      // A single sign-on session, with single sign-out on, ends at the provider too.
      let to = `${base}/signed-out`;
      if (ended?.authType === 'oidc') {
        const oidc = await readSetting(db, 'oidc');
        if (oidc.enabled && oidc.enableSingleSignOut) to = `${base}/auth/oidc/signed-out`;
      }
      return reply
        .header('set-cookie', sessionCookie(request, '', 0, path))
        .header('clear-site-data', '"cookies", "storage"')
        .header('cache-control', 'no-store')
        .redirect(to, 302);
    });
  });

  typed.get(
    '/api/admin/user',
    { onRequest: guard, schema: { response: { 200: meSchema } } },
    async function adminGetCurrentUser(request, reply) {
      const actor = request.actor!;
      const [user] = actor.userId === undefined ? [] : await getUsers(db, [actor.userId]);
      void reply.header('cache-control', 'no-store');
      return {
        // A token has no user row: its name stands in, as unleash-server's API user.
        user: user ?? { id: 0, name: actor.name, username: actor.name, email: '', isAPI: true },
        permissions: PERMISSIONS_OF[actor.role].map((permission) => ({ permission })),
        feedback: [],
        splash: {},
      };
    },
  );
}
