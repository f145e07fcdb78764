import type { FromSchema } from 'json-schema-to-ts';
import { sdkInstanceProperties } from './register.js';
import {
  instantSchema,
  MAX_REGISTERED_STRATEGIES,
  MAX_REPORT_FLAGS,
  MAX_REPORT_VARIANTS,
  MAX_TEXT_LENGTH,
  nameSchema,
  optionalNameSchema,
  propertyNameSchema,
  textSchema,
} from './report-limits.js';

/** The largest count accepted for one flag in one bucket (a PostgreSQL `integer`). */
export const MAX_METRIC_COUNT = 2_147_483_647;

const count = { type: 'integer', minimum: 0, maximum: MAX_METRIC_COUNT } as const;

const instant = instantSchema;

export const toggleMetricsSchema = {
  type: 'object',
  required: ['yes', 'no'],
  properties: {
    yes: count,
    no: count,
    variants: {
      type: ['object', 'null'],
      maxProperties: MAX_REPORT_VARIANTS,
      propertyNames: propertyNameSchema,
      additionalProperties: count,
    },
  },
} as const;

export const metricsBucketSchema = {
  type: 'object',
  required: ['start', 'stop', 'toggles'],
  properties: {
    start: instant,
    stop: instant,
    toggles: {
      type: 'object',
      maxProperties: MAX_REPORT_FLAGS,
      propertyNames: propertyNameSchema,
      additionalProperties: toggleMetricsSchema,
    },
  },
} as const;

/** Label values of one impact-metric sample (SDKs add `appName`, `environment`, `featureName`). */
const impactLabels = {
  type: ['object', 'null'],
  maxProperties: 32,
  propertyNames: propertyNameSchema,
  additionalProperties: textSchema(MAX_TEXT_LENGTH),
} as const;

const impactName = nameSchema;
const impactHelp = textSchema(1024);
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

/** The most entries of each list one `POST /api/client/metrics/bulk` may carry (more → 400). */
export const MAX_BULK_METRICS = 10_000;
export const MAX_BULK_APPLICATIONS = 1_000;

/**
 * One counted flag of a bulk report: an application's yes/no (and variant) counts for a flag in
 * an environment, from `timestamp` on (Unleash Edge sends its bucket's start). Unleash's
 * `clientMetricsEnvSchema`; SDK details such as `sdkVersion` may ride along and are ignored.
 */
export const bulkMetricSchema = {
  type: 'object',
  required: ['featureName', 'appName', 'environment', 'timestamp', 'yes', 'no'],
  properties: {
    featureName: nameSchema,
    appName: nameSchema,
    environment: optionalNameSchema,
    timestamp: instant,
    ...toggleMetricsSchema.properties,
  },
} as const;

/**
 * One application of a bulk report: an SDK instance that registered with the sender (Unleash's
 * `bulkRegistrationSchema`, as Unleash Edge fills it: most fields may be null), with the relays
 * (`connectVia`) it reached the upstream through.
 */
export const bulkApplicationSchema = {
  type: 'object',
  required: ['appName'],
  properties: {
    ...sdkInstanceProperties,
    environment: { ...optionalNameSchema, type: ['string', 'null'] },
    connectionId: { ...optionalNameSchema, type: ['string', 'null'] },
    projects: { type: ['array', 'null'], items: nameSchema, maxItems: 1000 },
    interval: { type: 'number', minimum: 0 },
    started: instant,
    strategies: { type: 'array', items: nameSchema, maxItems: MAX_REGISTERED_STRATEGIES },
    sdkType: { ...textSchema(32), type: ['string', 'null'] },
    connectVia: {
      type: 'array',
      maxItems: 16,
      items: {
        type: 'object',
        required: ['appName', 'instanceId'],
        properties: {
          appName: optionalNameSchema,
          instanceId: optionalNameSchema,
        },
      },
    },
  },
} as const;

/**
 * `POST /api/client/metrics/bulk`: Unleash Edge's batched metrics, `{ applications, metrics,
 * impactMetrics? }`, with a client token, for the token's environment (entries of other
 * environments are skipped, as unleash-server skips them).
 */
export const bulkMetricsSchema = {
  type: 'object',
  required: ['applications', 'metrics'],
  properties: {
    applications: { type: 'array', items: bulkApplicationSchema, maxItems: MAX_BULK_APPLICATIONS },
    metrics: { type: 'array', items: bulkMetricSchema, maxItems: MAX_BULK_METRICS },
    impactMetrics: { ...impactMetricsSchema, type: ['array', 'null'] },
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
