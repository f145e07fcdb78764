import type { DeltaEvent } from '@flags/engine';
import type { Queryable } from '../../db/database.js';
import { type ChangeEvent, isResync, type LoggedChange } from './change-log.js';

/** One row of the change log. */
export interface StoredEvent {
  readonly id: number;
  readonly environment: string;
  readonly project: string | null;
  readonly featureName: string | null;
  readonly event: LoggedChange;
}

/** A row holding a delta event (not a resync point). */
export type StoredDeltaEvent = StoredEvent & { readonly event: ChangeEvent };

/** Whether `events` hold a resync point of `environment`. */
export const resyncIn = (events: readonly StoredEvent[], environment: string): boolean =>
  events.some((stored) => stored.environment === environment && isResync(stored.event));

/** What one delta or streaming client may see: its token's environment and projects, narrowed. */
export interface DeltaScope {
  readonly environment: string;
  /** `undefined` = every project. */
  readonly projects: readonly string[] | undefined;
  readonly namePrefix: string | undefined;
}

interface EventRow {
  id: string | number;
  environment: string;
  project: string | null;
  feature_name: string | null;
  event: LoggedChange;
}

const toStored = (row: EventRow): StoredEvent => ({
  id: Number(row.id),
  environment: row.environment,
  project: row.project,
  featureName: row.feature_name,
  event: row.event,
});

/** Whether a client of `scope` gets `stored` (segment events go to the whole environment). */
export function visibleTo(scope: DeltaScope, stored: StoredEvent): boolean {
  if (stored.environment !== scope.environment) return false;
  if (stored.project !== null && scope.projects && !scope.projects.includes(stored.project)) {
    return false;
  }
  if (stored.featureName !== null && scope.namePrefix !== undefined) {
    return stored.featureName.startsWith(scope.namePrefix);
  }
  return true;
}

/** The event as SDKs receive it. */
export const withEventId = (stored: StoredDeltaEvent): DeltaEvent => ({
  ...stored.event,
  eventId: stored.id,
});

/**
 * Events after `after`, of one environment or of all, in id order (`limit` at most). The order
 * names the table's column: a bare `id` would be the text of the select list, sorted as text.
 */
export async function readEventsSince(
  db: Queryable,
  after: number,
  limit: number,
  environment?: string,
): Promise<StoredEvent[]> {
  const rows = await db.query<EventRow>(
    `SELECT id::text AS id, environment, project, feature_name, event FROM client_change_events
      WHERE id > $1${environment === undefined ? '' : ' AND environment = $3::text'}
      ORDER BY client_change_events.id LIMIT $2`,
    environment === undefined ? [after, limit] : [after, limit, environment],
  );
  return rows.map(toStored);
}

/** The newest event id (0 when the log is empty). */
export async function readLatestEventId(db: Queryable): Promise<number> {
  const rows = await db.query<{ id: string }>(
    'SELECT COALESCE(max(id), 0)::text AS id FROM client_change_events',
  );
  return Number(rows[0]?.id ?? 0);
}

/** Per environment, the id up to which its events may be gone (see `compactClientChanges`). */
export async function readFloors(db: Queryable): Promise<Map<string, number>> {
  const rows = await db.query<{ environment: string; floor: string }>(
    'SELECT environment, floor::text AS floor FROM client_change_environments',
  );
  return new Map(rows.map((row) => [row.environment, Number(row.floor)]));
}

/** Events read per query; a client further behind than this many is hydrated instead. */
const MAX_EVENTS_READ = 10_000;

/**
 * The events of `scope`'s environment after `after` (a position this server gave out), or
 * `undefined` when `after` cannot be resumed from: older than the environment's compaction floor,
 * newer than the log (another database), an environment without a log, or a resync point of the
 * environment after it (everything may have changed since). The floor is read after
 * the events: compaction deletes events and raises the floor in one transaction, so a floor still
 * at or below `after` proves that no event read was missing. `newest` is the id the client is at
 * afterwards: the newest event read, or `after`. The events are not yet narrowed to the scope's
 * projects and name prefix (`eventsFor` does that).
 */
export async function readEventsAfter(
  db: Queryable,
  scope: DeltaScope,
  after: number,
): Promise<{ events: StoredEvent[]; newest: number } | undefined> {
  const events = await readEventsSince(db, after, MAX_EVENTS_READ + 1, scope.environment);
  if (events.length > MAX_EVENTS_READ || resyncIn(events, scope.environment)) return undefined;
  const [bounds] = await db.query<{ floor: string | null; latest: string }>(
    `SELECT (SELECT floor FROM client_change_environments WHERE environment = $1)::text AS floor,
            COALESCE((SELECT max(id) FROM client_change_events), 0)::text AS latest`,
    [scope.environment],
  );
  if (!bounds || bounds.floor === null || Number(bounds.floor) > after) return undefined;
  if (after > Number(bounds.latest)) return undefined;
  return { events, newest: Math.max(after, events.at(-1)?.id ?? 0) };
}

/**
 * As `readEventsAfter`, for an id a client sent (`If-None-Match`, `Last-Event-ID`): only a position
 * this server gives out is resumed from, i.e. the id of an event still in the log (ids are one
 * sequence across environments) or the environment's floor (where its log began, or up to where it
 * was compacted); anything else (0, a made-up number) is `undefined`, so the client gets a
 * hydration, as unleash-server answers, and never "every event since 0" (issue 40). 0 is given out
 * only while the log is empty, and a client at it is answered 304 before this is asked.
 */
export async function readEventsAfterClientId(
  db: Queryable,
  scope: DeltaScope,
  after: number,
): Promise<{ events: StoredEvent[]; newest: number } | undefined> {
  if (after === 0) return undefined;
  const [issued] = await db.query<{ issued: boolean }>(
    `SELECT COALESCE((SELECT floor FROM client_change_environments WHERE environment = $1), -1) = $2::bigint
            OR EXISTS (SELECT 1 FROM client_change_events WHERE id = $2::bigint) AS issued`,
    [scope.environment, after],
  );
  if (!issued?.issued) return undefined;
  return readEventsAfter(db, scope, after);
}
