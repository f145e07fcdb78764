import type { FromSchema } from 'json-schema-to-ts';

/**
 * The Unleash client API payload (`GET /api/client/features`): what flags-server serves,
 * what flags-proxy syncs and what the engine compiles. Validation is deliberately lenient
 * (unknown fields pass) because upstreams add fields over time; the engine copes with odd values.
 */

export const payloadSchema = {
  type: 'object',
  required: ['type', 'value'],
  properties: {
    type: { type: 'string' },
    value: { type: 'string' },
  },
} as const;

export const constraintSchema = {
  type: 'object',
  required: ['contextName', 'operator'],
  properties: {
    contextName: { type: 'string' },
    operator: { type: 'string' },
    values: { type: 'array', items: { type: 'string' } },
    value: { type: 'string' },
    inverted: { type: 'boolean' },
    caseInsensitive: { type: 'boolean' },
  },
} as const;

export const overrideSchema = {
  type: 'object',
  required: ['contextName', 'values'],
  properties: {
    contextName: { type: 'string' },
    values: { type: 'array', items: { type: 'string' } },
  },
} as const;

export const variantDefinitionSchema = {
  type: 'object',
  required: ['name', 'weight'],
  properties: {
    name: { type: 'string' },
    weight: { type: 'number' },
    weightType: { type: 'string' },
    stickiness: { type: 'string' },
    payload: payloadSchema,
    overrides: { type: 'array', items: overrideSchema },
  },
} as const;

export const strategySchema = {
  type: 'object',
  required: ['name'],
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    title: { type: ['string', 'null'] },
    disabled: { type: ['boolean', 'null'] },
    sortOrder: { type: 'number' },
    parameters: {
      type: 'object',
      additionalProperties: { type: ['string', 'number', 'boolean'] },
    },
    constraints: { type: 'array', items: constraintSchema },
    segments: { type: 'array', items: { type: 'number' } },
    variants: { type: 'array', items: variantDefinitionSchema },
  },
} as const;

export const dependencySchema = {
  type: 'object',
  required: ['feature'],
  properties: {
    feature: { type: 'string' },
    enabled: { type: 'boolean' },
    variants: { type: 'array', items: { type: 'string' } },
  },
} as const;

export const clientFeatureSchema = {
  type: 'object',
  required: ['name', 'enabled'],
  properties: {
    name: { type: 'string' },
    type: { type: 'string' },
    description: { type: ['string', 'null'] },
    project: { type: 'string' },
    enabled: { type: 'boolean' },
    stale: { type: 'boolean' },
    impressionData: { type: ['boolean', 'null'] },
    strategies: { type: 'array', items: strategySchema },
    variants: { type: ['array', 'null'], items: variantDefinitionSchema },
    dependencies: { type: 'array', items: dependencySchema },
  },
} as const;

export const segmentSchema = {
  type: 'object',
  required: ['id', 'constraints'],
  properties: {
    id: { type: 'number' },
    name: { type: 'string' },
    constraints: { type: 'array', items: constraintSchema },
  },
} as const;

export const clientFeaturesSchema = {
  type: 'object',
  required: ['version', 'features'],
  properties: {
    version: { type: 'number' },
    features: { type: 'array', items: clientFeatureSchema },
    segments: { type: 'array', items: segmentSchema },
    query: { type: 'object' },
    meta: {
      type: 'object',
      properties: {
        revisionId: { type: 'number' },
        etag: { type: ['string', 'null'] },
        queryHash: { type: 'string' },
      },
    },
  },
} as const;

export type Payload = FromSchema<typeof payloadSchema>;
export type Constraint = FromSchema<typeof constraintSchema>;
export type VariantDefinition = FromSchema<typeof variantDefinitionSchema>;
export type Strategy = FromSchema<typeof strategySchema>;
export type Dependency = FromSchema<typeof dependencySchema>;
export type ClientFeature = FromSchema<typeof clientFeatureSchema>;
export type Segment = FromSchema<typeof segmentSchema>;
export type ClientFeatures = FromSchema<typeof clientFeaturesSchema>;
