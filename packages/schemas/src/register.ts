import type { FromSchema } from 'json-schema-to-ts';

/**
 * `POST /api/client/register`: an SDK instance announcing itself. Only `appName` is required;
 * unknown fields pass, because SDKs and proxies add fields over time.
 */
/** How an SDK instance names itself, in its registration and in every metrics report. */
export const sdkInstanceProperties = {
  appName: { type: 'string', minLength: 1, maxLength: 255 },
  instanceId: { type: ['string', 'null'], maxLength: 255 },
  environment: { type: 'string', maxLength: 255 },
  sdkVersion: { type: ['string', 'null'], maxLength: 255 },
  platformName: { type: 'string' },
  platformVersion: { type: 'string' },
  yggdrasilVersion: { type: ['string', 'null'] },
  specVersion: { type: 'string' },
} as const;

export const clientRegisterSchema = {
  type: 'object',
  required: ['appName'],
  properties: {
    ...sdkInstanceProperties,
    strategies: { type: 'array', items: { type: 'string' }, maxItems: 1000 },
    started: { type: ['string', 'number'], format: 'date-time' },
    interval: { type: 'number', minimum: 0 },
    sdkFlavor: { type: 'string', maxLength: 256 },
    sdkFlavorVersion: { type: 'string', maxLength: 32 },
    connectionId: { type: ['string', 'null'], maxLength: 255 },
  },
} as const;

export type ClientRegister = FromSchema<typeof clientRegisterSchema>;
