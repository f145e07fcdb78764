import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import { addressShare } from '@flags/serving';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { actorOf } from '../../auth/actor.js';
import type { CredentialChanges } from '../../auth/credential-changes.js';
import { cookiePath, sessionCookie } from '../../auth/session-cookie.js';
import type { SessionStore } from '../../auth/sessions.js';
import type { Database } from '../../db/database.js';
import { ApiError, type ErrorCode, errorBody } from '../../errors.js';
import { recordEvent } from '../events/event-store.js';
import { EVENT_TYPES } from '../events/event-types.js';
import { recordLogin } from '../logins/login-history.js';
import { readSetting, writeSetting } from '../settings/settings-store.js';
import { OidcLogins, ProviderUnavailable, SsoRefusal } from './oidc-login.js';
import {
  mergeOidcSettings,
  type OidcSettingsBody,
  oidcSettingsBodySchema,
  oidcSettingsResponseSchema,
  publicOidcSettings,
  saveOidcSettings,
} from './oidc-settings.js';
import { signInUser } from './oidc-users.js';

/** The cookie that ties a sign-in to the browser that started it. */
export const OIDC_LOGIN_COOKIE = 'flags-oidc-login';

/** The setting's name in the event log (Unleash's). */
const SIMPLE_SETTING_EVENT_NAME = 'unleash.auth.simple';

/** The label of the login page's button. */
const SIGN_IN_LABEL = 'Sign in with OpenID Connect';

export interface SsoRouteOptions {
  readonly sessions: SessionStore;
  readonly publicUrl: URL;
  readonly sessionMaxAgeMs: number;
  readonly loginsPerMinute: number;
  readonly now: () => Date;
  readonly changes: CredentialChanges;
}

function readCookie(request: FastifyRequest, name: string): string | undefined {
  for (const pair of (request.headers.cookie ?? '').split(';')) {
    const equals = pair.indexOf('=');
    if (equals >= 0 && pair.slice(0, equals).trim() === name) {
      return pair.slice(equals + 1).trim() || undefined;
    }
  }
  return undefined;
}

