import type { FromSchema } from 'json-schema-to-ts';

/** Every JSON error body of both services: `{ name, message, details: [{ message }] }`. */
export const errorSchema = {
  type: 'object',
  required: ['name', 'message', 'details'],
  properties: {
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
