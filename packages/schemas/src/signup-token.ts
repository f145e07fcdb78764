import type { FromSchema } from 'json-schema-to-ts';

const dateTime = { type: 'string', format: 'date-time' } as const;

/** A role: root roles (Admin, Editor, Viewer) apply instance-wide, project roles to one project. */
export const roleSchema = {
  type: 'object',
  required: ['id', 'type', 'name'],
  additionalProperties: false,
  properties: {
    id: { type: 'integer' },
    type: { type: 'string', description: 'root (instance-wide) or project' },
    name: { type: 'string' },
    description: { type: 'string' },
    project: { type: ['string', 'null'] },
  },
} as const;

/** A user as the admin API shows it. Passwords never appear in any response. */
export const userSchema = {
  type: 'object',
  required: ['id'],
  additionalProperties: false,
  properties: {
    id: { type: 'integer' },
    isAPI: { type: 'boolean', description: 'Deprecated.' },
    name: { type: ['string', 'null'] },
    email: { type: 'string' },
    username: { type: ['string', 'null'] },
    imageUrl: { type: 'string' },
    inviteLink: { type: 'string' },
    loginAttempts: { type: 'integer' },
    emailSent: { type: 'boolean' },
    rootRole: { type: 'integer' },
    seenAt: { ...dateTime, type: ['string', 'null'] },
    createdAt: dateTime,
    accountType: { type: 'string', enum: ['User', 'Service Account'] },
    permissions: { type: 'array', items: { type: 'string' }, description: 'Deprecated.' },
    scimId: { type: ['string', 'null'] },
    disabled: {
      type: 'boolean',
      description: 'An Admin disabled the user: they cannot log in or use a token until enabled.',
    },
  },
} as const;

/**
 * `GET /api/admin/invite-link/tokens/:token`: one public signup token. The secret and the link
 * carrying it are in the answer that creates the token and nowhere else: afterwards `secret` is the
 * masked form (`ab12…`) and `url` is null. `id` (not in Unleash's shape) names the token on the
 * admin routes once the secret is no longer shown.
 */
export const publicSignupTokenSchema = {
  type: 'object',
  required: ['secret', 'url', 'name', 'enabled', 'expiresAt', 'createdAt', 'createdBy', 'role'],
  additionalProperties: false,
  properties: {
    id: { type: 'integer' },
    secret: { type: 'string', description: 'Whole when created, masked (`ab12…`) afterwards.' },
    url: {
      type: ['string', 'null'],
      description: 'The invite link when created, null afterwards.',
    },
    name: { type: 'string' },
    enabled: { type: 'boolean', description: 'Always false once the token has expired.' },
    expiresAt: dateTime,
    createdAt: dateTime,
    createdBy: { type: ['string', 'null'] },
    users: { type: ['array', 'null'], items: userSchema },
    role: roleSchema,
    allowAdmin: {
      type: 'boolean',
      description: 'Created with allowAdmin: a link with the Admin role admits signups only then.',
    },
  },
} as const;

export const publicSignupTokensSchema = {
  type: 'object',
  required: ['tokens'],
  additionalProperties: false,
  properties: { tokens: { type: 'array', items: publicSignupTokenSchema } },
} as const;

/**
 * `POST /api/admin/invite-link/tokens`. `role`: a root role id or name (default Viewer). Anyone
 * holding the link signs up with that role, so the Admin role needs `allowAdmin: true` as well.
 */
export const publicSignupTokenCreateSchema = {
  type: 'object',
  required: ['name', 'expiresAt'],
  additionalProperties: false,
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 255 },
    expiresAt: dateTime,
    role: { type: ['integer', 'string'], minLength: 1, maxLength: 255 },
    allowAdmin: { type: 'boolean' },
  },
} as const;

/** `PUT /api/admin/invite-link/tokens/:token`: at least one of the two. */
export const publicSignupTokenUpdateSchema = {
  type: 'object',
  minProperties: 1,
  additionalProperties: false,
  properties: {
    expiresAt: dateTime,
    enabled: { type: 'boolean' },
  },
} as const;

/** `POST /invite/:token/signup`. The role comes from the token, never from the body. */
export const createInvitedUserSchema = {
  type: 'object',
  required: ['name', 'email'],
  additionalProperties: false,
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 255 },
    email: { type: 'string', format: 'email', maxLength: 255 },
    username: { type: 'string', minLength: 1, maxLength: 255 },
    password: { type: 'string', minLength: 8, maxLength: 256 },
  },
} as const;

/**
 * `POST /invite/:token/signup`'s answer (202), the same whether the account was created or its
 * e-mail or user name was taken: unleash-server answers 201 with the user, which would tell anyone
 * holding a link who has an account. Only a created account's answer sets a session cookie.
 */
export const inviteSignupAnswerSchema = {
  type: 'object',
  required: ['message'],
  additionalProperties: false,
  properties: { message: { type: 'string' } },
} as const;

export type Role = FromSchema<typeof roleSchema>;
export type User = FromSchema<typeof userSchema>;
export type PublicSignupToken = FromSchema<typeof publicSignupTokenSchema>;
export type PublicSignupTokenCreate = FromSchema<typeof publicSignupTokenCreateSchema>;
export type PublicSignupTokenUpdate = FromSchema<typeof publicSignupTokenUpdateSchema>;
export type CreateInvitedUser = FromSchema<typeof createInvitedUserSchema>;
export type InviteSignupAnswer = FromSchema<typeof inviteSignupAnswerSchema>;
