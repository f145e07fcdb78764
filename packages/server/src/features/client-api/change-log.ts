import { createHash } from 'node:crypto';
import type { DeltaEvent } from '@flags/engine';
import type { ClientFeature, Segment } from '@flags/schemas';
import { ADVISORY_LOCK_KEYS } from '../../db/advisory-locks.js';
import type { Queryable, Transaction } from '../../db/database.js';
import {
  type ClientConfiguration,
  everyProject,
  oneOfNames,
  readClientConfiguration,
} from './client-features-store.js';

/** The NOTIFY channel of the change log: its payload is empty, listeners read the events. */
export const CHANGE_LOG_CHANNEL = 'flags_client_changes';

/** A delta event without its id (the id is the row's). */
export type ChangeEvent = Exclude<DeltaEvent, { type: 'hydration' }>;

/**
 * A resync point: anything of its environment may have changed, recorded instead of the events
 * of a write that changed more flags than the log keeps (compaction would drop most of them within
 * a minute). Never sent to SDKs: a client before it gets a hydration.
 */
export interface ResyncPoint {
  readonly type: 'resync';
}

/** What one row of the change log holds. */
export type LoggedChange = ChangeEvent | ResyncPoint;

export const isResync = (change: LoggedChange): change is ResyncPoint => change.type === 'resync';

interface StateRow {
  kind: 'feature' | 'segment';
  key: string;
  project: string | null;
  hash: string;
}

/** The recorded hash of a flag or segment, from its JSON text. */
const hashOfText = (text: string) =>
  createHash('sha256').update(text).digest('base64url').slice(0, 22);

/**
 * The environments to diff and those with a recorded state. Recorded environments that no longer
 * exist are forgotten with their state (only then: the state of thousands of flags is not scanned
 * on every write).
 */
async function environmentsToDiff(
  tx: Queryable,
): Promise<{ environments: string[]; known: Set<string> }> {
  // Both lists in one round trip: `name` null is a recorded environment that no longer exists.
  const rows = await tx.query<{ name: string | null; recorded: string | null }>(
    `SELECT e.name, c.environment AS recorded
       FROM environments e FULL JOIN client_change_environments c ON c.environment = e.name
      ORDER BY e.name`,
  );
  const environments = rows.flatMap((row) => (row.name === null ? [] : [row.name]));
  const existing = new Set(environments);
  const recordedNames = rows.flatMap((row) => (row.recorded === null ? [] : [row.recorded]));
  const gone = recordedNames.filter((name) => !existing.has(name));
  if (gone.length > 0) {
    await tx.query('DELETE FROM client_change_state WHERE environment = ANY($1::text[])', [gone]);
    await tx.query('DELETE FROM client_change_environments WHERE environment = ANY($1::text[])', [
      gone,
    ]);
  }
  return { environments, known: new Set(recordedNames.filter((name) => existing.has(name))) };
}

/**
 * Records what the write in `tx` changed for SDKs, inside its transaction: every environment's
 * client-visible configuration (as `/api/client/features` serves it with segments by reference)
 * is diffed against the last recorded one, and the differences are appended as delta events. So
 * events commit or roll back with the write, and need no code in each write. A transaction-scoped
 * advisory lock serialises the diffs: the next writer waits for this commit, sees it, and takes
 * higher ids, so ids follow commit order. An environment without a recorded state starts its log
 * at the current id: at start-up (`atStart`: the first start on a database, or one written by a
 * version without the log) its state is the baseline, without events; in a write (an environment
 * being created) its whole state is appended as events, since clients of a token naming it may
 * have been hydrated with its empty view already.
 * `pg_notify` (delivered at commit) wakes every server process's change feed.
 * With `changedFlags` (the write says which flags it changed) only those flags are read and
 * diffed, with the segments they use and the recorded segments no flag uses any more: the cost
 * of a write is that of what it changed, not of the whole configuration. With `changedEnvironments`
 * too (the write changed only those environments' configuration) only they are diffed.
 * An environment with more events than `resyncAbove` (the events the log keeps per environment)
 * gets one resync point instead (see `ResyncPoint`); its recorded state is written all the same,
 * so the next write diffs against the state after this one.
 * Returns how many rows were appended.
 */
