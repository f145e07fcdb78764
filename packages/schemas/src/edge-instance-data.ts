import type { FromSchema } from 'json-schema-to-ts';
import {
  instantSchema,
  MAX_TEXT_LENGTH,
  nameSchema,
  optionalNameSchema,
  propertyNameSchema,
  textSchema,
} from './report-limits.js';

// Unleash Edge 20's instance data, the body of `POST /api/client/metrics/edge` (field names from
// its `unleash-edge-types/src/metrics/instance_data.rs` and `metrics/mod.rs`). Edge keeps every
// body it is sent until its next upstream send; whoever holds a client token can send them, so
// every list and map here is bounded, and so is the nesting of relays (`connectedEdges`).

/** Entries one map of the body (paths, metered groups) may hold. */
export const MAX_INSTANCE_DATA_ENTRIES = 100;
/** Relays one instance reports as connected to it (`connectedEdges`). */
export const MAX_CONNECTED_EDGES = 100;
/** Levels of relays below the sender one body may describe (Edge chains are one or two deep). */
export const MAX_INSTANCE_DATA_DEPTH = 3;
/** Environment and project sets one instance reports revisions for. */
export const MAX_API_KEY_REVISIONS = 1000;

const amount = { type: 'number', minimum: 0 } as const;
const integer = { type: 'integer', minimum: 0 } as const;

/** `LatencyMetrics`: milliseconds. */
const latencySchema = {
  type: 'object',
  required: ['avg', 'count', 'p99'],
  properties: { avg: amount, count: amount, p99: amount },
} as const;

/** A map from a request path to `value`. */
function pathMap<const Value>(value: Value) {
  return {
    type: 'object',
    maxProperties: MAX_INSTANCE_DATA_ENTRIES,
    propertyNames: propertyNameSchema,
    additionalProperties: value,
  } as const;
}

/** `ConsumptionGroup`: requests counted per polling-interval range, ms. */
const consumptionGroupSchema = {
  type: 'object',
  required: ['meteredGroup', 'dataPoints'],
  properties: {
    meteredGroup: nameSchema,
    dataPoints: {
      type: 'array',
      maxItems: MAX_INSTANCE_DATA_ENTRIES,
      items: {
        type: 'object',
        required: ['interval', 'requests'],
        properties: {
          interval: { type: 'array', items: integer, minItems: 2, maxItems: 2 },
          requests: integer,
        },
      },
    },
  },
} as const;

const consumptionGroupsSchema = {
  type: 'array',
  maxItems: MAX_INSTANCE_DATA_ENTRIES,
  items: consumptionGroupSchema,
} as const;

/** The fields of an instance besides `connectedEdges`. */
const instanceProperties = {
  identifier: nameSchema,
  appName: nameSchema,
  hosting: { type: 'string', enum: ['self-hosted', 'hosted', 'enterprise-self-hosted'] },
  region: { ...textSchema(MAX_TEXT_LENGTH), type: ['string', 'null'] },
  edgeVersion: textSchema(MAX_TEXT_LENGTH),
  processMetrics: {
    type: ['object', 'null'],
    required: ['cpuUsage', 'memoryUsage'],
    properties: { cpuUsage: amount, memoryUsage: amount },
  },
  started: instantSchema,
  traffic: {
    type: 'object',
    required: ['cachedResponses', 'get', 'post', 'accessDenied'],
    properties: {
      cachedResponses: pathMap(latencySchema),
      get: pathMap(latencySchema),
      post: pathMap(latencySchema),
      accessDenied: pathMap(latencySchema),
    },
  },
  latencyUpstream: {
    type: 'object',
    required: ['features', 'metrics', 'edge'],
    properties: { features: latencySchema, metrics: latencySchema, edge: latencySchema },
  },
  requestsSinceLastReport: pathMap({
    type: 'object',
    required: ['requests200', 'requests304'],
    properties: { requests200: integer, requests304: integer },
  }),
  connectedStreamingClients: integer,
  connectionConsumptionSinceLastReport: {
    type: 'object',
    required: ['features', 'metrics'],
    properties: { features: consumptionGroupsSchema, metrics: consumptionGroupsSchema },
  },
  requestConsumptionSinceLastReport: {
    type: 'array',
    maxItems: MAX_INSTANCE_DATA_ENTRIES,
    items: {
      type: 'object',
      required: ['meteredGroup', 'requests'],
      properties: { meteredGroup: nameSchema, requests: integer },
    },
  },
  edgeApiKeyRevisionIds: {
    type: 'array',
    maxItems: MAX_API_KEY_REVISIONS,
    items: {
      type: 'object',
      required: ['environment', 'projects', 'revisionId', 'lastUpdated'],
      properties: {
        environment: optionalNameSchema,
        projects: { type: 'array', maxItems: MAX_API_KEY_REVISIONS, items: nameSchema },
        revisionId: integer,
        lastUpdated: instantSchema,
      },
    },
  },
} as const;

/** What Edge's deserializer requires (`hosting`, `region`, `processMetrics` and the revisions may be absent). */
const required = [
  'identifier',
  'appName',
  'edgeVersion',
  'started',
  'traffic',
  'latencyUpstream',
  'requestsSinceLastReport',
  'connectedStreamingClients',
  'connectedEdges',
  'connectionConsumptionSinceLastReport',
  'requestConsumptionSinceLastReport',
] as const;

/** An instance whose `connectedEdges` must be empty: the deepest level a body may describe. */
const leafInstanceSchema = {
  type: 'object',
  required,
  properties: {
    ...instanceProperties,
    connectedEdges: { type: 'array', maxItems: 0 },
  },
} as const;

/** An instance with relays below it, each described by `below`. */
function instanceWith<const Below>(below: Below) {
  return {
    type: 'object',
    required,
    properties: {
      ...instanceProperties,
      connectedEdges: { type: 'array', maxItems: MAX_CONNECTED_EDGES, items: below },
    },
  } as const;
}

/**
 * `POST /api/client/metrics/edge`: one Edge's (or flags-proxy's) instance data, with the relays
 * connected to it down to `MAX_INSTANCE_DATA_DEPTH` levels below it (deeper → 400).
 */
export const edgeInstanceDataSchema = instanceWith(instanceWith(instanceWith(leafInstanceSchema)));

export type EdgeInstanceData = FromSchema<typeof edgeInstanceDataSchema>;
