import type { ClientFeature, ClientFeatures, DeltaEvent, Segment } from '@flags/schemas';

/** Delta API events (client specification 19 and 20); the wire shape is `@flags/schemas`'. */
export type { DeltaEvent };

/** Replaces the item with the same key, or appends it; keeps payload order. */
function upsert<T>(list: T[], item: T, key: (value: T) => unknown): void {
  const wanted = key(item);
  const index = list.findIndex((value) => key(value) === wanted);
  if (index === -1) list.push(item);
  else list[index] = item;
}

/**
 * Applies delta events in order to `base` (or to an empty payload) and returns a new payload;
 * `base` is not modified. Unknown event types are ignored, so newer upstreams do not break it.
 */
export function applyDelta(
  base: ClientFeatures | undefined,
  events: readonly DeltaEvent[],
): ClientFeatures {
  let features: ClientFeature[] = [...(base?.features ?? [])];
  let segments: Segment[] = [...(base?.segments ?? [])];
  for (const event of events) {
    switch (event.type) {
      case 'hydration':
        features = [...event.features];
        segments = [...(event.segments ?? [])];
        break;
      case 'feature-updated':
        upsert(features, event.feature, (feature) => feature.name);
        break;
      case 'feature-removed':
        features = features.filter((feature) => feature.name !== event.featureName);
        break;
      case 'segment-updated':
        upsert(segments, event.segment, (segment) => segment.id);
        break;
      case 'segment-removed':
        segments = segments.filter((segment) => segment.id !== event.segmentId);
        break;
    }
  }
  return { ...base, version: base?.version ?? 1, features, segments };
}
