import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The credential in an OFREP event-stream URL. Browsers' `EventSource` sends no headers, so the
 * URL must authenticate by itself; it never carries the client key. It is
 * `<key id>.<scope>.<signature>`: the scope (environment, projects, the flag revision the bulk
 * answer was made from, expiry) in base64url JSON, signed with HMAC-SHA256 under a key derived
 * from the client key (`HMAC(clientKey, label)`), and the id of that derived key. Every proxy that
 * knows the client key derives the same signing key, so a fleet behind one load balancer accepts
 * each other's credentials without configuration. The key cannot be computed from the credential
 * (HMAC is one-way), but a weak key can be guessed offline against the signature, as against any
 * value derived from it: client keys should be long random strings.
 */

const SIGNING_LABEL = 'flags-proxy ofrep event stream v1';
const KEY_ID_LABEL = 'key id';
/** Longer query values are refused before any parsing. */
const MAX_CREDENTIAL_LENGTH = 4096;

/** What a credential lets its bearer hear of. */
export interface EventScope {
  readonly environment: string;
  /** `['*']`: every project. */
  readonly projects: readonly string[];
  /** The flag revision the bulk answer was made from (a stream opened later catches up). */
  readonly revision: string;
}

export type CredentialCheck =
  /** `key`: the client key or token the credential was issued to. */
  | { readonly ok: true; readonly scope: EventScope; readonly key: string }
  | { readonly ok: false; readonly reason: 'expired' | 'invalid' };

interface SigningKey {
  readonly id: string;
  readonly secret: Buffer;
  /** The client key it is derived from. */
  readonly clientKey: string;
}

function signingKey(clientKey: string): SigningKey {
  const secret = createHmac('sha256', clientKey).update(SIGNING_LABEL).digest();
  const id = createHmac('sha256', secret).update(KEY_ID_LABEL).digest('base64url').slice(0, 12);
  return { id, secret, clientKey };
}

function sign(secret: Buffer, text: string): Buffer {
  return createHmac('sha256', secret).update(text).digest();
}

export interface EventCredentialsOptions {
  /** The configured keys (client keys, pretrusted tokens): known from the start. */
  readonly keys: readonly string[];
  /** Least time a credential opens streams, ms; it stays the same for half of it. */
  readonly lifetimeMs: number;
  /** Keys learnt from requests (validated tokens) kept at most; the oldest is forgotten first. */
  readonly maxLearntKeys?: number;
}

/** Issues and checks event-stream credentials for the keys this proxy knows. */
export class EventCredentials {
  /** Derived signing keys by id: the configured keys and those seen on bulk requests. */
  private readonly byId = new Map<string, SigningKey>();
  private readonly byKey = new Map<string, SigningKey>();
  private readonly configured: number;

  constructor(private readonly options: EventCredentialsOptions) {
    // Set before learning them: eviction skips this many first entries.
    this.configured = new Set(options.keys).size;
    for (const key of options.keys) this.learn(key);
  }

  /** The length of one issuing window, ms: credentials issued within it are equal. */
  get windowMs(): number {
    return Math.max(1, Math.floor(this.options.lifetimeMs / 2));
  }

  /** The issuing window of `nowMs` (bulk ETags include it, so a new credential is a new answer). */
  window(nowMs: number): number {
    return Math.floor(nowMs / this.windowMs);
  }

  /**
   * The credential for `clientKey` and `scope`. Deterministic within a window, so a provider that
   * evaluates again gets the same URL and keeps its stream; it expires one lifetime after the
   * end of the window (a lifetime to one and a half from now).
   */
  issue(clientKey: string, scope: EventScope, nowMs = Date.now()): string {
    const key = this.learn(clientKey);
    const expiresSec = Math.ceil(((this.window(nowMs) + 3) * this.windowMs) / 1000);
    const body = Buffer.from(
      JSON.stringify({ e: scope.environment, p: scope.projects, r: scope.revision, x: expiresSec }),
    ).toString('base64url');
    const signed = `${key.id}.${body}`;
    return `${signed}.${sign(key.secret, signed).toString('base64url')}`;
  }

  /** Whether `credential` was issued by a proxy with a key this one knows, and is unexpired. */
  check(credential: unknown, nowMs = Date.now()): CredentialCheck {
    const invalid = { ok: false, reason: 'invalid' } as const;
    if (typeof credential !== 'string' || credential.length > MAX_CREDENTIAL_LENGTH) return invalid;
    const parts = credential.split('.');
    if (parts.length !== 3) return invalid;
    const [id, body, signature] = parts as [string, string, string];
    const signing = this.byId.get(id);
    if (signing === undefined) return invalid;
    const expected = sign(signing.secret, `${id}.${body}`);
    const given = Buffer.from(signature, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return invalid;
    const scope = parseScope(body);
    if (scope === undefined) return invalid;
    if (scope.expiresSec * 1000 <= nowMs) return { ok: false, reason: 'expired' };
    return {
      ok: true,
      scope: { environment: scope.environment, projects: scope.projects, revision: scope.revision },
      key: signing.clientKey,
    };
  }

  /** The signing key of `clientKey`, derived once and kept (learnt keys within the bound). */
  private learn(clientKey: string): SigningKey {
    let key = this.byKey.get(clientKey);
    if (key !== undefined) return key;
    key = signingKey(clientKey);
    const bound = this.configured + (this.options.maxLearntKeys ?? 10_000);
    if (this.byKey.size >= bound) {
      // Map order is insertion order: the first learnt key follows the configured ones.
      const entries = this.byKey.entries();
      for (let i = 0; i < this.configured; i++) entries.next();
      const oldest = entries.next().value;
      if (oldest !== undefined) {
        this.byKey.delete(oldest[0]);
        this.byId.delete(oldest[1].id);
      }
    }
    this.byKey.set(clientKey, key);
    this.byId.set(key.id, key);
    return key;
  }
}

function parseScope(body: string): (EventScope & { readonly expiresSec: number }) | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (raw === null || typeof raw !== 'object') return undefined;
  const { e, p, r, x } = raw as Record<string, unknown>;
  if (typeof e !== 'string' || typeof r !== 'string' || typeof x !== 'number') return undefined;
  if (!Array.isArray(p) || !p.every((project) => typeof project === 'string')) return undefined;
  return { environment: e, projects: p as string[], revision: r, expiresSec: x };
}
