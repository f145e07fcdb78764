import type { FromSchema } from 'json-schema-to-ts';

/** The UTC end of the capture day, e.g. `2026-11-20T23:59:59.999Z`. */
const date = { type: 'string', format: 'date-time' } as const;
/** ISO week-year and ISO week (Monday start), zero-padded: `2026-47`. */
const week = { type: 'string', pattern: '^\\d{4}-\\d{2}$' } as const;
const count = { type: 'number', minimum: 0 } as const;

const userTrendSchema = {
  type: 'object',
  required: ['date', 'total', 'active', 'inactive'],
  additionalProperties: false,
  properties: { date, total: count, active: count, inactive: count },
} as const;

const flagTrendSchema = {
  type: 'object',
  required: ['date', 'total', 'active', 'stale', 'potentiallyStale'],
  additionalProperties: false,
  properties: { date, total: count, active: count, stale: count, potentiallyStale: count },
} as const;

const projectFlagTrendSchema = {
  type: 'object',
  required: ['week', 'project', 'health', 'date', 'total', 'active', 'stale', 'potentiallyStale'],
  additionalProperties: false,
  properties: {
    week,
    project: { type: 'string' },
    health: { type: 'number', minimum: 0, maximum: 100 },
    timeToProduction: { type: 'number', minimum: 0 },
    date,
    total: count,
    active: count,
    stale: count,
    potentiallyStale: count,
    users: count,
  },
} as const;

const metricsSummaryTrendSchema = {
  type: 'object',
  required: [
    'week',
    'date',
    'project',
    'totalRequests',
    'totalYes',
    'totalNo',
    'totalApps',
    'totalFlags',
    'totalEnvironments',
  ],
  additionalProperties: false,
  properties: {
    week,
    date,
    project: { type: 'string' },
    totalRequests: count,
    totalYes: count,
    totalNo: count,
    totalApps: count,
    totalFlags: count,
    totalEnvironments: count,
  },
} as const;

const environmentTypeTrendSchema = {
  type: 'object',
  required: ['date', 'week', 'environmentType', 'totalUpdates'],
  additionalProperties: false,
  properties: { date, week, environmentType: { type: 'string' }, totalUpdates: count },
} as const;

/** `GET /api/admin/insights`: usage of the instance as time series. */
export const instanceInsightsSchema = {
  type: 'object',
  required: [
    'userTrends',
    'flagTrends',
    'projectFlagTrends',
    'metricsSummaryTrends',
    'environmentTypeTrends',
  ],
  additionalProperties: false,
  properties: {
    userTrends: { type: 'array', items: userTrendSchema },
    flagTrends: { type: 'array', items: flagTrendSchema },
    projectFlagTrends: { type: 'array', items: projectFlagTrendSchema },
    metricsSummaryTrends: { type: 'array', items: metricsSummaryTrendSchema },
    environmentTypeTrends: { type: 'array', items: environmentTypeTrendSchema },
  },
} as const;

/** Query of `GET /api/admin/insights`: `yyyy-MM-dd` dates, both optional. */
export const instanceInsightsQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    from: { type: 'string', description: 'First day of the range, yyyy-MM-dd (UTC).' },
    to: { type: 'string', description: 'Last day of the range, yyyy-MM-dd (UTC).' },
  },
} as const;

export type UserTrend = FromSchema<typeof userTrendSchema>;
export type FlagTrend = FromSchema<typeof flagTrendSchema>;
export type ProjectFlagTrend = FromSchema<typeof projectFlagTrendSchema>;
export type MetricsSummaryTrend = FromSchema<typeof metricsSummaryTrendSchema>;
export type EnvironmentTypeTrend = FromSchema<typeof environmentTypeTrendSchema>;
export type InstanceInsights = FromSchema<typeof instanceInsightsSchema>;
