import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider, { type JWK, type KoaContextWithOIDC } from 'oidc-provider';

/** A person the test provider signs in: the login typed on its page is the key of the table. */
export interface TestAccount {
  email: string;
  emailVerified?: boolean;
  name?: string;
  groups: string[];
}

/** A private RSA signing key (RS256) with its own `kid`, as a provider's key set holds it. */
export function rsaSigningKey(): JWK {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    ...(privateKey.export({ format: 'jwk' }) as JWK),
    kid: randomBytes(6).toString('hex'),
    use: 'sig',
    alg: 'RS256',
  };
}

export interface TestProviderOptions {
  readonly clientId: string;
  readonly secret: string;
  /** This server's callback, `…/auth/oidc/callback`. */
  readonly redirectUri: string;
  /** Where the provider may send a browser after its logout. */
  readonly postLogoutRedirectUri: string;
  /** The test's account table; the test changes it between sign-ins (groups). */
  readonly accounts: Map<string, TestAccount>;
}

/**
 * oidc-provider (a certified OpenID provider) in the test's process on a free loopback port, with
 * its development login page (any password), one client, consent given in advance, and the
 * `email`, `profile` and `groups` claims in the ID token. `rotate` restarts it on the same port
 * with a new signing key first in its key set, the old one still listed.
 */
export class TestOidcProvider {
  private server: Server | undefined;
  private port = 0;
  keys: JWK[] = [rsaSigningKey()];

  constructor(private readonly options: TestProviderOptions) {}

  get issuer(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get discoverUrl(): string {
    return `${this.issuer}/.well-known/openid-configuration`;
  }

  async start(): Promise<void> {
    const { clientId, secret, redirectUri, postLogoutRedirectUri, accounts } = this.options;
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as AddressInfo).port;
    const provider = new Provider(this.issuer, {
      clients: [
        {
          client_id: clientId,
          client_secret: secret,
          redirect_uris: [redirectUri],
          post_logout_redirect_uris: [postLogoutRedirectUri],
          grant_types: ['authorization_code'],
          response_types: ['code'],
          token_endpoint_auth_method: 'client_secret_post',
        },
      ],
      jwks: { keys: this.keys },
      cookies: { keys: ['test-provider-cookie-key'] },
      claims: {
        openid: ['sub'],
        email: ['email', 'email_verified'],
        profile: ['name'],
        groups: ['groups'],
      },
      scopes: ['openid', 'email', 'profile', 'groups'],
      // The claims go into the ID token itself, as most company providers send them.
      conformIdTokenClaims: false,
      features: { devInteractions: { enabled: true }, rpInitiatedLogout: { enabled: true } },
      async findAccount(_ctx: unknown, id: string) {
        const account = accounts.get(id);
        if (!account) return undefined;
        return {
          accountId: id,
          async claims() {
            return {
              sub: id,
              email: account.email,
              email_verified: account.emailVerified ?? true,
              name: account.name ?? id,
              groups: [...account.groups],
            };
          },
        };
      },
      // Consent is given in advance, as a company's provider does for its own applications.
      async loadExistingGrant(ctx: KoaContextWithOIDC) {
        const { oidc } = ctx;
        const grantId =
          oidc.result?.consent?.grantId ?? oidc.session!.grantIdFor(oidc.client!.clientId);
        if (grantId) return oidc.provider.Grant.find(grantId);
        const grant = new oidc.provider.Grant({
          clientId: oidc.client!.clientId,
          accountId: oidc.session!.accountId!,
        });
        grant.addOIDCScope('openid email profile groups');
        await grant.save();
        return grant;
      },
    });
    const handle = provider.callback();
    // No connection outlives a request: a restarted provider (`rotate`) is reached afresh.
    server.on('request', (request, response) => {
      response.setHeader('connection', 'close');
      handle(request, response);
    });
    this.server = server;
  }

  /** Restarts with a new signing key first; the old ones stay listed. */
  async rotate(): Promise<void> {
    this.keys = [rsaSigningKey(), ...this.keys];
    await this.stop();
    await this.start();
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/**
 * A browser's way through the provider without a browser: from the authorization URL, signs in
 * as `login` on its development page and returns where it sends the browser back (the
 * callback URL with `code` and `state`).
 */
export async function signInAtProvider(authorizationUrl: string, login: string): Promise<URL> {
  const cookies = new Map<string, string>();
  const keep = (response: Response) => {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const equals = pair!.indexOf('=');
      cookies.set(pair!.slice(0, equals), pair!.slice(equals + 1));
    }
  };
  const cookie = () => [...cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  let url = new URL(authorizationUrl);
  for (let hop = 0; hop < 10; hop++) {
    const response = await fetch(url, { redirect: 'manual', headers: { cookie: cookie() } });
    keep(response);
    const location = response.headers.get('location');
    if (response.status >= 300 && response.status < 400 && location) {
      const next = new URL(location, url);
      if (next.origin !== url.origin || next.pathname.endsWith('/auth/oidc/callback')) {
        return next;
      }
      url = next;
      continue;
    }
    const page = await response.text();
    if (!url.pathname.startsWith('/interaction/')) {
      throw new Error(`the provider answered ${response.status} at ${url.pathname}: ${page}`);
    }
    const submitted = await fetch(url, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: cookie(), 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ prompt: 'login', login, password: 'any' }).toString(),
    });
    keep(submitted);
    url = new URL(submitted.headers.get('location')!, url);
  }
  throw new Error('the provider never sent the browser back');
}
