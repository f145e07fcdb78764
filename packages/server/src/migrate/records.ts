/**
 * What `flags-server migrate from-unleash` copies, in one shape for both sides: unleash-server's
 * Admin API answers are read into it (`unleash-source.ts`), flags-server's tables too
 * (`migrate-store.ts`), and the two are compared record by record (`plan.ts`). Every record holds
 * what the copy writes and nothing it does not, so equal records mean nothing to do.
 */

/** The kinds of things copied, in the order they are written (each may refer to the ones before). */
export const KINDS = [
  'environments',
  'projects',
  'featureTypes',
  'tagTypes',
  'tags',
  'contextFields',
  'strategies',
  'segments',
  'flags',
  'apiTokens',
  'users',
] as const;
export type Kind = (typeof KINDS)[number];

export interface EnvironmentRecord {
  readonly type: string;
  readonly sortOrder: number;
  readonly enabled: boolean;
}

export interface ProjectRecord {
  readonly name: string;
  readonly description: string | null;
  /** Its environments, in name order. */
  readonly environments: readonly string[];
}

export interface FeatureTypeRecord {
  readonly name: string;
  readonly description: string | null;
  readonly lifetimeDays: number | null;
}

export interface TagTypeRecord {
  readonly description: string | null;
  readonly icon: string | null;
  readonly color: string | null;
}

export interface LegalValue {
  readonly value: string;
  readonly description?: string;
}

export interface ContextFieldRecord {
  readonly description: string | null;
  readonly stickiness: boolean;
  readonly sortOrder: number;
  readonly legalValues: readonly LegalValue[];
}

/** A custom strategy definition (the built-in ones exist on both sides). */
export interface StrategyRecord {
  readonly title: string | null;
  readonly description: string | null;
  readonly parameters: readonly unknown[];
  readonly deprecated: boolean;
}

export interface Constraint {
  readonly contextName: string;
  readonly operator: string;
  readonly values: readonly string[];
  readonly value?: string;
  readonly inverted: boolean;
  readonly caseInsensitive: boolean;
}

export interface SegmentRecord {
  readonly description: string | null;
  readonly project: string | null;
  readonly constraints: readonly Constraint[];
}

export interface FlagStrategy {
  readonly name: string;
  readonly title: string | null;
  readonly disabled: boolean;
  readonly parameters: Readonly<Record<string, string>>;
  readonly constraints: readonly Constraint[];
  readonly variants: readonly unknown[];
  /** Segment names (ids differ between the two servers). */
  readonly segments: readonly string[];
}

export interface FlagEnvironment {
  readonly enabled: boolean;
  readonly variants: readonly unknown[];
  /** In evaluation order. */
  readonly strategies: readonly FlagStrategy[];
}

export interface Dependency {
  readonly parent: string;
  readonly enabled: boolean;
  readonly variants: readonly string[];
}

export interface FlagRecord {
  readonly project: string;
  readonly type: string;
  readonly description: string | null;
  readonly stale: boolean;
  readonly impressionData: boolean;
  /** ISO 8601. */
  readonly createdAt: string;
  /** ISO 8601 when archived. */
  readonly archivedAt: string | null;
  /** `type:value`, sorted. */
  readonly tags: readonly string[];
  /** By parent name. */
  readonly dependencies: readonly Dependency[];
  readonly environments: Readonly<Record<string, FlagEnvironment>>;
}

/** An API token, keyed by the SHA-256 of its secret (the secret itself travels beside it). */
export interface ApiTokenRecord {
  readonly tokenName: string;
  readonly type: 'admin' | 'client' | 'frontend';
  /** `null` for admin tokens. */
  readonly environment: string | null;
  readonly projects: readonly string[];
  /** ISO 8601, or null for never. */
  readonly expiresAt: string | null;
}

/**
 * A user, keyed by their email (lower case) or, without one, `username:` and their username
 * (lower case). Passwords are compared apart (`PasswordSource`).
 */
export interface UserRecord {
  readonly name: string | null;
  readonly email: string | null;
  readonly username: string | null;
  /** `Admin`, `Editor` or `Viewer`. */
  readonly rootRole: string;
}

export interface RecordsByKind {
  environments: Map<string, EnvironmentRecord>;
  projects: Map<string, ProjectRecord>;
  featureTypes: Map<string, FeatureTypeRecord>;
  tagTypes: Map<string, TagTypeRecord>;
  tags: Map<string, Record<string, never>>;
  contextFields: Map<string, ContextFieldRecord>;
  strategies: Map<string, StrategyRecord>;
  segments: Map<string, SegmentRecord>;
  flags: Map<string, FlagRecord>;
  apiTokens: Map<string, ApiTokenRecord>;
  users: Map<string, UserRecord>;
}

/** What unleash-server holds: the records, plus what only the source has. */
export interface SourceInstance {
  readonly version: string;
  /** unleash-server's instance id (`versionInfo.instanceId`), when it tells it. */
  readonly instanceId: string | undefined;
  readonly records: RecordsByKind;
  /** Token secrets by the key of their record (their hash). */
  readonly secrets: ReadonlyMap<string, string>;
  /** The user's id in unleash-server, by the key of their record (to find their password hash). */
  readonly userIds: ReadonlyMap<string, number>;
  /** Things read that cannot be copied, said once each (a custom root role, …). */
  readonly notes: readonly string[];
}

export const emptyRecords = (): RecordsByKind => ({
  environments: new Map(),
  projects: new Map(),
  featureTypes: new Map(),
  tagTypes: new Map(),
  tags: new Map(),
  contextFields: new Map(),
  strategies: new Map(),
  segments: new Map(),
  flags: new Map(),
  apiTokens: new Map(),
  users: new Map(),
});

/** A constraint as both sides store it: every field present, `value` only when there is one. */
export function normalConstraint(raw: Record<string, unknown>): Constraint {
  const values = Array.isArray(raw.values) ? raw.values.map(String) : [];
  return {
    contextName: String(raw.contextName),
    operator: String(raw.operator),
    values,
    ...(raw.value === undefined || raw.value === null ? {} : { value: String(raw.value) }),
    inverted: raw.inverted === true,
    caseInsensitive: raw.caseInsensitive === true,
  };
}

/** The key of a user's record (see `UserRecord`). */
export function userKey(email: string | null, username: string | null): string | undefined {
  if (email) return email.trim().toLowerCase();
  if (username) return `username:${username.trim().toLowerCase()}`;
  return undefined;
}

/** JSON with object keys sorted: two records are the same when these are. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) => {
    if (item === null || typeof item !== 'object' || Array.isArray(item)) return item;
    const sorted: Record<string, unknown> = {};
    for (const key of Object.keys(item).sort()) {
      const entry = (item as Record<string, unknown>)[key];
      if (entry !== undefined) sorted[key] = entry;
    }
    return sorted;
  });
}

/** An instant as an ISO 8601 string (PostgreSQL's microseconds cut to milliseconds). */
export function isoTime(value: Date | string): string {
  return new Date(value).toISOString();
}
