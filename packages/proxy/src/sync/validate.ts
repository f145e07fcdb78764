import { clientFeaturesSchema } from '@flags/schemas';
import { Ajv } from 'ajv';

// Shared by every proxy of the process: compiled once, and its `errors` are read right after the
// synchronous call that set them.
const validate = new Ajv({ allErrors: false, strict: false }).compile(clientFeaturesSchema);

/** `undefined` when the value is a client-features payload, else the first problem found. */
export function payloadProblem(value: unknown): string | undefined {
  if (validate(value)) return undefined;
  const first = validate.errors?.[0];
  return `${first?.instancePath ?? ''} ${first?.message ?? 'invalid'}`.trim();
}
