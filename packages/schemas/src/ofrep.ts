import type { FromSchema } from 'json-schema-to-ts';
import { contextFieldProperties } from './context.js';

/**
 * OFREP, the OpenFeature Remote Evaluation Protocol, as flags-proxy speaks it:
 * `POST /ofrep/v1/evaluate/flags/{key}` and the bulk `POST /ofrep/v1/evaluate/flags`.
 */

/** The reasons of an evaluation (OpenFeature's words, as the engine gives them). */
export const ofrepReasons = ['STATIC', 'TARGETING_MATCH', 'SPLIT', 'DISABLED', 'ERROR'] as const;

/** The protocol's error codes. */
export const ofrepErrorCodes = [
  'PARSE_ERROR',
  'TARGETING_KEY_MISSING',
  'INVALID_CONTEXT',
  'GENERAL',
  'FLAG_NOT_FOUND',
] as const;

const metadataValue = { type: ['string', 'number', 'boolean'] } as const;

/** The request body of both routes: the context, `targetingKey` standing for the user id. */
export const ofrepRequestSchema = {
  type: 'object',
  properties: {
    context: {
      type: 'object',
      description:
        '`targetingKey` is the user id; the context fields are read as in `/proxy`; any other attribute is a property.',
      properties: { targetingKey: { type: 'string' }, ...contextFieldProperties },
      additionalProperties: true,
    },
  },
} as const;

/** One flag's evaluation. */
export const ofrepEvaluationSchema = {
  type: 'object',
  required: ['key', 'value', 'reason', 'variant'],
  properties: {
    key: { type: 'string' },
    value: {
      description:
        'The variant payload parsed by its type (`json` → object, `number` → number, `string`/`csv` → string); `true`/`false` for flags without a variant.',
    },
    reason: { type: 'string', enum: ofrepReasons },
    variant: { type: 'string' },
    metadata: { type: 'object', additionalProperties: metadataValue },
  },
} as const;

/**
 * Where a static-context provider hears that the flags changed (OFREP ADR-0008): a Server-Sent
 * Events stream, by absolute `url` or by `endpoint` (`requestUri` against `origin`, by default the
 * provider's base URL's origin). The URL carries its own credential and is opaque to providers.
 */
export const ofrepEventStreamSchema = {
  type: 'object',
  required: ['type'],
  properties: {
    type: { type: 'string', description: '`sse`; providers ignore types they do not know.' },
    url: { type: 'string' },
    endpoint: {
      type: 'object',
      required: ['requestUri'],
      properties: { origin: { type: 'string' }, requestUri: { type: 'string' } },
    },
    inactivityDelaySec: {
      type: 'integer',
      minimum: 0,
      description: 'Seconds a hidden page keeps the stream open before closing it.',
    },
  },
} as const;

/** The bulk answer: the flags evaluated for the context, and where to hear of changes. */
export const ofrepBulkResponseSchema = {
  type: 'object',
  properties: {
    flags: { type: 'array', items: ofrepEvaluationSchema },
    eventStreams: { type: 'array', items: ofrepEventStreamSchema },
  },
} as const;

/**
 * The `data` of an event-stream message (`event: message`): the flags changed, evaluate again
 * (`etag`: the flag configuration's revision, sent back as `flagConfigEtag`).
 */
export const ofrepStreamEventSchema = {
  type: 'object',
  required: ['type'],
  properties: {
    type: { type: 'string', enum: ['refetchEvaluation'] },
    etag: { type: 'string' },
    lastModified: { type: ['string', 'integer'] },
  },
} as const;

/** An error answer of either route (`key` when one flag was asked for). */
export const ofrepErrorSchema = {
  type: 'object',
  required: ['errorCode'],
  properties: {
    key: { type: 'string' },
    errorCode: { type: 'string', enum: ofrepErrorCodes },
    errorDetails: { type: 'string' },
  },
} as const;

/** The path parameter of the single-flag route. */
export const ofrepFlagParamsSchema = {
  type: 'object',
  required: ['key'],
  properties: { key: { type: 'string' } },
} as const;

export type OfrepRequest = FromSchema<typeof ofrepRequestSchema>;
export type OfrepEvaluation = FromSchema<typeof ofrepEvaluationSchema>;
export type OfrepBulkResponse = FromSchema<typeof ofrepBulkResponseSchema>;
export type OfrepEventStream = FromSchema<typeof ofrepEventStreamSchema>;
export type OfrepStreamEvent = FromSchema<typeof ofrepStreamEventSchema>;
export type OfrepErrorBody = FromSchema<typeof ofrepErrorSchema>;
export type OfrepFlagParams = FromSchema<typeof ofrepFlagParamsSchema>;
export type OfrepErrorCode = (typeof ofrepErrorCodes)[number];
export type OfrepReason = (typeof ofrepReasons)[number];
