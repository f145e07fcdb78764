import { type ClientFeatures, clientFeaturesSchema } from '@flags/schemas';
import { Ajv } from 'ajv';

const validate = new Ajv({ allErrors: false, strict: false }).compile(clientFeaturesSchema);

/** `undefined` when the value is a client-features payload, else the first problem found. */
export function payloadProblem(value: unknown): string | undefined {
  if (validate(value)) return undefined;
  const first = validate.errors?.[0];
  return `${first?.instancePath ?? ''} ${first?.message ?? 'invalid'}`.trim();
}

export function isPayload(value: unknown): value is ClientFeatures {
  return payloadProblem(value) === undefined;
}
