import type { FromSchema } from 'json-schema-to-ts';
import { contextSchema } from './context.js';

/**
 * The frontend (proxy) protocol of Unleash Proxy: `GET/POST /proxy` and `/proxy/all` answers and
 * the `POST` body. Field order of the answers is `name, enabled, variant, impressionData`.
 */

export const frontendVariantSchema = {
  type: 'object',
  required: ['name', 'enabled'],
  properties: {
    name: { type: 'string' },
    /** `true` for a real variant; `false` only for the fallback named `disabled`. */
    enabled: { type: 'boolean' },
    payload: {
      type: 'object',
      required: ['type', 'value'],
      properties: { type: { type: 'string' }, value: { type: 'string' } },
    },
    feature_enabled: { type: 'boolean' },
    featureEnabled: { type: 'boolean' },
  },
} as const;

export const frontendToggleSchema = {
  type: 'object',
  required: ['name', 'enabled', 'variant', 'impressionData'],
  properties: {
    name: { type: 'string' },
    enabled: { type: 'boolean' },
    variant: frontendVariantSchema,
    impressionData: { type: 'boolean' },
  },
} as const;

export const frontendResponseSchema = {
  type: 'object',
  required: ['toggles'],
  properties: { toggles: { type: 'array', items: frontendToggleSchema } },
} as const;

/** `POST /proxy` and `POST /proxy/all`: the context, and optionally the toggle names to evaluate. */
export const frontendRequestSchema = {
  type: 'object',
  properties: {
    context: contextSchema,
    toggles: { type: 'array', items: { type: 'string' } },
  },
} as const;

export type FrontendVariant = FromSchema<typeof frontendVariantSchema>;
export type FrontendToggle = FromSchema<typeof frontendToggleSchema>;
export type FrontendResponse = FromSchema<typeof frontendResponseSchema>;
export type FrontendRequest = FromSchema<typeof frontendRequestSchema>;
