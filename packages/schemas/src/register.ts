import type { FromSchema } from 'json-schema-to-ts';
import {
  instantSchema,
  MAX_REGISTERED_STRATEGIES,
  MAX_TEXT_LENGTH,
  nameSchema,
  optionalNameSchema,
  textSchema,
} from './report-limits.js';

/**
 * `POST /api/client/register`: an SDK instance announcing itself. Only `appName` is required;
 * unknown fields pass, because SDKs and proxies add fields over time.
 */
/** How an SDK instance names itself, in its registration and in every metrics report. */
export const sdkInstanceProperties = {
  appName: nameSchema,
  instanceId: { ...optionalNameSchema, type: ['string', 'null'] },
  environment: optionalNameSchema,
  sdkVersion: { ...textSchema(MAX_TEXT_LENGTH), type: ['string', 'null'] },
  platformName: textSchema(MAX_TEXT_LENGTH),
  platformVersion: textSchema(MAX_TEXT_LENGTH),
  yggdrasilVersion: { ...textSchema(MAX_TEXT_LENGTH), type: ['string', 'null'] },
  specVersion: textSchema(MAX_TEXT_LENGTH),
} as const;

export const clientRegisterSchema = {
  type: 'object',
  required: ['appName'],
  properties: {
    ...sdkInstanceProperties,
    strategies: { type: 'array', items: nameSchema, maxItems: MAX_REGISTERED_STRATEGIES },
    started: instantSchema,
    interval: { type: 'number', minimum: 0 },
    sdkFlavor: textSchema(256),
    sdkFlavorVersion: textSchema(32),
    connectionId: { ...optionalNameSchema, type: ['string', 'null'] },
  },
} as const;

export type ClientRegister = FromSchema<typeof clientRegisterSchema>;
