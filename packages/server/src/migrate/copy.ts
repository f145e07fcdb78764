import { ConfigError } from '@flags/config';
import type { Database, Queryable } from '../db/database.js';
import { applyMigrations } from '../db/migrate.js';
import { bumpConfigRevision } from '../revision.js';
import { type PasswordLinkIssued, readTarget, writePlan } from './migrate-store.js';
import { type Plan, planChanges, planCopy } from './plan.js';
import type { SourceInstance } from './records.js';
import { MigrateError } from './unleash-source.js';

/** Carries a dry run's plan out of the transaction it rolls back. */
class Rollback extends Error {
  constructor(readonly plan: Plan) {
    super('dry run');
  }
}

/**
 * flags-server's schema brought up to date in `tx`; a database it cannot use (unleash-server's own,
 * `applyMigrations`) is this command's error, with the same message.
 */
async function prepareSchema(tx: Queryable): Promise<void> {
  try {
    await applyMigrations(tx);
  } catch (error) {
    if (error instanceof ConfigError) throw new MigrateError(error.problems.join('; '));
    throw error;
  }
}

/**
 * What copying `source` into `db` would do, written nowhere: planned in a transaction that is
 * rolled back (a database flags-server never started on gets its schema there, and keeps none).
 */
export async function planInstance(
  db: Database,
  source: SourceInstance,
  passwordHashes: ReadonlyMap<string, string> | undefined,
): Promise<Plan> {
  return db
    .transaction(async (tx) => {
      await prepareSchema(tx);
      throw new Rollback(planCopy(source, await readTarget(tx), passwordHashes));
    })
    .catch((error: unknown) => {
      if (error instanceof Rollback) return error.plan;
      throw error;
    });
}

/**
 * Copies `source` into `db` in one transaction, flags-server's schema included: it all lands or
 * nothing does. Compared inside the transaction, so a change made meanwhile is not overwritten
 * blind. Running flags-server processes serve the copy at commit, as after any admin API write.
 */
export async function copyInstance(
  db: Database,
  source: SourceInstance,
  passwordHashes: ReadonlyMap<string, string> | undefined,
  options: { readonly publicUrl: URL; readonly now: Date },
): Promise<{ plan: Plan; links: PasswordLinkIssued[] }> {
  return db.transaction(async (tx) => {
    await prepareSchema(tx);
    const plan = planCopy(source, await readTarget(tx), passwordHashes);
    if (!planChanges(plan)) return { plan, links: [] };
    const links = await writePlan(tx, plan, {
      actor: { name: 'migrate from-unleash' },
      secrets: source.secrets,
      passwordHashes: passwordHashes ?? new Map(),
      publicUrl: options.publicUrl,
      now: options.now,
    });
    await bumpConfigRevision(tx);
    return { plan, links };
  });
}
