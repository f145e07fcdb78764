import type { FastifyRequest } from 'fastify';
import { type Actor, actorOf } from '../../auth/actor.js';
import type { Database, Transaction } from '../../db/database.js';
import type { RevisionTracker } from '../../revision.js';
import { type ConfigWriteScope, writeConfig } from '../config-write.js';
import { bumpFlagVersion, type FlagRow, lockFlag } from './flag-store.js';

/** What the flag routes write with. */
export interface FlagDeps {
  readonly db: Database;
  readonly revisions: RevisionTracker;
}

/** The `If-Match` header of a request, if any. */
export function ifMatchOf(request: FastifyRequest): string | undefined {
  const header = request.headers['if-match'];
  return Array.isArray(header) ? header.join(', ') : header;
}

/**
 * A write to one active flag: locks it (404 when absent, 412 when `If-Match` names another
 * version), runs `write`, bumps the flag's version and tells the change log that only this flag
 * changed — all in one `writeConfig` transaction. `write` records its events with `actor`.
 */
export function writeFlag<T>(
  deps: FlagDeps,
  request: FastifyRequest,
  target: { project: string; feature: string },
  write: (tx: Transaction, flag: FlagRow, actor: Actor, scope: ConfigWriteScope) => Promise<T>,
): Promise<T> {
  const actor = actorOf(request);
  return writeConfig(deps.db, deps.revisions, async (tx, scope) => {
    const flag = await lockFlag(tx, target.project, target.feature, ifMatchOf(request));
    scope.flags(flag.name);
    const result = await write(tx, flag, actor, scope);
    bumpFlagVersion(tx, flag.name);
    return result;
  });
}