export async function recordClientChanges(
  tx: Transaction,
  atStart = false,
  changedFlags?: ReadonlySet<string>,
  resyncAbove = Number.POSITIVE_INFINITY,
  changedEnvironments?: ReadonlySet<string>,
): Promise<number> {
  // Sent: the reads after it are answered once it holds the lock.
  tx.send('SELECT pg_advisory_xact_lock($1)', [ADVISORY_LOCK_KEYS.clientChangeLog]);
  // A write that names its flags and environments (a toggle) reads them with the environments,
  // in one round trip on PostgreSQL; the reads are used when every environment has a state.
  const named = changedFlags !== undefined ? [...changedFlags] : undefined;
  const [{ environments, known }, ...readAhead] = await Promise.all([
    environmentsToDiff(tx),
    ...(named !== undefined && named.length > 0 && changedEnvironments !== undefined
      ? [...changedEnvironments].map((environment) => namedState(tx, environment, named))
      : []),
  ]);
  // An environment without a recorded state is recorded whole.
  const names =
    named && environments.every((environment) => known.has(environment)) ? named : undefined;
  if (names?.length === 0) return 0;
  const diffed =
    names && changedEnvironments
      ? environments.filter((environment) => changedEnvironments.has(environment))
      : environments;
  let appended = 0;
  for (const environment of diffed) {
    const { configuration, previous } = names
      ? (readAhead.find((read) => read.environment === environment) ??
        (await namedState(tx, environment, names)))
      : await wholeState(tx, environment);
    const diff = diffState(previous, configuration.features, configuration.segments ?? []);
    if (!known.has(environment)) {
      tx.send(
        `INSERT INTO client_change_environments (environment, floor)
         SELECT $1, COALESCE(max(id), 0) FROM client_change_events`,
        [environment],
      );
    }
    if (known.has(environment) || !atStart) {
      const events = diff.events.length > resyncAbove ? [RESYNC] : diff.events;
      appendEvents(tx, environment, events);
      appended += events.length;
    }
    writeState(tx, environment, diff);
  }
  if (appended > 0) tx.send('SELECT pg_notify($1, $2)', [CHANGE_LOG_CHANNEL, '']);
  return appended;
}

/** What the client API serves of `environment`, and its whole recorded state. */
async function wholeState(
  tx: Queryable,
  environment: string,
): Promise<{ configuration: ClientConfiguration; previous: StateRow[] }> {
  const [configuration, previous] = await Promise.all([
    readClientConfiguration(tx, everyProject(environment)),
    tx.query<StateRow>(
      'SELECT kind, key, project, hash FROM client_change_state WHERE environment = $1',
      [environment],
    ),
  ]);
  return { configuration, previous };
}

/**
 * What the client API serves of the flags `names` in `environment`, and their recorded state:
 * the flags' rows, and the rows of the segments they use or that no enabled strategy uses any
 * more (those are diffed; the others are not these flags' concern). Read together.
 */
async function namedState(
  tx: Queryable,
  environment: string,
  names: readonly string[],
): Promise<{ environment: string; configuration: ClientConfiguration; previous: StateRow[] }> {
  const named = oneOfNames('st.key', names);
  const [configuration, recorded] = await Promise.all([
    readClientConfiguration(tx, everyProject(environment, names)),
    tx.query<StateRow & { unused: boolean }>(
      `SELECT kind, key, project, hash,
              st.kind = 'segment' AND NOT EXISTS (
                SELECT 1 FROM feature_strategies s JOIN features f ON f.name = s.feature_name
                 WHERE s.environment = $1 AND NOT s.disabled AND f.archived_at IS NULL
                   AND s.segments @> to_jsonb(st.key::int)) AS unused
         FROM client_change_state st
        WHERE st.environment = $1
          AND ((st.kind = 'feature' AND ${named.filter('$2')}) OR st.kind = 'segment')`,
      [environment, named.value],
    ),
  ]);
  const used = new Set((configuration.segments ?? []).map((segment) => String(segment.id)));
  const previous = recorded.filter(
    (row) => row.kind === 'feature' || row.unused || used.has(row.key),
  );
  return { environment, configuration, previous };
}

/** The project a feature event belongs to (`null`: every client of the environment gets it). */
export function eventProject(event: LoggedChange): string | null {
  if (event.type === 'feature-updated') return event.feature.project ?? null;
  if (event.type === 'feature-removed') return event.project ?? null;
  return null;
}

export function eventFeatureName(event: LoggedChange): string | null {
  if (event.type === 'feature-updated') return event.feature.name;
  if (event.type === 'feature-removed') return event.featureName;
  return null;
}

/**
 * An event to append with its JSON text: a flag is serialized once, for its hash and for its
 * event (an import of thousands of flags serialized each twice).
 */
interface PendingEvent {
  readonly event: LoggedChange;
  readonly json: string;
}

const pending = (event: LoggedChange): PendingEvent => ({ event, json: JSON.stringify(event) });

const RESYNC = pending({ type: 'resync' });

interface StateDiff {
  readonly events: PendingEvent[];
  readonly upserts: StateRow[];
  readonly removals: Pick<StateRow, 'kind' | 'key'>[];
}

/**
 * The events that take an SDK from the recorded state to the current one, in an order it can
 * apply one by one: segments a flag starts using come before the flag, segments no flag uses any
 * more are removed after the flags. A flag moved to another project is removed from the old one
 * first, so clients scoped to that project drop it.
 */
