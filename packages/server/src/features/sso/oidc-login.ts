import { randomBytes } from 'node:crypto';
import * as oidc from 'openid-client';
import { hashSecret } from '../../auth/secrets.js';
import type { Queryable } from '../../db/database.js';
import { isLoopbackUrl, type OidcSettings } from './oidc-settings.js';

/** How long a login may take at the provider, from `/auth/oidc/login` to the callback. */
export const OIDC_LOGIN_TTL_MS = 10 * 60_000;

/** How long a request to the provider (discovery, key set, token, user info) may take, s. */
const PROVIDER_TIMEOUT_S = 10;

/**
 * A sign-in refused, and why in words an Admin reads in the login history; `notAllowed` when the
 * provider signed the person in but this server does not let them in (403, not 401).
 */
export class SsoRefusal extends Error {
  constructor(
    readonly reason: string,
    readonly notAllowed = false,
    /** The user it concerns, when known. */
    readonly username?: string,
  ) {
    super(reason);
  }
}

/** The provider could not be reached or answered nonsense: nobody's fault but the setup's. */
export class ProviderUnavailable extends Error {}

/** Who the provider signed in, from the ID token (and the user info where it lacks something). */
export interface OidcIdentity {
  readonly subject: string;
  readonly email: string | undefined;
  readonly emailVerified: boolean | undefined;
  readonly name: string | undefined;
  /** The groups claim at `groupJsonPath`; undefined when there is none. */
  readonly groups: readonly string[] | undefined;
}

/** The callback URL the provider sends the browser back to (register it at the provider). */
export function callbackUrl(publicUrl: URL): URL {
  const base = publicUrl.href.endsWith('/') ? publicUrl.href : `${publicUrl.href}/`;
  return new URL('auth/oidc/callback', base);
}

/** The provider's configuration, read from its discovery document (at each sign-in). */
async function discover(settings: OidcSettings): Promise<oidc.Configuration> {
  const url = new URL(settings.discoverUrl);
  const execute =
    isLoopbackUrl(url) && url.protocol === 'http:' ? [oidc.allowInsecureRequests] : [];
  try {
    const config = await oidc.discovery(
      url,
      settings.clientId,
      { id_token_signed_response_alg: settings.idTokenSigningAlgorithm },
      oidc.ClientSecretPost(settings.secret),
      { execute, timeout: PROVIDER_TIMEOUT_S },
    );
    // The ID token's signature is checked against the provider's key set too (openid-client
    // leaves it out for tokens from the token endpoint over TLS; this server checks anyway).
    // A Configuration is made per sign-in, so the key set is read fresh: a rotated key works at once.
    oidc.enableNonRepudiationChecks(config);
    return config;
  } catch (error) {
    throw new ProviderUnavailable(
      `the discovery document at ${settings.discoverUrl} could not be read: ${messageOf(error)}`,
    );
  }
}

function messageOf(error: unknown): string {
  if (error instanceof Error) {
    const { error: code, error_description: description } = error as {
      error?: string;
      error_description?: string;
    };
    if (code !== undefined) return description ? `${code} (${description})` : code;
    const cause = (error as { cause?: unknown }).cause;
    return cause instanceof Error && error.message.includes('fetch failed')
      ? `${error.message}: ${cause.message}`
      : error.message;
  }
  return String(error);
}

/** The value at a dotted `path` (`realm_access.roles`; a leading `$.` is allowed) of `claims`. */
export function claimAt(claims: Record<string, unknown>, path: string): unknown {
  const parts = path
    .replace(/^\$\.?/, '')
    .split('.')
    .filter(Boolean);
  let value: unknown = claims;
  for (const part of parts) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return parts.length === 0 ? undefined : value;
}

/** A groups claim as names: an array of strings, or one string. */
function groupNames(value: unknown): string[] | undefined {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.filter((entry) => typeof entry === 'string');
  return undefined;
}

/**
 * OpenID Connect sign-ins with `openid-client`: the authorization code flow with PKCE, `state`
 * and `nonce`. A started sign-in is a row in `oidc_logins` (by its state's hash), bound to the
 * browser that started it by a random value in a cookie; the callback takes the row once.
 */
export class OidcLogins {
  constructor(
    private readonly db: Queryable,
    private readonly publicUrl: URL,
    private readonly now: () => Date,
  ) {}

