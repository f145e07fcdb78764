import type { Database, Transaction } from '../db/database.js';
import { ApiError } from '../errors.js';
import { bumpConfigRevision, type RevisionTracker } from '../revision.js';

/** The id of a project, environment or custom strategy: it appears in URL paths as it stands. */
export const idSchema = {
  type: 'string',
  minLength: 1,
  maxLength: 100,
  pattern: '^[A-Za-z0-9_.~-]+$',
} as const;

/**
 * What a write changed, for the change log: by default everything (every flag of every
 * environment is diffed); a write that knows it touched only some flags says which, and only
 * those are read and diffed (a toggle on an instance with thousands of flags reads one). A write
 * that changed only one environment's configuration says which, and only there are they diffed.
 */
export class ConfigWriteScope {
  private names: Set<string> | undefined;
  private whole = false;
  private environments: Set<string> | undefined;

  /** Only these flags changed (may be called several times; the names add up). */
  flags(...names: string[]): void {
    this.names ??= new Set();
    for (const name of names) this.names.add(name);
  }

  /**
   * All the write changed is in these environments (may be called several times; they add up).
   * Only with `flags`: a write diffing everything diffs every environment.
   */
  onlyIn(...environments: string[]): void {
    this.environments ??= new Set();
    for (const environment of environments) this.environments.add(environment);
  }

  /** Something beyond single flags changed (segments, environments, projects): diff everything. */
  everything(): void {
    this.whole = true;
  }

  /** The flags to diff, or `undefined` for all of them. */
  get changedFlags(): ReadonlySet<string> | undefined {
    return this.whole ? undefined : this.names;
  }

  /** The environments to diff the changed flags in, or `undefined` for all of them. */
  get changedEnvironments(): ReadonlySet<string> | undefined {
    return this.changedFlags ? this.environments : undefined;
  }
}

/**
 * A write to what the client API serves: `write` and the config revision bump commit together
 * (or neither does), and this process serves the change from its next request on. `write` may
 * narrow what the change log diffs with `scope.flags(...)`.
 */
export async function writeConfig<T>(
  db: Database,
  revisions: RevisionTracker,
  write: (tx: Transaction, scope: ConfigWriteScope) => Promise<T>,
): Promise<T> {
  const { value, bumped } = await db.transaction(async (tx) => {
    const scope = new ConfigWriteScope();
    const value = await write(tx, scope);
    const bumped = await bumpConfigRevision(
      tx,
      scope.changedFlags,
      revisions.changesKept,
      scope.changedEnvironments,
    );
    return { value, bumped };
  });
  revisions.committed(bumped);
  return value;
}

/** Runs `create`; a PostgreSQL unique violation (23505) becomes a 409 naming `what`. */
export async function refuseDuplicate<T>(what: string, create: () => Promise<T>): Promise<T> {
  try {
    return await create();
  } catch (error) {
    if ((error as { code?: string }).code === '23505') {
      throw new ApiError('NAME_EXISTS', `${what} already exists.`);
    }
    throw error;
  }
}
