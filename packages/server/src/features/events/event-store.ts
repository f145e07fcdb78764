import type { Actor } from '../../auth/actor.js';
import type { Queryable, Transaction } from '../../db/database.js';
import type { EventType } from './event-types.js';

/** A flag's tag as events carry it. */
export interface EventTag {
  readonly type: string;
  readonly value: string;
}

/** One event to record. `by` is who made the change (`actorOf(request)`). */
export interface NewEvent {
  readonly type: EventType | (string & {});
  readonly by: Pick<Actor, 'name' | 'userId'>;
  readonly project?: string | null;
  readonly environment?: string | null;
  readonly featureName?: string | null;
  /** The state after the change. */
  readonly data?: unknown;
  /** The state before the change. */
  readonly preData?: unknown;
  readonly tags?: readonly EventTag[];
}

/** An event as the admin API answers it (unleash-server's `eventSchema`). */
export interface StoredEvent {
  id: number;
  type: string;
  createdAt: string;
  createdBy: string;
  createdByUserId: number | null;
  project: string | null;
  environment: string | null;
  featureName: string | null;
  data: unknown;
  preData: unknown;
  tags: EventTag[];
}

/** Records one event in the write's transaction (sent: see `Transaction.send`), so it commits with it. */
export function recordEvent(tx: Transaction, event: NewEvent): void {
  recordEvents(tx, [event]);
}

/** Records events in list order with one statement (an import may record thousands). */
export function recordEvents(tx: Transaction, events: readonly NewEvent[]): void {
  if (events.length === 0) return;
  const rows = events.map((event) => ({
    type: event.type,
    created_by: event.by.name,
    created_by_user_id: event.by.userId ?? null,
    project: event.project ?? null,
    environment: event.environment ?? null,
    feature_name: event.featureName ?? null,
    data: event.data ?? null,
    pre_data: event.preData ?? null,
    tags: event.tags ?? [],
  }));
  tx.send(
    `INSERT INTO events (type, created_by, created_by_user_id, project, environment, feature_name,
                         data, pre_data, tags)
     SELECT r.value->>'type', r.value->>'created_by', (r.value->>'created_by_user_id')::int,
            r.value->>'project', r.value->>'environment', r.value->>'feature_name',
            NULLIF(r.value->'data', 'null'::jsonb), NULLIF(r.value->'pre_data', 'null'::jsonb),
            r.value->'tags'
       FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS r(value, position)
      ORDER BY r.position`,
    [JSON.stringify(rows)],
  );
}

/** The tags of a flag, as its events carry them. */
export async function tagsOfFlag(db: Queryable, featureName: string): Promise<EventTag[]> {
  return db.query<EventTag>(
    `SELECT tag_type AS type, tag_value AS value FROM feature_tags
      WHERE feature_name = $1 ORDER BY tag_type, tag_value`,
    [featureName],
  );
}

/** What `GET /api/admin/search/events` filters on; every list is "any of". */
export interface EventFilter {
  readonly query?: string;
  readonly features?: readonly string[];
  readonly projects?: readonly string[];
  readonly types?: readonly string[];
  /** Actor names or user ids (as text). */
  readonly createdBy?: readonly string[];
  /** Events from the start of this UTC day (`YYYY-MM-DD`) on. */
  readonly from?: string;
  /** Events up to the end of this UTC day. */
  readonly to?: string;
  readonly offset: number;
  readonly limit: number;
}

const list = (values: readonly string[] | undefined) =>
  values === undefined ? null : JSON.stringify(values);

/** The matching events, newest first, and how many match in all. */
export async function searchEvents(
  db: Queryable,
  filter: EventFilter,
): Promise<{ events: StoredEvent[]; total: number }> {
  const like =
    filter.query === undefined ? null : `%${filter.query.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  const where = `
      WHERE ($1::jsonb IS NULL OR e.feature_name IN (SELECT jsonb_array_elements_text($1::jsonb)))
        AND ($2::jsonb IS NULL OR e.project IN (SELECT jsonb_array_elements_text($2::jsonb)))
        AND ($3::jsonb IS NULL OR e.type IN (SELECT jsonb_array_elements_text($3::jsonb)))
        AND ($4::jsonb IS NULL OR e.created_by IN (SELECT jsonb_array_elements_text($4::jsonb))
             OR e.created_by_user_id::text IN (SELECT jsonb_array_elements_text($4::jsonb)))
        AND ($5::date IS NULL OR e.created_at >= $5::date)
        AND ($6::date IS NULL OR e.created_at < $6::date + 1)
        AND ($7::text IS NULL OR e.type ILIKE $7 OR e.created_by ILIKE $7
             OR e.feature_name ILIKE $7 OR e.project ILIKE $7 OR e.environment ILIKE $7
             OR e.data::text ILIKE $7 OR e.pre_data::text ILIKE $7)`;
  const params = [
    list(filter.features),
    list(filter.projects),
    list(filter.types),
    list(filter.createdBy),
    filter.from ?? null,
    filter.to ?? null,
    like,
  ];
  const [rows, counted] = await Promise.all([
    db.query<{
      id: string;
      type: string;
      created_at: Date | string;
      created_by: string;
      created_by_user_id: number | null;
      project: string | null;
      environment: string | null;
      feature_name: string | null;
      data: unknown;
      pre_data: unknown;
      tags: EventTag[];
    }>(
      `SELECT e.id::text AS id, e.type, e.created_at, e.created_by, e.created_by_user_id,
              e.project, e.environment, e.feature_name, e.data, e.pre_data, e.tags
         FROM events e ${where}
        ORDER BY e.created_at DESC, e.id DESC OFFSET $8 LIMIT $9`,
      [...params, filter.offset, filter.limit],
    ),
    db.query<{ total: number }>(`SELECT count(*)::int AS total FROM events e ${where}`, params),
  ]);
  return {
    events: rows.map((row) => ({
      id: Number(row.id),
      type: row.type,
      createdAt: new Date(row.created_at).toISOString(),
      createdBy: row.created_by,
      createdByUserId: row.created_by_user_id,
      project: row.project,
      environment: row.environment,
      featureName: row.feature_name,
      data: row.data,
      preData: row.pre_data,
      tags: row.tags ?? [],
    })),
    total: counted[0]?.total ?? 0,
  };
}
