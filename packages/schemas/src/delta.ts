import type { FromSchema } from 'json-schema-to-ts';
import { clientFeatureSchema, segmentSchema } from './client-features.js';

/**
 * The delta API's events (Unleash client specification 19 and 20): what `GET /api/client/delta`
 * answers and what the `unleash-connected` / `unleash-updated` events of `/api/client/streaming`
 * carry, as `{ events: [...] }`. The engine applies them (`applyDelta`); flags-proxy validates
 * what its upstream sends with these schemas before applying anything.
 */

const eventId = { type: 'number' } as const;

export const hydrationEventSchema = {
  type: 'object',
  required: ['type', 'features'],
  properties: {
    eventId,
    type: { const: 'hydration' },
    features: { type: 'array', items: clientFeatureSchema },
    segments: { type: 'array', items: segmentSchema },
  },
} as const;

export const featureUpdatedEventSchema = {
  type: 'object',
  required: ['type', 'feature'],
  properties: { eventId, type: { const: 'feature-updated' }, feature: clientFeatureSchema },
} as const;

export const featureRemovedEventSchema = {
  type: 'object',
  required: ['type', 'featureName'],
  properties: {
    eventId,
    type: { const: 'feature-removed' },
    featureName: { type: 'string' },
    project: { type: 'string' },
  },
} as const;

export const segmentUpdatedEventSchema = {
  type: 'object',
  required: ['type', 'segment'],
  properties: { eventId, type: { const: 'segment-updated' }, segment: segmentSchema },
} as const;

export const segmentRemovedEventSchema = {
  type: 'object',
  required: ['type', 'segmentId'],
  properties: { eventId, type: { const: 'segment-removed' }, segmentId: { type: 'number' } },
} as const;

export const deltaEventSchema = {
  oneOf: [
    hydrationEventSchema,
    featureUpdatedEventSchema,
    featureRemovedEventSchema,
    segmentUpdatedEventSchema,
    segmentRemovedEventSchema,
  ],
} as const;

/** `{ events: [...] }`: a delta answer, and the data of a streaming event. */
export const deltaEventsSchema = {
  type: 'object',
  required: ['events'],
  properties: { events: { type: 'array', items: deltaEventSchema } },
} as const;

export type DeltaEvent = FromSchema<typeof deltaEventSchema>;
export type DeltaEvents = FromSchema<typeof deltaEventsSchema>;
