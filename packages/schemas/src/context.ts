import type { FromSchema } from 'json-schema-to-ts';

/** The context's named fields as callers send them; any other field is a property. */
export const contextFieldProperties = {
  appName: { type: 'string' },
  environment: { type: 'string' },
  userId: { type: 'string' },
  sessionId: { type: 'string' },
  remoteAddress: { type: 'string' },
  currentTime: { type: 'string' },
} as const;

/** The evaluation context as callers send it (`POST /proxy` body `context`). */
export const contextSchema = {
  type: 'object',
  properties: {
    ...contextFieldProperties,
    properties: { type: 'object', additionalProperties: { type: 'string' } },
  },
  additionalProperties: true,
} as const;

/**
 * The evaluation context in a query (`GET /proxy`): the named fields, and `properties[name]=value`
 * or any other parameter as a property.
 */
export const contextQuerySchema = {
  type: 'object',
  description:
    'The evaluation context. `properties[name]=value` sets a property; any other parameter is a property too.',
  properties: {
    ...contextFieldProperties,
    currentTime: { type: 'string', description: 'A date-time; evaluation time when absent.' },
  },
} as const;

export type ContextInput = FromSchema<typeof contextSchema>;

/** The context the engine evaluates: strings only, `currentTime` parsed, extra fields in `properties`. */
export interface Context {
  appName?: string;
  environment?: string;
  userId?: string;
  sessionId?: string;
  remoteAddress?: string;
  currentTime?: Date;
  properties?: Record<string, string | undefined>;
}