  /**
   * Starts a sign-in: returns the provider's authorization URL to send the browser to and the
   * secret for the browser's login cookie.
   */
  async start(settings: OidcSettings): Promise<{ url: URL; browserSecret: string }> {
    const config = await discover(settings);
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const codeVerifier = oidc.randomPKCECodeVerifier();
    const browserSecret = randomBytes(32).toString('base64url');
    const at = this.now();
    // Sign-ins never finished are deleted here, as ended sessions are at each login.
    await this.db.query('DELETE FROM oidc_logins WHERE expires_at <= $1', [at]);
    await this.db.query(
      `INSERT INTO oidc_logins (state_hash, browser_hash, nonce, code_verifier, created_at, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6)`,
      [
        hashSecret(state),
        hashSecret(browserSecret),
        nonce,
        codeVerifier,
        at,
        new Date(at.getTime() + OIDC_LOGIN_TTL_MS),
      ],
    );
    const scope = settings.addGroupsScope ? 'openid email profile groups' : 'openid email profile';
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: callbackUrl(this.publicUrl).href,
      response_type: 'code',
      scope,
      state,
      nonce,
      code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
    });
    return { url, browserSecret };
  }

  /**
   * Ends a sign-in at the callback: `query` is the callback's query string, `browserSecret` the
   * login cookie's value. Checks the state (known, unused, unexpired, this browser's), redeems the
   * code with the PKCE verifier, and has openid-client check the ID token: signature against the
   * provider's key set, issuer, audience, expiry, nonce. Throws `SsoRefusal` with the reason.
   */
  async finish(
    settings: OidcSettings,
    query: URLSearchParams,
    browserSecret: string | undefined,
  ): Promise<OidcIdentity> {
    const state = query.get('state');
    // Taken whatever comes next: a state, and the code with it, are used once.
    const [row] =
      state === null
        ? []
        : await this.db.query<{
            browser_hash: string;
            nonce: string;
            code_verifier: string;
            expires_at: Date | string;
          }>(
            `DELETE FROM oidc_logins WHERE state_hash = $1
             RETURNING browser_hash, nonce, code_verifier, expires_at`,
            [hashSecret(state)],
          );
    const providerError = query.get('error');
    if (providerError !== null) {
      const description = query.get('error_description');
      throw new SsoRefusal(
        `the provider refused: ${providerError}${description ? ` (${description})` : ''}`,
      );
    }
    if (state === null) throw new SsoRefusal('the callback has no state');
    if (!row)
      throw new SsoRefusal('unknown or already used state (a changed or replayed callback)');
    if (new Date(row.expires_at).getTime() <= this.now().getTime()) {
      throw new SsoRefusal('the sign-in took longer than 10 minutes at the provider');
    }
    if (browserSecret === undefined || hashSecret(browserSecret) !== row.browser_hash) {
      throw new SsoRefusal(
        'the sign-in was started in another browser (no or another login cookie)',
      );
    }
    const config = await discover(settings);
    const current = callbackUrl(this.publicUrl);
    current.search = query.toString();
    let tokens: Awaited<ReturnType<typeof oidc.authorizationCodeGrant>>;
    try {
      tokens = await oidc.authorizationCodeGrant(config, current, {
        pkceCodeVerifier: row.code_verifier,
        expectedState: state,
        expectedNonce: row.nonce,
        idTokenExpected: true,
      });
    } catch (error) {
      throw new SsoRefusal(`the code or the ID token was refused: ${messageOf(error)}`);
    }
    const claims = tokens.claims() as Record<string, unknown> | undefined;
    if (!claims) throw new SsoRefusal('the provider sent no ID token');
    const subject = String(claims.sub);
    const wantsGroups = settings.enableGroupSyncing && settings.groupJsonPath !== '';
    let merged = claims;
    const lacking =
      typeof claims.email !== 'string' ||
      (wantsGroups && claimAt(claims, settings.groupJsonPath) === undefined);
    if (lacking && config.serverMetadata().userinfo_endpoint && tokens.access_token) {
      try {
        const info = await oidc.fetchUserInfo(config, tokens.access_token, subject);
        // The ID token's claims win; the user info fills in what it lacks.
        merged = { ...(info as Record<string, unknown>), ...claims };
      } catch (error) {
        throw new SsoRefusal(`the provider's user info could not be read: ${messageOf(error)}`);
      }
    }
    const email = typeof merged.email === 'string' ? merged.email.trim() : undefined;
    return {
      subject,
      email: email || undefined,
      emailVerified: typeof merged.email_verified === 'boolean' ? merged.email_verified : undefined,
      name: typeof merged.name === 'string' ? merged.name : undefined,
      groups: wantsGroups ? groupNames(claimAt(merged, settings.groupJsonPath)) : undefined,
    };
  }

  /**
   * Where a browser goes to end its session at the provider too (`end_session_endpoint`, then back
   * to `returnTo`); undefined when the provider has none.
   */
  async endSessionUrl(settings: OidcSettings, returnTo: URL): Promise<URL | undefined> {
    const config = await discover(settings);
    if (!config.serverMetadata().end_session_endpoint) return undefined;
    return oidc.buildEndSessionUrl(config, { post_logout_redirect_uri: returnTo.href });
  }
}
