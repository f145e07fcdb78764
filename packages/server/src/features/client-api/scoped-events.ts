import type { DeltaEvent } from '@flags/engine';
import type { ClientFeatures, Segment } from '@flags/schemas';
import { isResync } from './change-log.js';
import {
  type DeltaScope,
  type StoredDeltaEvent,
  type StoredEvent,
  visibleTo,
  withEventId,
} from './change-log-reads.js';

/**
 * Whether `scope` sees less than its whole environment (projects or a name prefix). The change log
 * records segments per environment (those any flag uses), which is what such a client's
 * `/api/client/features` has only when it sees every flag.
 */
export const isNarrowed = (scope: DeltaScope): boolean =>
  scope.projects !== undefined || scope.namePrefix !== undefined;

/**
 * The events of `events` a client of `scope` gets, in order, as SDKs receive them. A client of the
 * whole environment gets every event of it. A narrowed client gets the feature events of its flags
 * and, as its `/api/client/features` would, only segments its flags use (issue 40: segments used
 * only by other projects were sent to it): `current` is its configuration (from the client-features
 * cache) at or after the last event, and from it come
 * - `segment-updated` for each segment it uses that changed or that one of its flags in `events`
 *   refers to (a flag may start using a segment that another project's flag already used, which
 *   the log records as no segment event), before the flag events;
 * - `segment-removed` for each segment gone from the environment, after them. A segment its flags
 *   stop using while another project's flags still use it stays with the client until then (unused,
 *   and seen by it before).
 * Resync points are left out: a client before one is hydrated instead (see `readEventsAfter`).
 */
export function eventsFor(
  scope: DeltaScope,
  events: readonly StoredEvent[],
  current: ClientFeatures | undefined,
): DeltaEvent[] {
  const deltas = events.filter((stored): stored is StoredDeltaEvent => !isResync(stored.event));
  if (!isNarrowed(scope) || current === undefined) {
    const visible: DeltaEvent[] = [];
    for (const stored of deltas) if (visibleTo(scope, stored)) visible.push(withEventId(stored));
    return visible;
  }
  const used = new Map<number, Segment>();
  for (const segment of current.segments ?? []) used.set(segment.id, segment);
  // Segment id → the id of the first event that needs it sent (updated) or removed.
  const updated = new Map<number, number>();
  const removed = new Map<number, number>();
  const flagEvents: DeltaEvent[] = [];
  for (const stored of deltas) {
    if (stored.environment !== scope.environment) continue;
    const event = stored.event;
    if (event.type === 'segment-updated') {
      if (used.has(event.segment.id) && !updated.has(event.segment.id)) {
        updated.set(event.segment.id, stored.id);
      }
      continue;
    }
    if (event.type === 'segment-removed') {
      if (!used.has(event.segmentId)) removed.set(event.segmentId, stored.id);
      continue;
    }
    if (!visibleTo(scope, stored)) continue;
    flagEvents.push(withEventId(stored));
    if (event.type !== 'feature-updated') continue;
    for (const strategy of event.feature.strategies ?? []) {
      for (const id of strategy.segments ?? []) {
        if (used.has(id) && !updated.has(id)) updated.set(id, stored.id);
      }
    }
  }
  const out: DeltaEvent[] = [];
  for (const [id, eventId] of updated) {
    out.push({ eventId, type: 'segment-updated', segment: used.get(id)! });
  }
  out.push(...flagEvents);
  for (const [id, eventId] of removed)
    out.push({ eventId, type: 'segment-removed', segmentId: id });
  return out;
}
