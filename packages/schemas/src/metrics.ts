import type { FromSchema } from 'json-schema-to-ts';
import { clientRegisterSchema, sdkInstanceProperties } from './register.js';

/** The largest count accepted for one flag in one bucket (a PostgreSQL `integer`). */
export const MAX_METRIC_COUNT = 2_147_483_647;

const count = { type: 'integer', minimum: 0, maximum: MAX_METRIC_COUNT } as const;

/** A bucket boundary: an ISO 8601 date-time string (what the SDKs send) or epoch milliseconds. */
const instant = { type: ['string', 'number'], format: 'date-time' } as const;

export const toggleMetricsSchema = {
  type: 'object',
  required: ['yes', 'no'],
  properties: {
    yes: count,
    no: count,
    variants: { type: ['object', 'null'], additionalProperties: count },
  },
} as const;

export const metricsBucketSchema = {
  type: 'object',
  required: ['start', 'stop', 'toggles'],
  properties: {
    start: instant,
    stop: instant,
    toggles: { type: 'object', additionalProperties: toggleMetricsSchema },
  },
} as const;

/** Label values of one impact-metric sample (SDKs add `appName`, `environment`, `featureName`). */
const impactLabels = {
  type: ['object', 'null'],
  maxProperties: 32,
  additionalProperties: { type: 'string', maxLength: 255 },
} as const;

const impactName = { type: 'string', minLength: 1, maxLength: 255 } as const;
const impactHelp = { type: 'string', maxLength: 1024 } as const;
const impactCount = { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER } as const;

/** A counter's or gauge's value for one set of labels. */
export const numericSampleSchema = {
  type: 'object',
  required: ['value'],
  properties: { labels: impactLabels, value: { type: 'number' } },
} as const;

/** A histogram for one set of labels: cumulative counts per upper bound (`le`). */
export const bucketSampleSchema = {
  type: 'object',
  required: ['count', 'sum', 'buckets'],
  properties: {
    labels: impactLabels,
    count: impactCount,
    sum: { type: 'number' },
    buckets: {
      type: 'array',
      maxItems: 100,
      items: {
        type: 'object',
        required: ['le', 'count'],
        properties: {
          le: { anyOf: [{ type: 'number' }, { const: '+Inf' }] },
          count: impactCount,
        },
      },
    },
  },
} as const;

/**
 * One impact metric (`impactMetrics` of an SDK's metrics report and of Edge's bulk body): a
 * counter, gauge or histogram with its samples, as the SDKs' in-memory registry collects them.
 */
export const impactMetricSchema = {
  anyOf: [
    {
      type: 'object',
      required: ['name', 'type', 'samples'],
      properties: {
        name: impactName,
        help: impactHelp,
        type: { enum: ['counter', 'gauge'] },
        samples: { type: 'array', maxItems: 1000, items: numericSampleSchema },
      },
    },
    {
      type: 'object',
      required: ['name', 'type', 'samples'],
      properties: {
        name: impactName,
        help: impactHelp,
        type: { const: 'histogram' },
        samples: { type: 'array', maxItems: 1000, items: bucketSampleSchema },
      },
    },
  ],
} as const;

export const impactMetricsSchema = {
  type: 'array',
  maxItems: 1000,
  items: impactMetricSchema,
} as const;

/**
 * `POST /api/client/metrics`: one SDK instance's usage counts for a time window.
 * Lenient about extra top-level fields (SDKs add platform details over time).
 */
export const clientMetricsSchema = {
  type: 'object',
  required: ['appName'],
  properties: {
    ...sdkInstanceProperties,
    bucket: { ...metricsBucketSchema, type: ['object', 'null'] },
    impactMetrics: impactMetricsSchema,
  },
} as const;

/**
 * `POST /proxy/client/metrics` of flags-proxy: a frontend or server-side SDK's report, which must
 * carry its bucket (registrations share `clientMetricsSchema` without one).
 */
export const usageReportSchema = {
  ...clientMetricsSchema,
  required: ['appName', 'bucket'],
  properties: { ...clientMetricsSchema.properties, bucket: metricsBucketSchema },
} as const;

/**
 * An application in Edge's bulk body: an SDK registration with the environment it runs in and the
 * relays (`connectVia`) it reached the upstream through. unleash-server requires `appName`,
 * `instanceId` and `environment`.
 */
export const bulkApplicationSchema = {
  type: 'object',
  required: ['appName', 'instanceId', 'environment'],
  properties: {
    ...clientRegisterSchema.properties,
    instanceId: { type: 'string', maxLength: 255 },
    connectVia: {
      type: 'array',
      maxItems: 16,
      items: {
        type: 'object',
        required: ['appName', 'instanceId'],
        properties: {
          appName: { type: 'string', maxLength: 255 },
          instanceId: { type: 'string', maxLength: 255 },
        },
      },
    },
    sdkType: { enum: ['frontend', 'backend', null] },
    projects: { type: 'array', maxItems: 1000, items: { type: 'string', maxLength: 255 } },
  },
} as const;

/** One flag's counts of one application in one environment (Edge's and unleash-server's `clientMetricsEnv`). */
export const bulkMetricSchema = {
  type: 'object',
  required: ['featureName', 'appName', 'environment'],
  properties: {
    featureName: { type: 'string', minLength: 1, maxLength: 255 },
    appName: sdkInstanceProperties.appName,
    environment: { type: 'string', maxLength: 255 },
    timestamp: instant,
    ...toggleMetricsSchema.properties,
  },
} as const;

/**
 * `POST /api/client/metrics/bulk`: Unleash Edge's batched metrics, `{ applications, metrics,
 * impactMetrics? }`, with a client token; the upstream keeps the metrics of the token's environment.
 */
export const bulkMetricsSchema = {
  type: 'object',
  required: ['applications', 'metrics'],
  properties: {
    applications: { type: 'array', items: bulkApplicationSchema },
    metrics: { type: 'array', items: bulkMetricSchema },
    impactMetrics: impactMetricsSchema,
  },
} as const;

export type ToggleMetrics = FromSchema<typeof toggleMetricsSchema>;
export type MetricsBucket = FromSchema<typeof metricsBucketSchema>;
export type ClientMetrics = FromSchema<typeof clientMetricsSchema>;
export type UsageReport = FromSchema<typeof usageReportSchema>;
export type ImpactMetric = FromSchema<typeof impactMetricSchema>;
export type BulkApplication = FromSchema<typeof bulkApplicationSchema>;
export type BulkMetric = FromSchema<typeof bulkMetricSchema>;
export type BulkMetrics = FromSchema<typeof bulkMetricsSchema>;
