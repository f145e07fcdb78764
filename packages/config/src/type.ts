import type TypeBox from 'typebox';
import type { TProperties, TSchema } from 'typebox';

/** The schema builders the option schemas use, with TypeBox's own signatures. */
type SchemaBuilders = Pick<
  typeof TypeBox,
  'Array' | 'Boolean' | 'Enum' | 'Integer' | 'Object' | 'Optional' | 'String' | 'Union' | 'Unsafe'
>;

/** TypeBox's mark of a property an object schema does not require (not enumerable, as its own). */
const OPTIONAL = '~optional';

/** A copy of `schema` with its hidden marks (`~optional`) and symbol keys too. */
export function schemaCopy<S extends object>(schema: S): S {
  return Object.defineProperties({}, Object.getOwnPropertyDescriptors(schema)) as S;
}

function isOptional(schema: TSchema): boolean {
  return (schema as { [OPTIONAL]?: boolean })[OPTIONAL] === true;
}

/**
 * The JSON Schema builders of the option schemas, written here rather than loaded from TypeBox,
 * whose types they keep (`Static`, and so every option's type): TypeBox's runtime is 373 modules,
 * ~3 MB of heap and ~0.2 s of start-up in each service, to build objects that are plain JSON
 * Schema. Each builds what TypeBox builds (`type.test.ts` compares them); TypeBox's other marks
 * (`~kind`) are left out, as nothing reads them without TypeBox.
 */
export const Type = {
  Array: (items: TSchema, options?: object) => ({ type: 'array', items, ...options }),
  Boolean: (options?: object) => ({ type: 'boolean', ...options }),
  Enum: (values: readonly unknown[], options?: object) => ({ enum: values, ...options }),
  Integer: (options?: object) => ({ type: 'integer', ...options }),
  Object: (properties: TProperties, options?: object) => {
    const required = Object.keys(properties).filter((name) => !isOptional(properties[name]!));
    return {
      type: 'object',
      ...(required.length > 0 ? { required } : {}),
      properties,
      ...options,
    };
  },
  Optional: (schema: TSchema) =>
    Object.defineProperty(schemaCopy(schema), OPTIONAL, {
      value: true,
      writable: true,
      configurable: true,
      enumerable: false,
    }),
  String: (options?: object) => ({ type: 'string', ...options }),
  Union: (anyOf: readonly TSchema[], options?: object) => ({ anyOf, ...options }),
  Unsafe: (schema: object) => ({ ...schema }),
} as unknown as SchemaBuilders;
