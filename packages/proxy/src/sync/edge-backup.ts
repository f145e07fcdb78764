import type { ClientFeatures } from '@flags/schemas';
import type { TokenRecord } from '../auth/token-validator.js';
import type { TokenType } from '../auth/unleash-token.js';
import type { Logger } from '../config/options.js';

/**
 * Unleash Edge's backups, read at start when none of ours is there, so a proxy replacing Edge
 * while the upstream is down serves Edge's last flags and knows the tokens Edge had validated.
 *
 * Edge writes two documents to whichever store it was given, under fixed names:
 * - features: `[[cacheKey, ClientFeatures], …]`, one pair per environment (the key is the
 *   environment of the tokens that fetched it; all their projects in one payload);
 * - tokens: `[{token, type, environment, projects, status}, …]`, the tokens it had validated
 *   (`type` `backend`/`client` or `frontend`, `status` `Validated`).
 */
export type EdgeData = 'features' | 'tokens';

/** Edge's file names in its backup folder (`BACKUP_FOLDER`). */
export const EDGE_FILES: Readonly<Record<EdgeData, string>> = {
  features: 'unleash_features.json',
  tokens: 'unleash_tokens.json',
};

/** Edge's Redis keys (no prefix). */
export const EDGE_REDIS_KEYS: Readonly<Record<EdgeData, string>> = {
  features: 'unleash-features',
  tokens: 'unleash-tokens',
};

/**
 * Edge's S3 object names. Edge names them with a leading `/`; the name without it is read too,
 * in case the object was stored (or copied) under that one.
 */
export const EDGE_S3_OBJECTS: Readonly<Record<EdgeData, readonly string[]>> = {
  features: ['/unleash-features.json', 'unleash-features.json'],
  tokens: ['/unleash-tokens.json', 'unleash-tokens.json'],
};

/** A backup store that can also read what Edge wrote to it: the document's text, if there. */
export interface EdgeBackupSource {
  readEdge(data: EdgeData): Promise<string | undefined>;
}

export function isEdgeBackupSource(value: unknown): value is EdgeBackupSource {
  return typeof (value as Partial<EdgeBackupSource> | undefined)?.readEdge === 'function';
}

/** Edge's token types as ours (`client` and `backend` are Edge's names of one type). */
const EDGE_TOKEN_TYPES: Readonly<Record<string, TokenType>> = {
  backend: 'client',
  client: 'client',
  frontend: 'frontend',
};

/** The payload of each environment in Edge's features document; malformed entries are skipped. */
export function edgeFeatures(document: unknown): Map<string, unknown> {
  const payloads = new Map<string, unknown>();
  if (!Array.isArray(document)) return payloads;
  for (const entry of document) {
    if (!Array.isArray(entry) || entry.length !== 2 || typeof entry[0] !== 'string') continue;
    payloads.set(entry[0], entry[1]);
  }
  return payloads;
}

/**
 * Edge's validated tokens as our token records, checked when Edge's backup was read (Edge keeps
 * no time); revalidation asks the upstream about them again as about any other.
 */
export function edgeTokenRecords(document: unknown, checkedAt: number): TokenRecord[] {
  if (!Array.isArray(document)) return [];
  return document.flatMap((entry): TokenRecord[] => {
    const token = entry as Record<string, unknown> | null;
    const type = EDGE_TOKEN_TYPES[String(token?.type).toLowerCase()];
    const projects = token?.projects;
    if (
      typeof token?.token !== 'string' ||
      type === undefined ||
      typeof token.environment !== 'string' ||
      // Edge leaves the status out only where it means `Validated` (its default).
      (token.status !== undefined && token.status !== 'Validated') ||
      !Array.isArray(projects) ||
      !projects.every((project) => typeof project === 'string')
    )
      return [];
    const info = { token: token.token, type, environment: token.environment, projects };
    return [{ token: token.token, status: 'valid', info, checkedAt }];
  });
}

/** Edge's backup in one store, each document read (and parsed) at most once per start. */
export class EdgeBackup {
  private readonly documents = new Map<EdgeData, Promise<unknown>>();

  constructor(
    private readonly source: EdgeBackupSource,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  /** The payload Edge saved for `environment`, if any (checked by the caller as any backup). */
  async features(environment: string): Promise<ClientFeatures | undefined> {
    return edgeFeatures(await this.document('features')).get(environment) as
      | ClientFeatures
      | undefined;
  }

  /** The tokens Edge had validated, if any. */
  async tokens(): Promise<TokenRecord[]> {
    return edgeTokenRecords(await this.document('tokens'), this.now());
  }

  /** The parsed document, or `undefined` when absent or unreadable (logged: never fatal). */
  private document(data: EdgeData): Promise<unknown> {
    let read = this.documents.get(data);
    if (read === undefined) {
      read = this.source
        .readEdge(data)
        .then((text) => (text === undefined ? undefined : JSON.parse(text)))
        .catch((error: unknown) => {
          this.log.warn(
            { err: error instanceof Error ? error.message : String(error), data },
            'reading Unleash Edge’s backup failed',
          );
          return undefined;
        });
      this.documents.set(data, read);
    }
    return read;
  }
}
