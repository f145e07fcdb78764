import type { FromSchema } from 'json-schema-to-ts';
import { overrideSchema } from './client-features.js';
import { CONSTRAINT_OPERATORS } from './constraint-operators.js';

/**
 * `POST /api/admin/features-batch/{import,validate,export}`, shaped as Unleash's, so an export
 * from Unleash imports as it stands. Accepts the union of the fields older and newer Unleash
 * exports carry; unknown fields are ignored.
 */

const name = { type: 'string', minLength: 1, maxLength: 100 } as const;
const nullableDate = { type: ['string', 'null'], format: 'date-time' } as const;

export const importConstraintSchema = {
  type: 'object',
  required: ['contextName', 'operator'],
  properties: {
    contextName: { type: 'string', minLength: 1 },
    operator: {
      type: 'string',
      enum: CONSTRAINT_OPERATORS,
    },
    caseInsensitive: { type: 'boolean' },
    inverted: { type: 'boolean' },
    values: { type: 'array', items: { type: 'string' } },
    value: { type: 'string' },
  },
} as const;

const importPayloadSchema = {
  type: 'object',
  required: ['type', 'value'],
  properties: {
    type: { type: 'string', enum: ['json', 'csv', 'string', 'number'] },
    value: { type: 'string' },
  },
} as const;

export const importStrategyVariantSchema = {
  type: 'object',
  required: ['name', 'weight', 'weightType', 'stickiness'],
  properties: {
    name: { type: 'string', minLength: 1 },
    weight: { type: 'integer', minimum: 0, maximum: 1000 },
    weightType: { type: 'string', enum: ['variable', 'fix'] },
    stickiness: { type: 'string' },
    payload: importPayloadSchema,
  },
} as const;

export const importVariantSchema = {
  type: 'object',
  required: ['name', 'weight'],
  properties: {
    name: { type: 'string', minLength: 1 },
    weight: { type: 'number', minimum: 0, maximum: 1000 },
    weightType: { type: 'string', enum: ['variable', 'fix'] },
    stickiness: { type: 'string' },
    payload: importPayloadSchema,
    overrides: { type: 'array', items: overrideSchema },
  },
} as const;

export const importStrategySchema = {
  type: 'object',
  required: ['name'],
  properties: {
    id: { type: 'string' },
    name: { type: 'string', minLength: 1 },
    title: { type: ['string', 'null'] },
    disabled: { type: ['boolean', 'null'] },
    featureName: { type: 'string' },
    sortOrder: { type: 'number' },
    segments: { type: 'array', items: { type: 'number' } },
    constraints: { type: 'array', items: importConstraintSchema },
    variants: { type: 'array', items: importStrategyVariantSchema },
    parameters: { type: 'object', additionalProperties: { type: ['string', 'number', 'boolean'] } },
  },
} as const;

export const importFeatureEnvironmentSchema = {
  type: 'object',
  required: ['name', 'enabled'],
  properties: {
    name: { type: 'string' },
    featureName: { type: 'string' },
    environment: { type: 'string' },
    type: { type: 'string' },
    enabled: { type: 'boolean' },
    sortOrder: { type: 'number' },
    variantCount: { type: 'number' },
    strategies: { type: 'array', items: importStrategySchema },
    variants: { type: 'array', items: importVariantSchema },
    lastSeenAt: nullableDate,
    hasStrategies: { type: 'boolean' },
    hasEnabledStrategies: { type: 'boolean' },
  },
} as const;

const tagSchema = {
  type: 'object',
  required: ['value', 'type'],
  properties: {
    value: { type: 'string', minLength: 2, maxLength: 50 },
    type: { type: 'string', minLength: 2, maxLength: 50 },
  },
} as const;

const parentDependencySchema = {
  type: 'object',
  required: ['feature'],
  properties: {
    feature: { type: 'string', minLength: 1 },
    enabled: { type: 'boolean' },
    variants: { type: 'array', items: { type: 'string' } },
  },
} as const;

const userRefSchema = {
  type: 'object',
  required: ['id', 'name', 'imageUrl'],
  properties: {
    id: { type: 'integer' },
    name: { type: 'string' },
    imageUrl: { type: 'string' },
  },
} as const;

export const importFeatureSchema = {
  type: 'object',
  required: ['name'],
  properties: {
    name,
    type: { type: 'string' },
    description: { type: ['string', 'null'] },
    archived: { type: 'boolean' },
    project: { type: 'string' },
    enabled: { type: 'boolean' },
    stale: { type: 'boolean' },
    favorite: { type: 'boolean' },
    impressionData: { type: 'boolean' },
    createdAt: nullableDate,
    createdBy: userRefSchema,
    archivedAt: nullableDate,
    lastSeenAt: nullableDate,
    environments: { type: 'array', items: importFeatureEnvironmentSchema },
    variants: { type: 'array', items: importVariantSchema },
    strategies: { type: 'array' },
    tags: { type: ['array', 'null'], items: tagSchema },
    children: { type: 'array', items: { type: 'string' } },
    lifecycle: {
      type: 'object',
      required: ['stage', 'enteredStageAt'],
      properties: {
        stage: { type: 'string', enum: ['initial', 'pre-live', 'live', 'completed', 'archived'] },
        enteredStageAt: { type: 'string', format: 'date-time' },
      },
    },
    dependencies: { type: 'array', items: parentDependencySchema },
    collaborators: {
      type: 'object',
      required: ['users'],
      properties: { users: { type: 'array', items: userRefSchema } },
    },
  },
} as const;

