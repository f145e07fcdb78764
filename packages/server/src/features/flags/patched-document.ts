import { Ajv, type ValidateFunction } from 'ajv';
import fastJsonPatch from 'fast-json-patch';
import { ApiError } from '../../errors.js';

const ajv = new Ajv({ allErrors: false, allowUnionTypes: true, strict: false });

/** A validator for what a JSON Patch produced, from the schema the PUT body is checked with. */
export function patchedValidator(schema: object): ValidateFunction {
  return ajv.compile(schema);
}

/**
 * Applies an RFC 6902 patch to a copy of `document`, then checks the result with `validate`:
 * a patch that cannot apply, or whose result is invalid, is a 400 (nothing is written).
 */
export function applyJsonPatch<T>(
  document: T,
  patch: readonly unknown[],
  validate?: ValidateFunction,
): T {
  let patched: T;
  try {
    patched = fastJsonPatch.applyPatch(
      structuredClone(document),
      patch as fastJsonPatch.Operation[],
      true,
      false,
    ).newDocument;
  } catch (error) {
    throw new ApiError(
      'BAD_DATA',
      `The JSON Patch cannot be applied: ${(error as Error).message.split('\n')[0]}`,
    );
  }
  if (validate && !validate(patched)) {
    const details = (validate.errors ?? []).map(
      (issue) => `${issue.instancePath || '(document)'} ${issue.message ?? 'is invalid'}`,
    );
    throw new ApiError('BAD_DATA', `The patched document is invalid: ${details[0]}`, details);
  }
  return patched;
}