const escapeHtml = (text: string) =>
  text.replace(
    /[&<>"']/g,
    (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[char]!,
  );

/** A page of its own (no script): the sign-in's refusals, and the way to the provider's logout. */
function page(title: string, body: string, head = ''): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · flags</title><link rel="stylesheet" href="/ui/style.css">${head}</head>
<body><main class="login"><div class="card"><h1>${escapeHtml(title)}</h1>${body}</div></main></body></html>
`;
}

const PAGE_CSP =
  "default-src 'none'; style-src 'self'; img-src 'self' data:; base-uri 'none'; frame-ancestors 'none'; form-action 'none'";

/**
 * A refusal: an HTML page for a browser (it came here by the provider's redirect), the JSON error
 * shape for anything else. Never a session.
 */
function refuse(
  request: FastifyRequest,
  reply: FastifyReply,
  code: ErrorCode,
  details: readonly string[],
  home: string,
): FastifyReply {
  const error = new ApiError(code, undefined, details);
  void reply.header('cache-control', 'no-store');
  if (!(request.headers.accept ?? '').includes('text/html')) {
    return reply.code(error.status).send(errorBody(error));
  }
  const why = details.map((line) => `<p class="error" role="alert">${escapeHtml(line)}</p>`);
  return reply
    .code(error.status)
    .type('text/html; charset=utf-8')
    .header('content-security-policy', PAGE_CSP)
    .send(
      page(
        'Not signed in',
        `<p>${escapeHtml(error.message)}</p>${why.join('')}<p><a href="${escapeHtml(home)}">Back to the login page</a></p>`,
      ),
    );
}

/**
 * Single sign-on with OpenID Connect, with Unleash's paths: `GET /auth/oidc/login` sends the
 * browser to the provider, `GET /auth/oidc/callback` comes back with a code and opens the same
 * session as a password login. Settings at `/api/admin/auth/oidc/settings` and password logins at
 * `/api/admin/auth/simple/settings` (Admin-only, events recorded, the secret never answered);
 * `GET /auth/login-options` tells the login page what to offer.
 */
export function ssoRoutes(
  app: FastifyInstance,
  db: Database,
  guard: (request: FastifyRequest) => Promise<void>,
  options: SsoRouteOptions,
): void {
  const { sessions, publicUrl, sessionMaxAgeMs, loginsPerMinute, now, changes } = options;
  const typed = app.withTypeProvider<JsonSchemaToTsProvider>();
  const logins = new OidcLogins(db, publicUrl, now);
  const path = cookiePath(publicUrl);
  const home = path === '/' ? '/' : `${path}/`;
  const loginCookiePath = `${path === '/' ? '' : path}/auth/oidc`;
  const rateLimit = {
    max: loginsPerMinute,
    timeWindow: 60_000,
    keyGenerator: (request: FastifyRequest) => addressShare(request.ip),
    errorResponseBuilder: () => new ApiError('RATE_LIMITED'),
  };

  typed.get(
    '/api/admin/auth/oidc/settings',
    {
      onRequest: guard,
      config: { permission: 'admin' },
      schema: { response: { 200: oidcSettingsResponseSchema } },
    },
    async function adminGetOidcSettings(_request, reply) {
      void reply.header('cache-control', 'no-store');
      return publicOidcSettings(await readSetting(db, 'oidc'));
    },
  );

  typed.post(
    '/api/admin/auth/oidc/settings',
    {
      onRequest: guard,
      schema: { body: oidcSettingsBodySchema, response: { 200: oidcSettingsResponseSchema } },
    },
    async function adminSetOidcSettings(request, reply) {
      const current = await readSetting(db, 'oidc');
      const next = await mergeOidcSettings(db, current, request.body as OidcSettingsBody);
      await saveOidcSettings(db, next, actorOf(request));
      void reply.header('cache-control', 'no-store');
      return publicOidcSettings(next);
    },
  );

  const simpleSchema = {
    type: 'object',
    required: ['disabled'],
    additionalProperties: false,
    properties: { disabled: { type: 'boolean' } },
  } as const;

  typed.get(
    '/api/admin/auth/simple/settings',
    {
      onRequest: guard,
      config: { permission: 'admin' },
      schema: { response: { 200: simpleSchema } },
    },
    async function adminGetSimpleAuthSettings() {
      return readSetting(db, 'simpleAuth');
    },
  );

  typed.post(
    '/api/admin/auth/simple/settings',
    { onRequest: guard, schema: { body: simpleSchema, response: { 200: simpleSchema } } },
    async function adminSetSimpleAuthSettings(request) {
      const value = { disabled: request.body.disabled };
      if (value.disabled && !(await readSetting(db, 'oidc')).enabled) {
        throw new ApiError(
          'BAD_DATA',
          'Turn on single sign-on (/api/admin/auth/oidc/settings) before turning password logins off.',
        );
      }
      const by = actorOf(request);
      await db.transaction(async (tx) => {
        const before = await writeSetting(tx, 'simpleAuth', value);
        recordEvent(tx, {
          type: EVENT_TYPES.settingUpdated,
          by,
          preData: { name: SIMPLE_SETTING_EVENT_NAME, value: before },
          data: { name: SIMPLE_SETTING_EVENT_NAME, value },
        });
      });
      return value;
    },
  );

  typed.get(
    '/auth/login-options',
    {
      schema: {
        response: {
          200: {
            type: 'object',
            required: ['passwordLogins', 'sso'],
            properties: {
              passwordLogins: { type: 'boolean' },
              sso: {
                type: 'array',
                items: {
                  type: 'object',
                  required: ['type', 'message', 'path'],
                  properties: {
                    type: { type: 'string' },
                    message: { type: 'string' },
                    path: { type: 'string' },
                  },
                },
              },
            },
          },
        },
      },
    },
    async function authGetLoginOptions(_request, reply) {
      const [oidc, simple] = await Promise.all([
        readSetting(db, 'oidc'),
        readSetting(db, 'simpleAuth'),
      ]);
      void reply.header('cache-control', 'no-store');
      return {
        passwordLogins: !simple.disabled,
        sso: oidc.enabled
          ? [{ type: 'oidc', message: SIGN_IN_LABEL, path: `${home}auth/oidc/login` }]
          : [],
      };
    },
  );

  app.get(
    '/auth/oidc/login',
    { config: { rateLimit } },
    async function authOidcLogIn(request, reply) {
      const settings = await readSetting(db, 'oidc');
      if (!settings.enabled) {
        return refuse(request, reply, 'OIDC_NOT_ENABLED', [], home);
      }
      let started: Awaited<ReturnType<OidcLogins['start']>>;
      try {
        started = await logins.start(settings);
      } catch (error) {
        if (!(error instanceof ProviderUnavailable)) throw error;
        request.log.warn(`single sign-on: ${error.message}`);
        return refuse(request, reply, 'OIDC_PROVIDER_UNAVAILABLE', [error.message], home);
      }
      const secure = request.protocol === 'https' ? '; Secure' : '';
      return reply
        .header(
          'set-cookie',
          `${OIDC_LOGIN_COOKIE}=${started.browserSecret}; Path=${loginCookiePath}; Max-Age=600; HttpOnly; SameSite=Lax${secure}`,
        )
        .header('cache-control', 'no-store')
        .redirect(started.url.href, 302);
    },
  );

  app.get(
    '/auth/oidc/callback',
    { config: { rateLimit } },
    async function authOidcCallback(request, reply) {
      const settings = await readSetting(db, 'oidc');
      if (!settings.enabled) return refuse(request, reply, 'OIDC_NOT_ENABLED', [], home);
      const mark = request.url.indexOf('?');
      const query = new URLSearchParams(mark < 0 ? '' : request.url.slice(mark + 1));
      const browserSecret = readCookie(request, OIDC_LOGIN_COOKIE);
      // The login cookie has done its work, whatever happens next.
      const clearLoginCookie = `${OIDC_LOGIN_COOKIE}=; Path=${loginCookiePath}; Max-Age=0; HttpOnly; SameSite=Lax`;
      void reply.header('set-cookie', clearLoginCookie);
      const record = (successful: boolean, username: string, userId?: number, reason?: string) =>
        recordLogin(
          db,
          request,
          { username, userId, authType: 'oidc', successful, failureReason: reason },
          now(),
        );
      try {
        const identity = await logins.finish(settings, query, browserSecret);
        const user = await signInUser(db, settings, identity, (reason, notAllowed, username) => {
          throw new SsoRefusal(reason, notAllowed, username);
        });
        if (user.roleChanged) changes.changed();
        await record(true, user.email, user.id);
        await db.query('UPDATE users SET seen_at = $2 WHERE id = $1', [user.id, now()]);
        const secret = await sessions.create(user.id, 'oidc');
        return (
          reply
            // After the login cookie's clearing, set above.
            .header('set-cookie', sessionCookie(request, secret, sessionMaxAgeMs, path))
            .header('cache-control', 'no-store')
            .redirect(home, 302)
        );
      } catch (error) {
        if (error instanceof ProviderUnavailable) {
          request.log.warn(`single sign-on: ${error.message}`);
          await record(false, '', undefined, `provider unavailable: ${error.message}`);
          return refuse(request, reply, 'OIDC_PROVIDER_UNAVAILABLE', [error.message], home);
        }
        if (!(error instanceof SsoRefusal)) throw error;
        await record(false, error.username ?? '', undefined, error.reason);
        const code = error.notAllowed ? 'SSO_NOT_ALLOWED' : 'SSO_FAILED';
        return refuse(request, reply, code, [`Refused: ${error.reason}.`], home);
      }
    },
  );

  app.get(
    '/auth/oidc/signed-out',
    // It reads the provider's discovery document: not a way to make this server fetch at will.
    { config: { rateLimit } },
    async function authOidcSignedOut(request, reply) {
      const settings = await readSetting(db, 'oidc');
      const signedOut = new URL(`${home}signed-out`, publicUrl);
      let to: URL | undefined;
      if (settings.enabled && settings.enableSingleSignOut) {
        try {
          to = await logins.endSessionUrl(settings, signedOut);
        } catch (error) {
          request.log.warn(`single sign-out: ${(error as Error).message}`);
        }
      }
      if (to === undefined) return reply.redirect(signedOut.href, 302);
      // A page, not a redirect: the logout is a form post, and browsers hold the redirects of a
      // form post to the page's `form-action` (this server only).
      const href = escapeHtml(to.href);
      return reply
        .type('text/html; charset=utf-8')
        .header('cache-control', 'no-store')
        .header('content-security-policy', PAGE_CSP)
        .send(
          page(
            'Signing out',
            `<p>You are signed out here; ending the session at your identity provider too.</p><p><a href="${href}">Continue</a></p>`,
            `<meta http-equiv="refresh" content="0;url=${href}">`,
          ),
        );
    },
  );
}
