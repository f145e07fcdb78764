import { idSchema } from '../config-write.js';

/** A tag value as unleash-server takes it: 2 to 50 characters, not blank at either end. */
export const tagValueSchema = {
  type: 'string',
  minLength: 2,
  maxLength: 50,
  pattern: '^\\s*\\S.{0,48}\\S\\s*$',
} as const;

export const tagSchema = {
  type: 'object',
  required: ['type', 'value'],
  additionalProperties: false,
  properties: { type: idSchema, value: tagValueSchema },
} as const;

export const tagTypeSchema = {
  type: 'object',
  required: ['name'],
  properties: {
    // unleash-server refuses a one-character tag type name.
    name: { ...idSchema, minLength: 2 },
    description: { type: 'string', maxLength: 1000 },
    icon: { type: ['string', 'null'], maxLength: 100 },
    color: { type: ['string', 'null'], pattern: '^#[0-9A-Fa-f]{6}$' },
  },
} as const;

export const tagParams = {
  type: 'object',
  required: ['type', 'value'],
  properties: { type: { type: 'string' }, value: { type: 'string' } },
} as const;
