import { randomBytes } from 'node:crypto';
import type { ApiTokenType } from '@flags/schemas';
import { hashSecret, idFromKey } from '../../auth/secrets.js';
import { maskToken } from '../../config/load.js';
import { isDatabaseUnreachable } from '../../db/availability.js';
import type { Database, Queryable } from '../../db/database.js';
import { bumpTokenRevision, type RevisionTracker } from '../../revision.js';

export type TokenType = ApiTokenType;

/**
 * Who created a token: configuration (`FLAGS_*_TOKENS`, kept in step at start; the token's type
 * names the variable) or the admin API.
 */
export type TokenSource = 'config' | 'api';

/** A stored API token. Its secret is not part of it: only the secret's hash is stored. */
export interface ApiToken {
  /** Names the token on admin routes once its secret is no longer shown. */
  readonly id: number;
  /** The secret as lists show it: `project:environment.ab12…` (see `maskToken`). */
  readonly masked: string;
  readonly tokenName: string;
  readonly type: TokenType;
  /** `null` for admin tokens (all environments); client and frontend tokens have one. */
  readonly environment: string | null;
  /** `['*']` = every project. */
  readonly projects: readonly string[];
  readonly createdAt: Date;
  readonly expiresAt: Date | null;
  readonly source: TokenSource;
}

/** A token to store, with its secret (which is hashed, never stored). */
export interface NewApiToken {
  readonly secret: string;
  readonly tokenName: string;
  readonly type: TokenType;
  readonly environment: string | null;
  readonly projects: readonly string[];
  readonly expiresAt: Date | null;
  readonly source: TokenSource;
}

interface TokenRow {
  id: number;
  secret_hash: string;
  secret_masked: string;
  token_name: string;
  type: TokenType;
  environment: string | null;
  projects: string[];
  created_at: Date;
  expires_at: Date | null;
  source: TokenSource;
}

const COLUMNS = `id, secret_hash, secret_masked, token_name, type, environment, projects, created_at,
  expires_at, source`;

const toToken = (row: TokenRow): ApiToken =>
  Object.freeze({
    id: row.id,
    masked: row.secret_masked,
    tokenName: row.token_name,
    type: row.type,
    environment: row.environment,
    projects: Object.freeze([...row.projects]),
    createdAt: new Date(row.created_at),
    expiresAt: row.expires_at ? new Date(row.expires_at) : null,
    source: row.source,
  });

/** Presented secrets remembered with their token at most (then forgotten all at once). */
const MAX_REMEMBERED_SECRETS = 10_000;

/**
 * API tokens, kept in memory as a Map keyed by the secret's hash for the per-request lookup, and
 * reloaded whenever the token revision moves (so a token created or deleted by another server
 * process counts within the revision check interval).
 */
export class TokenStore {
  private byHash = new Map<string, ApiToken>();
  /**
   * The secrets that named a token since the last reload: a client polling with its token is
   * answered without hashing it again (a SHA-256 per request was the lookup's whole cost). Only
   * matches are kept, so unknown secrets cannot grow it; the database still holds hashes only.
   */
  private bySecret = new Map<string, ApiToken>();
  private loadedRevision = -1;
  private loading: Promise<void> | undefined;

  constructor(
    private readonly db: Database,
    private readonly revisions: RevisionTracker,
    private readonly now: () => Date,
  ) {}

  /**
   * The token for `secret`, or undefined when unknown or expired. The presented secret is hashed
   * once and looked up by its hash: no stored secret exists to compare against, and the timing of
   * a Map lookup tells nothing about the secret (an attacker would have to choose inputs by their
   * SHA-256), so no constant-time comparison is needed.
   */
  async lookup(secret: string): Promise<ApiToken | undefined> {
    await this.fresh();
    return this.find(secret);
  }

  /** `lookup` for each secret, against one view of the tokens (same order, same rules). */
  async lookupAll(secrets: readonly string[]): Promise<(ApiToken | undefined)[]> {
    await this.fresh();
    return secrets.map((secret) => this.find(secret));
  }

  private async fresh(): Promise<void> {
    const revisions = await this.revisions.current();
    if (revisions.tokens === this.loadedRevision) return;
    try {
      await this.reload(revisions.tokens);
    } catch (error) {
      // Database unreachable: the last token set loaded keeps answering (issue 18).
      if (this.loadedRevision < 0 || !isDatabaseUnreachable(error)) throw error;
    }
  }

  private find(secret: string): ApiToken | undefined {
    let token = this.bySecret.get(secret);
    if (!token) {
      token = this.byHash.get(hashSecret(secret));
      if (!token) return undefined;
      if (this.bySecret.size >= MAX_REMEMBERED_SECRETS) this.bySecret.clear();
      this.bySecret.set(secret, token);
    }
    if (token.expiresAt && token.expiresAt.getTime() <= this.now().getTime()) return undefined;
    return token;
  }

