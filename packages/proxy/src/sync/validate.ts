import { clientFeaturesSchema, type DeltaEvent, deltaEventSchema } from '@flags/schemas';
import { Ajv } from 'ajv';

// Shared by every proxy of the process: compiled once, and its `errors` are read right after the
// synchronous call that set them.
const ajv = new Ajv({ allErrors: false, strict: false });
const validate = ajv.compile(clientFeaturesSchema);
const validateEvent = ajv.compile(deltaEventSchema);

/** The delta event types the engine applies; others are skipped, so newer upstreams do not break it. */
const KNOWN_EVENT_TYPES = new Set<unknown>(
  deltaEventSchema.oneOf.map((schema) => schema.properties.type.const),
);

/** `undefined` when the value is a client-features payload, else the first problem found. */
export function payloadProblem(value: unknown): string | undefined {
  if (validate(value)) return undefined;
  const first = validate.errors?.[0];
  return `${first?.instancePath ?? ''} ${first?.message ?? 'invalid'}`.trim();
}

/**
 * The events of a delta message (`{ events: [...] }`) of the known types, each checked against
 * its schema; or the first problem found.
 */
export function deltaEventsOf(value: unknown): DeltaEvent[] | string {
  const events = (value as { events?: unknown } | null)?.events;
  if (typeof value !== 'object' || !Array.isArray(events)) return 'no events array';
  const known: DeltaEvent[] = [];
  for (const [index, event] of events.entries()) {
    if (!KNOWN_EVENT_TYPES.has((event as { type?: unknown } | null)?.type)) continue;
    if (!validateEvent(event)) {
      const first = validateEvent.errors?.[0];
      return `/events/${index}${first?.instancePath ?? ''} ${first?.message ?? 'invalid'}`;
    }
    known.push(event as unknown as DeltaEvent);
  }
  return known;
}