function diffState(
  previous: readonly StateRow[],
  features: readonly ClientFeature[],
  segments: readonly Segment[],
): StateDiff {
  const before = new Map(previous.map((row) => [`${row.kind}\n${row.key}`, row]));
  const segmentUpdates: PendingEvent[] = [];
  const featureEvents: PendingEvent[] = [];
  const segmentRemovals: PendingEvent[] = [];
  const upserts: StateRow[] = [];
  const removals: Pick<StateRow, 'kind' | 'key'>[] = [];
  for (const segment of segments) {
    const row: StateRow = { kind: 'segment', key: String(segment.id), project: null, hash: '' };
    row.hash = hashOfText(JSON.stringify(segment));
    const old = before.get(`segment\n${row.key}`);
    before.delete(`segment\n${row.key}`);
    if (old?.hash === row.hash) continue;
    segmentUpdates.push(pending({ type: 'segment-updated', segment }));
    upserts.push(row);
  }
  for (const feature of features) {
    const text = JSON.stringify(feature);
    const row: StateRow = {
      kind: 'feature',
      key: feature.name,
      project: feature.project ?? null,
      hash: hashOfText(text),
    };
    const old = before.get(`feature\n${row.key}`);
    before.delete(`feature\n${row.key}`);
    if (old?.hash === row.hash) continue;
    if (old && old.project !== row.project) {
      featureEvents.push(
        pending({
          type: 'feature-removed',
          featureName: feature.name,
          ...(old.project === null ? {} : { project: old.project }),
        }),
      );
    }
    featureEvents.push({
      event: { type: 'feature-updated', feature },
      json: `{"type":"feature-updated","feature":${text}}`,
    });
    upserts.push(row);
  }
  for (const old of before.values()) {
    removals.push({ kind: old.kind, key: old.key });
    if (old.kind === 'feature') {
      featureEvents.push(
        pending({
          type: 'feature-removed',
          featureName: old.key,
          ...(old.project === null ? {} : { project: old.project }),
        }),
      );
    } else {
      segmentRemovals.push(pending({ type: 'segment-removed', segmentId: Number(old.key) }));
    }
  }
  return { events: [...segmentUpdates, ...featureEvents, ...segmentRemovals], upserts, removals };
}

/** One statement for all of them (an import may change thousands of flags), ids in list order. */
function appendEvents(tx: Transaction, environment: string, events: readonly PendingEvent[]): void {
  if (events.length === 0) return;
  // The JSON of the rows built around each event's text, not serialized again.
  const rows = events.map(
    ({ event, json }) =>
      `{"project":${JSON.stringify(eventProject(event))},` +
      `"featureName":${JSON.stringify(eventFeatureName(event))},"event":${json}}`,
  );
  tx.send(
    `INSERT INTO client_change_events (environment, project, feature_name, event)
     SELECT $1, r.value->>'project', r.value->>'featureName', r.value->'event'
       FROM jsonb_array_elements($2::jsonb) WITH ORDINALITY AS r(value, position)
      ORDER BY r.position`,
    [environment, `[${rows.join(',')}]`],
  );
}

function writeState(tx: Transaction, environment: string, diff: StateDiff): void {
  if (diff.removals.length > 0) {
    tx.send(
      `DELETE FROM client_change_state
        WHERE environment = $1
          AND kind || E'\\n' || key IN (SELECT jsonb_array_elements_text($2::jsonb))`,
      [environment, JSON.stringify(diff.removals.map((row) => `${row.kind}\n${row.key}`))],
    );
  }
  if (diff.upserts.length > 0) {
    tx.send(
      `INSERT INTO client_change_state (environment, kind, key, project, hash)
       SELECT $1, r.kind, r.key, r.project, r.hash
         FROM jsonb_to_recordset($2::jsonb) AS r(kind text, key text, project text, hash text)
       ON CONFLICT (environment, kind, key)
       DO UPDATE SET project = EXCLUDED.project, hash = EXCLUDED.hash`,
      [environment, JSON.stringify(diff.upserts)],
    );
  }
}

/**
 * Keeps the newest `perEnvironment` events of each environment and deletes the older ones,
 * raising the environment's floor to the newest id deleted (a client behind it is hydrated).
 * Takes the change log lock so a floor never passes an event being appended. Returns how many
 * events were deleted.
 */
export async function compactClientChanges(tx: Queryable, perEnvironment: number): Promise<number> {
  await tx.query('SELECT pg_advisory_xact_lock($1)', [ADVISORY_LOCK_KEYS.clientChangeLog]);
  const deleted = await tx.query<{ environment: string; newest: string }>(
    `WITH ranked AS (
       SELECT id, environment,
              row_number() OVER (PARTITION BY environment ORDER BY id DESC) AS position
         FROM client_change_events
     ), gone AS (
       DELETE FROM client_change_events e USING ranked r
        WHERE e.id = r.id AND r.position > $1
       RETURNING e.id, e.environment
     )
     SELECT environment, max(id)::text AS newest FROM gone GROUP BY environment`,
    [perEnvironment],
  );
  let count = 0;
  for (const row of deleted) {
    await tx.query(
      `UPDATE client_change_environments SET floor = GREATEST(floor, $2::bigint)
        WHERE environment = $1`,
      [row.environment, row.newest],
    );
    count++;
  }
  return count;
}
