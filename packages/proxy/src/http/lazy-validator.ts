import { Ajv, type ValidateFunction } from 'ajv';
import type { FastifySchemaCompiler } from 'fastify';

/**
 * A route's `validatorCompiler` that compiles its schema on the route's first request instead of
 * at start. For a large schema of a route most proxies never see called (a downstream Edge's
 * instance data), compiling at start cost ~15 MB of transient heap, which every proxy then kept
 * as resident memory. The options are the ones Fastify's own validator uses, so the route
 * validates as it would otherwise; the result is read as Fastify reads Ajv's (`false` and
 * `errors`).
 */
export const lazyValidatorCompiler: FastifySchemaCompiler<unknown> = ({ schema }) => {
  let compiled: ValidateFunction | undefined;
  const validate = (data: unknown): boolean => {
    compiled ??= new Ajv({
      coerceTypes: 'array',
      useDefaults: true,
      removeAdditional: true,
      addUsedSchema: false,
      allErrors: false,
      allowUnionTypes: true,
      strict: false,
    }).compile(schema as object);
    const valid = compiled(data);
    validate.errors = compiled.errors;
    return valid;
  };
  validate.errors = undefined as ValidateFunction['errors'];
  return validate;
};
