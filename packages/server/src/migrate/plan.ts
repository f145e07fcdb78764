import type { TargetInstance, TargetUser } from './migrate-store.js';
import {
  canonicalJson,
  KINDS,
  type Kind,
  type RecordsByKind,
  type SourceInstance,
  type UserRecord,
} from './records.js';

type RecordOf<K extends Kind> = RecordsByKind[K] extends Map<string, infer R> ? R : never;

/** What the copy does with one record: create it, update it to `record`, or leave it (`skip`). */
export interface Change<R> {
  readonly key: string;
  readonly action: 'create' | 'update' | 'skip';
  /** The record as it will be. */
  readonly record: R;
  /** The record as flags-server has it (updates and skips). */
  readonly before?: R;
}

export interface Plan {
  readonly changes: { [K in Kind]: Change<RecordOf<K>>[] };
  readonly targetUsers: ReadonlyMap<string, TargetUser>;
  /** Users whose password hash the copy writes (by record key). */
  readonly passwordUpdates: ReadonlySet<string>;
}

/** Counts per kind, for the plan's table. */
export interface PlanCounts {
  readonly create: number;
  readonly update: number;
  readonly skip: number;
}

/** Whether a stored hash is one copied from unleash-server and never replaced since. */
const isBcrypt = (hash: string) => /^\$2[aby]\$/.test(hash);

/**
 * Compares the source with flags-server record by record: what flags-server lacks is created,
 * what differs is updated, the rest skipped. Nothing flags-server has beyond the source is
 * deleted. `passwordHashes` (from `--database`) makes password hashes part of the comparison.
 */
export function planCopy(
  source: SourceInstance,
  target: TargetInstance,
  passwordHashes: ReadonlyMap<string, string> | undefined,
): Plan {
  const changes = {} as { [K in Kind]: Change<RecordOf<K>>[] };
  const passwordUpdates = new Set<string>();
  for (const kind of KINDS) {
    const list: Change<unknown>[] = [];
    const theirs = target.records[kind] as Map<string, unknown>;
    for (const [key, wanted] of source.records[kind] as Map<string, unknown>) {
      const before = theirs.get(key);
      let record = wanted;
      if (before === undefined) {
        list.push({ key, action: 'create', record });
        continue;
      }
      let same: boolean;
      if (kind === 'featureTypes') {
        // A type both have keeps its name and description; its lifetime is the source's.
        record = {
          ...(before as object),
          lifetimeDays: (wanted as { lifetimeDays: unknown }).lifetimeDays,
        };
        same = canonicalJson(record) === canonicalJson(before);
      } else if (kind === 'apiTokens' && target.configuredTokens.has(key)) {
        // The operator configures this one (FLAGS_*_TOKENS): it stays as configured.
        same = true;
        record = before;
      } else if (kind === 'users') {
        const mine = wanted as UserRecord;
        const had = before as UserRecord;
        // What the source does not know about a user, flags-server keeps.
        record = {
          name: mine.name ?? had.name,
          email: mine.email ?? had.email,
          username: mine.username ?? had.username,
          rootRole: mine.rootRole,
        };
        same = canonicalJson(record) === canonicalJson(before);
        const hash = passwordHashes?.get(key);
        const stored = target.users.get(key)?.passwordHash ?? null;
        // A password set in flags-server (or changed there at a login) stays; a copied one that
        // unleash-server has changed since is copied again.
        if (hash !== undefined && hash !== stored && (stored === null || isBcrypt(stored))) {
          passwordUpdates.add(key);
          same = false;
        }
      } else {
        same = canonicalJson(wanted) === canonicalJson(before);
      }
      list.push({ key, action: same ? 'skip' : 'update', record, before });
    }
    (changes as Record<Kind, Change<unknown>[]>)[kind] = list;
  }
  return { changes, targetUsers: target.users, passwordUpdates };
}

export function countPlan(plan: Plan): Record<Kind, PlanCounts> {
  const counts = {} as Record<Kind, PlanCounts>;
  for (const kind of KINDS) {
    const list = plan.changes[kind] as Change<unknown>[];
    counts[kind] = {
      create: list.filter((change) => change.action === 'create').length,
      update: list.filter((change) => change.action === 'update').length,
      skip: list.filter((change) => change.action === 'skip').length,
    };
  }
  return counts;
}

/** Whether the plan changes anything. */
export function planChanges(plan: Plan): boolean {
  return KINDS.some((kind) =>
    (plan.changes[kind] as Change<unknown>[]).some((change) => change.action !== 'skip'),
  );
}
