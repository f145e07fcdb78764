import {
  importConstraintSchema,
  importStrategyVariantSchema,
  importVariantSchema,
} from '@flags/schemas';

/**
 * Request shapes of the single-flag admin API (unleash-server 8.2's). Unknown fields are
 * ignored, not refused: clients send whole objects they read back.
 */

/** A flag name: URL-friendly, as unleash-server requires. */
export const flagNameSchema = {
  type: 'string',
  minLength: 1,
  maxLength: 100,
  pattern: '^[A-Za-z0-9_.~-]+$',
} as const;

const text = { type: ['string', 'null'], maxLength: 10_000 } as const;

export const flagParams = {
  type: 'object',
  required: ['project', 'feature'],
  properties: { project: { type: 'string' }, feature: { type: 'string' } },
} as const;

export const environmentParams = {
  type: 'object',
  required: ['project', 'feature', 'environment'],
  properties: {
    project: { type: 'string' },
    feature: { type: 'string' },
    environment: { type: 'string' },
  },
} as const;

export const strategyParams = {
  type: 'object',
  required: ['project', 'feature', 'environment', 'strategyId'],
  properties: {
    project: { type: 'string' },
    feature: { type: 'string' },
    environment: { type: 'string' },
    strategyId: { type: 'string' },
  },
} as const;

export const createFlagSchema = {
  type: 'object',
  required: ['name'],
  properties: {
    name: flagNameSchema,
    type: { type: 'string', minLength: 1 },
    description: text,
    impressionData: { type: 'boolean' },
    stale: { type: 'boolean' },
  },
} as const;

export const updateFlagSchema = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    type: { type: 'string', minLength: 1 },
    description: text,
    impressionData: { type: 'boolean' },
    stale: { type: 'boolean' },
  },
} as const;

/** RFC 6902 JSON Patch: a list of operations. */
export const jsonPatchSchema = {
  type: 'array',
  maxItems: 1000,
  items: {
    type: 'object',
    required: ['op', 'path'],
    properties: {
      op: { type: 'string', enum: ['add', 'remove', 'replace', 'move', 'copy', 'test'] },
      path: { type: 'string' },
      from: { type: 'string' },
      value: {},
    },
  },
} as const;

export const strategyBodySchema = {
  type: 'object',
  required: ['name'],
  properties: {
    name: { type: 'string', minLength: 1 },
    title: { type: ['string', 'null'], maxLength: 1000 },
    disabled: { type: ['boolean', 'null'] },
    sortOrder: { type: 'number' },
    constraints: { type: 'array', items: importConstraintSchema },
    variants: { type: 'array', items: importStrategyVariantSchema },
    parameters: { type: 'object', additionalProperties: { type: ['string', 'number', 'boolean'] } },
    segments: { type: 'array', items: { type: 'integer' } },
  },
} as const;

export const variantsSchema = {
  type: 'array',
  maxItems: 1000,
  items: importVariantSchema,
} as const;

export const sortOrderSchema = {
  type: 'array',
  items: {
    type: 'object',
    required: ['id', 'sortOrder'],
    properties: { id: { type: 'string' }, sortOrder: { type: 'integer' } },
  },
} as const;

export const dependencySchema = {
  type: 'object',
  required: ['feature'],
  properties: {
    feature: { type: 'string', minLength: 1 },
    enabled: { type: 'boolean' },
    variants: { type: 'array', items: { type: 'string' } },
  },
} as const;