  private reload(revision: number): Promise<void> {
    this.loading ??= (async () => {
      try {
        const rows = await this.db.query<TokenRow>(`SELECT ${COLUMNS} FROM api_tokens`);
        this.byHash = new Map(rows.map((row) => [row.secret_hash, toToken(row)]));
        this.bySecret = new Map();
        this.loadedRevision = revision;
      } finally {
        this.loading = undefined;
      }
    })();
    return this.loading;
  }

  async list(): Promise<ApiToken[]> {
    const rows = await this.db.query<TokenRow>(
      `SELECT ${COLUMNS} FROM api_tokens ORDER BY created_at, id`,
    );
    return rows.map(toToken);
  }

  /** Inserts a token unless its secret exists; returns the stored token. */
  async insert(token: NewApiToken, tx: Queryable = this.db): Promise<ApiToken | undefined> {
    const rows = await tx.query<TokenRow>(
      `INSERT INTO api_tokens
         (secret_hash, secret_masked, token_name, type, environment, projects, expires_at, source)
       VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8)
       ON CONFLICT (secret_hash) DO NOTHING
       RETURNING ${COLUMNS}`,
      [
        hashSecret(token.secret),
        maskToken(token.secret),
        token.tokenName,
        token.type,
        token.environment,
        JSON.stringify(token.projects),
        token.expiresAt,
        token.source,
      ],
    );
    if (rows[0]) await bumpTokenRevision(tx);
    return rows[0] ? toToken(rows[0]) : undefined;
  }

  /**
   * Brings the tokens created from configuration in step with `configured`, kind by kind (a
   * token's type names the variable that created it): for each type in `governed` (its variable
   * is set), deletes the configured tokens of that type whose secret it no longer lists, then
   * inserts the missing ones. A type not governed keeps every token, so a server started without
   * a variable cannot revoke what another server sharing the database was configured with
   * (issue 47). Tokens created through the API are left alone.
   */
  async syncConfigured(
    configured: readonly NewApiToken[],
    governed: readonly TokenType[],
    tx: Queryable,
  ): Promise<{ created: ApiToken[]; deleted: ApiToken[] }> {
    // Deleted first, so that a secret moved to another variable is created anew as its new type.
    const rows = await tx.query<TokenRow>(
      `DELETE FROM api_tokens
        WHERE source = 'config'
          AND type IN (SELECT jsonb_array_elements_text($1::jsonb))
          AND type || ':' || secret_hash NOT IN (SELECT jsonb_array_elements_text($2::jsonb))
        RETURNING ${COLUMNS}`,
      [
        JSON.stringify(governed),
        JSON.stringify(configured.map((token) => `${token.type}:${hashSecret(token.secret)}`)),
      ],
    );
    if (rows.length > 0) await bumpTokenRevision(tx);
    const created: ApiToken[] = [];
    for (const token of configured) {
      const stored = await this.insert({ ...token, source: 'config' }, tx);
      if (stored) created.push(stored);
    }
    return { created, deleted: rows.map(toToken) };
  }

  /**
   * Deletes the token named by `key` (its secret or its id, see `idFromKey`) in the caller's
   * transaction; the deleted token, or undefined when there was none. Call `changed` after the
   * commit.
   */
  async delete(key: string, tx: Queryable): Promise<ApiToken | undefined> {
    const id = idFromKey(key) ?? null;
    const [row] = await tx.query<TokenRow>(
      `DELETE FROM api_tokens
        WHERE secret_hash = $1
           OR (id = $2 AND NOT EXISTS (SELECT 1 FROM api_tokens WHERE secret_hash = $1))
        RETURNING ${COLUMNS}`,
      [hashSecret(key), id],
    );
    if (!row) return undefined;
    await bumpTokenRevision(tx);
    return toToken(row);
  }

  /**
   * Sets the expiry of the token named by `key` (its secret or its id); the token before and
   * after, or `undefined` when there is none.
   */
  async setExpiry(
    key: string,
    expiresAt: Date,
    tx: Queryable,
  ): Promise<{ before: ApiToken; after: ApiToken } | undefined> {
    const id = idFromKey(key) ?? null;
    const [found] = await tx.query<TokenRow>(
      `SELECT ${COLUMNS} FROM api_tokens
        WHERE secret_hash = $1
           OR (id = $2 AND NOT EXISTS (SELECT 1 FROM api_tokens WHERE secret_hash = $1))
        FOR UPDATE`,
      [hashSecret(key), id],
    );
    if (!found) return undefined;
    const [updated] = await tx.query<TokenRow>(
      `UPDATE api_tokens SET expires_at = $2 WHERE id = $1 RETURNING ${COLUMNS}`,
      [found.id, expiresAt],
    );
    await bumpTokenRevision(tx);
    return { before: toToken(found), after: toToken(updated!) };
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
