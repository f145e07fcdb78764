import type { FromSchema } from 'json-schema-to-ts';

/** The evaluation context as callers send it (`POST /proxy` body `context`). */
export const contextSchema = {
  type: 'object',
  properties: {
    appName: { type: 'string' },
    environment: { type: 'string' },
    userId: { type: 'string' },
    sessionId: { type: 'string' },
    remoteAddress: { type: 'string' },
    currentTime: { type: 'string' },
    properties: { type: 'object', additionalProperties: { type: 'string' } },
  },
  additionalProperties: true,
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
