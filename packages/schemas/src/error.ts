import type { FromSchema } from 'json-schema-to-ts';

/**
 * Every JSON error body of both services: `{ code, name, message, details: [{ message }] }`.
 * `code` is the stable key of the service's error catalogue (docs/reference/errors.md): several
 * codes may share a name.
 */
export const errorSchema = {
  type: 'object',
  required: ['code', 'name', 'message', 'details'],
  properties: {
    code: {
      type: 'string',
      description: 'The error’s stable code, as docs/reference/errors.md lists it.',
    },
    name: { type: 'string' },
    message: { type: 'string' },
    details: {
      type: 'array',
      items: {
        type: 'object',
        required: ['message'],
        properties: { message: { type: 'string' } },
      },
    },
  },
} as const;

export type ErrorBody = FromSchema<typeof errorSchema>;
