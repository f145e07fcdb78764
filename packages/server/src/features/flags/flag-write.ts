import type { FastifyRequest } from 'fastify';
import { type Actor, actorOf } from '../../auth/actor.js';
import type { Database, Transaction } from '../../db/database.js';
import type { RevisionTracker } from '../../revision.js';
import { type ConfigWriteScope, writeConfig } from '../config-write.js';
import { type FlagRow, lockFlag } from './flag-store.js';

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
 * A write to one active flag: locks it and bumps its version (404 when absent, 412 when
 * `If-Match` names another version), runs `write` and tells the change log that only this flag
 * changed — all in one `writeConfig` transaction. `write` records its events with `actor`.
 * The target's `readAhead` reads what `write` needs from the target's names alone: it is issued
 * with the lock (one wait on PostgreSQL instead of two), answered once the lock is held, and
 * handed to `write`; should the lock fail (404, 412), that is the answer and what it read is
 * dropped.
 */
export function writeFlag<T, R = undefined>(
  deps: FlagDeps,
  request: FastifyRequest,
  target: {
    project: string;
    feature: string;
    readAhead?: (tx: Transaction) => Promise<R>;
  },
  write: (
    tx: Transaction,
    flag: FlagRow,
    actor: Actor,
    scope: ConfigWriteScope,
    read: R,
  ) => Promise<T>,
): Promise<T> {
  const actor = actorOf(request);
  return writeConfig(deps.db, deps.revisions, async (tx, scope) => {
    const locked = lockFlag(tx, target.project, target.feature, ifMatchOf(request));
    const read = target.readAhead?.(tx);
    // Its failure is only the answer once the lock is held; never left unhandled.
    read?.catch(() => {});
    const flag = await locked;
    scope.flags(flag.name);
    return write(tx, flag, actor, scope, (await read) as R);
  });
}
