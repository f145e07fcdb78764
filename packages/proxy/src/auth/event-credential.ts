import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * The credential in an OFREP event-stream URL. Browsers' `EventSource` sends no headers, so the
 * URL must authenticate by itself; it never carries the client key. It is
 * `<key id>.<scope>.<signature>`: the scope (environment, projects, the flag revision the bulk
 * answer was made from, expiry) in base64url JSON, signed with HMAC-SHA256 under a key derived
 * from the proxy's own secret (`ofrepEventSecret`), and an id of the client key it was issued to,
 * also derived from that secret. The client key is public (every browser holds it), so nothing
 * about signing may be derived from it alone: an earlier version did, and anyone holding the key
 * could mint credentials with any expiry (issue #40). Proxies with the same secret accept each
 * other's credentials; a credential whose expiry lies beyond what this proxy issues is refused.
 */

const SIGNING_LABEL = 'flags-proxy ofrep event stream v2';
const KEY_ID_LABEL = 'flags-proxy ofrep event key id v2';
const TOKEN_SECRET_LABEL = 'flags-proxy ofrep event secret from upstream tokens';
/** How far the clocks of proxies sharing a secret may disagree, ms (one issues, another checks). */
const CLOCK_SKEW_MS = 60_000;
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

/** A client key and its id in credentials. */
interface KnownKey {
  readonly id: string;
  readonly clientKey: string;
}

function sign(secret: Buffer, text: string): Buffer {
  return createHmac('sha256', secret).update(text).digest();
}

/**
 * The secret credentials are signed with: the configured one (`ofrepEventSecret`), else one
 * derived from the upstream tokens (secret from browsers, the same at every proxy configured
 * with them), else, with none of those, a random one of this process.
 */
export function signingSecretOf(
  configured: string | undefined,
  upstreamTokens: readonly string[],
): string {
  if (configured !== undefined) return configured;
  if (upstreamTokens.length === 0) return randomBytes(32).toString('hex');
  return createHmac('sha256', TOKEN_SECRET_LABEL)
    .update([...upstreamTokens].sort().join('\n'))
    .digest('hex');
}

export interface EventCredentialsOptions {
  /** The secret credentials are signed with (`signingSecretOf`); never sent to callers. */
  readonly secret: string;
  /** The configured keys (client keys, pretrusted tokens): known from the start. */
  readonly keys: readonly string[];
  /** Least time a credential opens streams, ms; it stays the same for half of it. */
  readonly lifetimeMs: number;
  /** Keys learnt from requests (validated tokens) kept at most; the oldest is forgotten first. */
  readonly maxLearntKeys?: number;
}

/** Issues and checks event-stream credentials for the keys this proxy knows. */
export class EventCredentials {
  /** Client keys by id: the configured keys and those seen on bulk requests. */
  private readonly byId = new Map<string, KnownKey>();
  private readonly byKey = new Map<string, KnownKey>();
  private readonly configured: number;
  private readonly signing: Buffer;
  private readonly keyIds: Buffer;

  constructor(private readonly options: EventCredentialsOptions) {
    this.signing = createHmac('sha256', options.secret).update(SIGNING_LABEL).digest();
    this.keyIds = createHmac('sha256', options.secret).update(KEY_ID_LABEL).digest();
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
    return `${signed}.${sign(this.signing, signed).toString('base64url')}`;
  }

  /**
   * Whether `credential` was signed with this proxy's secret for a key it knows, is unexpired, and
   * expires no later than one it issues now would (a lifetime and a half, rounded up to the
   * second), give or take `CLOCK_SKEW_MS`: a longer one was not made by `issue` under this
   * configuration.
   */
  check(credential: unknown, nowMs = Date.now()): CredentialCheck {
    const invalid = { ok: false, reason: 'invalid' } as const;
    if (typeof credential !== 'string' || credential.length > MAX_CREDENTIAL_LENGTH) return invalid;
    const parts = credential.split('.');
    if (parts.length !== 3) return invalid;
    const [id, body, signature] = parts as [string, string, string];
    const known = this.byId.get(id);
    if (known === undefined) return invalid;
    const expected = sign(this.signing, `${id}.${body}`);
    const given = Buffer.from(signature, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return invalid;
    const scope = parseScope(body);
    if (scope === undefined) return invalid;
    if (scope.expiresSec * 1000 <= nowMs) return { ok: false, reason: 'expired' };
    if (scope.expiresSec * 1000 > nowMs + 3 * this.windowMs + 1000 + CLOCK_SKEW_MS) return invalid;
    return {
      ok: true,
      scope: { environment: scope.environment, projects: scope.projects, revision: scope.revision },
      key: known.clientKey,
    };
  }

  /** The id of `clientKey`, made once and kept (learnt keys within the bound). */
  private learn(clientKey: string): KnownKey {
    let key = this.byKey.get(clientKey);
    if (key !== undefined) return key;
    key = {
      id: sign(this.keyIds, clientKey).toString('base64url').slice(0, 12),
      clientKey,
    };
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
