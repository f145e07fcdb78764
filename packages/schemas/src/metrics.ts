import type { FromSchema } from 'json-schema-to-ts';
import { sdkInstanceProperties } from './register.js';

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

export type ToggleMetrics = FromSchema<typeof toggleMetricsSchema>;
export type MetricsBucket = FromSchema<typeof metricsBucketSchema>;
export type ClientMetrics = FromSchema<typeof clientMetricsSchema>;
export type UsageReport = FromSchema<typeof usageReportSchema>;
