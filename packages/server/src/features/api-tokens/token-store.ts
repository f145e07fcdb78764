import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Database, Queryable } from '../../db/database.js';
import { bumpTokenRevision, type RevisionTracker } from '../../revision.js';

export type TokenType = 'admin' | 'client';

export interface ApiToken {
  readonly secret: string;
  readonly tokenName: string;
  readonly type: TokenType;
  /** `null` for admin tokens (all environments). */
  readonly environment: string | null;
  /** `['*']` = every project. */
  readonly projects: readonly string[];
  readonly createdAt: Date;
  readonly expiresAt: Date | null;
}

interface TokenRow {
  secret: string;
  token_name: string;
  type: TokenType;
  environment: string | null;
  projects: string[];
  created_at: Date;
  expires_at: Date | null;
}

const toToken = (row: TokenRow): ApiToken =>
  Object.freeze({
    secret: row.secret,
    tokenName: row.token_name,
    type: row.type,
    environment: row.environment,
    projects: Object.freeze([...row.projects]),
    createdAt: new Date(row.created_at),
    expiresAt: row.expires_at ? new Date(row.expires_at) : null,
  });

/** The map key of a secret: its SHA-256, so a lookup compares digests, never the secret itself. */
const digest = (secret: string): string => createHash('sha256').update(secret).digest('base64');

/**
 * API tokens, kept in memory as a Map (keyed by the secret's digest) for the per-request lookup and reloaded whenever the token
 * revision moves (so a token created or deleted by another server process counts within the
 * revision check interval).
 */
export class TokenStore {
  private bySecret = new Map<string, ApiToken>();
  private loadedRevision = -1;
  private loading: Promise<void> | undefined;

  constructor(
    private readonly db: Database,
    private readonly revisions: RevisionTracker,
    private readonly now: () => Date,
  ) {}

  /** The token for `secret`, or undefined when unknown or expired. */
  async lookup(secret: string): Promise<ApiToken | undefined> {
    const revisions = await this.revisions.current();
    if (revisions.tokens !== this.loadedRevision) await this.reload(revisions.tokens);
    const token = this.bySecret.get(digest(secret));
    if (!token) return undefined;
    // The secret itself is only ever compared in constant time.
    const presented = Buffer.from(secret);
    const stored = Buffer.from(token.secret);
    if (presented.length !== stored.length || !timingSafeEqual(presented, stored)) return undefined;
    if (token.expiresAt && token.expiresAt.getTime() <= this.now().getTime()) return undefined;
    return token;
  }

  private reload(revision: number): Promise<void> {
    this.loading ??= (async () => {
      try {
        const rows = await this.db.query<TokenRow>('SELECT * FROM api_tokens');
        this.bySecret = new Map(rows.map((row) => [digest(row.secret), toToken(row)]));
        this.loadedRevision = revision;
      } finally {
        this.loading = undefined;
      }
    })();
    return this.loading;
  }

  async list(): Promise<ApiToken[]> {
    const rows = await this.db.query<TokenRow>(
      'SELECT * FROM api_tokens ORDER BY created_at, secret',
    );
    return rows.map(toToken);
  }

  /** Inserts a token unless its secret exists; returns the stored token. */
  async insert(
    token: Omit<ApiToken, 'createdAt'>,
    tx: Queryable = this.db,
  ): Promise<ApiToken | undefined> {
    const rows = await tx.query<TokenRow>(
      `INSERT INTO api_tokens (secret, token_name, type, environment, projects, expires_at)
       VALUES ($1, $2, $3, $4, $5::jsonb, $6)
       ON CONFLICT (secret) DO NOTHING
       RETURNING *`,
      [
        token.secret,
        token.tokenName,
        token.type,
        token.environment,
        JSON.stringify(token.projects),
        token.expiresAt,
      ],
    );
    if (rows[0]) await bumpTokenRevision(tx);
    return rows[0] ? toToken(rows[0]) : undefined;
  }

  async delete(secret: string): Promise<void> {
    await this.db.transaction(async (tx) => {
      const rows = await tx.query('DELETE FROM api_tokens WHERE secret = $1 RETURNING secret', [
        secret,
      ]);
      if (rows.length > 0) await bumpTokenRevision(tx);
    });
    this.revisions.invalidate();
  }

  changed(): void {
    this.revisions.invalidate();
  }
}

/** A new secret in the Unleash v1 form: `<projects>:<environment>.<56 hex characters>`. */
export function newSecret(projects: readonly string[], environment: string | null): string {
  const prefix = projects.length === 1 ? projects[0] : '[]';
  return `${prefix}:${environment ?? '*'}.${randomBytes(28).toString('hex')}`;
}
