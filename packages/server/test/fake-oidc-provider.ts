import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type CryptoKey, exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';

/** What is wrong with the ID token the fake provider sends (`none`: nothing). */
export type IdTokenFault = 'none' | 'wrong-nonce' | 'other-key' | 'other-audience' | 'expired';

interface SigningKey {
  readonly kid: string;
  readonly privateKey: CryptoKey;
  readonly jwk: JWK;
}

async function signingKey(kid: string): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  return {
    kid,
    privateKey,
    jwk: { ...(await exportJWK(publicKey)), kid, use: 'sig', alg: 'RS256' },
  };
}

/** A sign-in the fake provider will answer at its token endpoint for `code`. */
export interface PreparedSignIn {
  readonly code: string;
  readonly nonce: string;
  readonly email: string;
  readonly groups?: readonly string[];
}

/**
 * A provider of a few lines (discovery, key set, token endpoint) that signs ID tokens with `jose`
 * and can get one wrong on purpose (`fault`): the cases a certified provider never produces. No
 * login page: the test takes `state` and `nonce` from the authorization URL and calls the
 * callback itself.
 */
export class FakeOidcProvider {
  fault: IdTokenFault = 'none';
  private server: Server | undefined;
  private key!: SigningKey;
  private stranger!: SigningKey;
  private generation = 0;
  private readonly prepared = new Map<string, PreparedSignIn>();
  /** Key-set reads so far. */
  jwksReads = 0;

  constructor(
    readonly clientId: string,
    private readonly secret: string,
  ) {}

  issuer = '';

  get discoverUrl(): string {
    return `${this.issuer}/.well-known/openid-configuration`;
  }

  async start(): Promise<void> {
    this.key = await signingKey(`key-${this.generation}`);
    this.stranger = await signingKey(`key-${this.generation}`);
    const server = createServer((request, response) => {
      void this.answer(request.method ?? 'GET', request.url ?? '/', request).then(
        ({ status, body }) => {
          response.writeHead(status, { 'content-type': 'application/json' });
          response.end(JSON.stringify(body));
        },
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    this.server = server;
  }

  /** A new signing key; the key set lists only it (the old key is gone). */
  async rotate(): Promise<void> {
    this.generation += 1;
    this.key = await signingKey(`key-${this.generation}`);
  }

  prepare(signIn: PreparedSignIn): void {
    this.prepared.set(signIn.code, signIn);
  }

  private async answer(
    method: string,
    url: string,
    request: AsyncIterable<Buffer>,
  ): Promise<{ status: number; body: unknown }> {
    const path = new URL(url, this.issuer).pathname;
    if (path === '/.well-known/openid-configuration') {
      return {
        status: 200,
        body: {
          issuer: this.issuer,
          authorization_endpoint: `${this.issuer}/authorize`,
          token_endpoint: `${this.issuer}/token`,
          jwks_uri: `${this.issuer}/jwks`,
          end_session_endpoint: `${this.issuer}/logout`,
          response_types_supported: ['code'],
          subject_types_supported: ['public'],
          id_token_signing_alg_values_supported: ['RS256'],
          code_challenge_methods_supported: ['S256'],
        },
      };
    }
    if (path === '/jwks') {
      this.jwksReads += 1;
      return { status: 200, body: { keys: [this.key.jwk] } };
    }
    if (path === '/token' && method === 'POST') {
      let text = '';
      for await (const chunk of request) text += chunk.toString();
      const form = new URLSearchParams(text);
      const signIn = this.prepared.get(form.get('code') ?? '');
      this.prepared.delete(form.get('code') ?? '');
      if (
        !signIn ||
        form.get('client_id') !== this.clientId ||
        form.get('client_secret') !== this.secret ||
        !form.get('code_verifier')
      ) {
        return { status: 400, body: { error: 'invalid_grant' } };
      }
      return {
        status: 200,
        body: { access_token: 'fake', token_type: 'Bearer', id_token: await this.idToken(signIn) },
      };
    }
    return { status: 404, body: { error: 'not_found' } };
  }

  private async idToken(signIn: PreparedSignIn): Promise<string> {
    const nowS = Math.floor(Date.now() / 1000);
    const fault = this.fault;
    const key = fault === 'other-key' ? this.stranger : this.key;
    return new SignJWT({
      email: signIn.email,
      email_verified: true,
      nonce: fault === 'wrong-nonce' ? 'another-nonce' : signIn.nonce,
      ...(signIn.groups ? { groups: [...signIn.groups] } : {}),
    })
      .setProtectedHeader({ alg: 'RS256', kid: key.kid })
      .setIssuer(this.issuer)
      .setSubject(signIn.email)
      .setAudience(fault === 'other-audience' ? 'another-client' : this.clientId)
      .setIssuedAt(fault === 'expired' ? nowS - 7200 : nowS)
      .setExpirationTime(fault === 'expired' ? nowS - 3600 : nowS + 300)
      .sign(key.privateKey);
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