export const importContextFieldSchema = {
  type: 'object',
  required: ['name'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 100 },
    description: { type: ['string', 'null'] },
    stickiness: { type: 'boolean' },
    sortOrder: { type: 'integer' },
    createdAt: nullableDate,
    usedInFeatures: { type: ['integer', 'null'] },
    usedInProjects: { type: ['integer', 'null'] },
    legalValues: {
      type: 'array',
      items: {
        type: 'object',
        required: ['value'],
        properties: { value: { type: 'string' }, description: { type: 'string' } },
      },
    },
  },
} as const;

export const importFeatureTagSchema = {
  type: 'object',
  required: ['featureName'],
  properties: {
    featureName: { type: 'string' },
    tagType: { type: 'string' },
    tagValue: { type: 'string' },
    type: { type: 'string' },
    value: { type: 'string' },
    createdByUserId: { type: ['number', 'null'] },
  },
} as const;

export const exportResultSchema = {
  type: 'object',
  required: ['features', 'featureStrategies', 'tagTypes'],
  properties: {
    features: { type: 'array', items: importFeatureSchema },
    featureStrategies: { type: 'array', items: importStrategySchema },
    featureEnvironments: { type: 'array', items: importFeatureEnvironmentSchema },
    contextFields: { type: 'array', items: importContextFieldSchema },
    featureTags: { type: 'array', items: importFeatureTagSchema },
    segments: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'name'],
        properties: { id: { type: 'number' }, name: { type: 'string' } },
      },
    },
    tagTypes: {
      type: 'array',
      items: {
        type: 'object',
        required: ['name'],
        properties: {
          name: { type: 'string', minLength: 2, maxLength: 50 },
          description: { type: 'string' },
          icon: { type: ['string', 'null'] },
        },
      },
    },
    dependencies: {
      type: 'array',
      items: {
        type: 'object',
        required: ['feature', 'dependencies'],
        properties: {
          feature: { type: 'string' },
          dependencies: { type: 'array', items: parentDependencySchema },
        },
      },
    },
  },
} as const;

export const importRequestSchema = {
  type: 'object',
  required: ['project', 'environment', 'data'],
  properties: {
    project: { type: 'string', minLength: 1 },
    environment: { type: 'string', minLength: 1 },
    data: exportResultSchema,
  },
} as const;

/**
 * What `/export` selects: the features with `tag` (a value, or `type:value`), else the named
 * `features` (archived ones too), else the active features of `project`, else all active ones.
 * `downloadFile` is accepted as Unleash sends it; the answer is the same JSON either way.
 */
export const exportQuerySchema = {
  type: 'object',
  required: ['environment'],
  properties: {
    environment: { type: 'string', minLength: 1 },
    features: { type: 'array', items: { type: 'string', minLength: 1 } },
    tag: { type: 'string' },
    project: { type: 'string' },
    downloadFile: { type: 'boolean' },
  },
} as const;

const validationItemSchema = {
  type: 'object',
  required: ['message', 'affectedItems'],
  properties: {
    message: { type: 'string' },
    affectedItems: { type: 'array', items: { type: 'string' } },
  },
} as const;

export const importValidationSchema = {
  type: 'object',
  required: ['errors', 'warnings', 'permissions'],
  properties: {
    errors: { type: 'array', items: validationItemSchema },
    warnings: { type: 'array', items: validationItemSchema },
    permissions: { type: 'array', items: validationItemSchema },
  },
} as const;

export type ImportConstraint = FromSchema<typeof importConstraintSchema>;
export type ImportStrategy = FromSchema<typeof importStrategySchema>;
export type ImportVariant = FromSchema<typeof importVariantSchema>;
export type ImportFeature = FromSchema<typeof importFeatureSchema>;
export type ImportFeatureEnvironment = FromSchema<typeof importFeatureEnvironmentSchema>;
export type ImportContextField = FromSchema<typeof importContextFieldSchema>;
export type ImportFeatureTag = FromSchema<typeof importFeatureTagSchema>;
export type ExportResult = FromSchema<typeof exportResultSchema>;
export type ImportRequest = FromSchema<typeof importRequestSchema>;
export type ExportQuery = FromSchema<typeof exportQuerySchema>;
export type ImportValidation = FromSchema<typeof importValidationSchema>;
