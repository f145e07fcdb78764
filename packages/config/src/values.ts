import type { TSchema } from 'typebox';
import type { EnvVariable, OptionRow } from './option.js';

/** `a, b,,c ` → `['a', 'b', 'c']`: how every list is written in the environment. */
export function splitList(raw: string): string[] {
  return raw
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

type JsonSchema = TSchema & {
  type?: string;
  format?: string;
  items?: JsonSchema;
  anyOf?: JsonSchema[];
};

/** What a boolean variable takes: `true`/`false`, and `1`/`t`, `0`/`f` as Unleash Proxy and many tools write them. */
const BOOLEAN_WORDS: ReadonlyMap<string, boolean> = new Map([
  ['true', true],
  ['t', true],
  ['1', true],
  ['false', false],
  ['f', false],
  ['0', false],
]);

/**
 * The JSON value an environment string stands for, by the option's schema type. Written here
 * rather than left to ajv's `coerceTypes` (what env-schema does): that would take `0x10`, `1e3` and
 * ` ` as numbers and does not split lists. A string that means nothing stays a string, so that
 * ajv refuses it and the message names the variable.
 */
export function envValue(row: OptionRow, raw: string, variable?: EnvVariable): unknown {
  if (variable?.fromEnv) return variable.fromEnv(raw, (own) => envValue(row, own));
  if (row.meta.fromEnv) return row.meta.fromEnv(raw);
  const schema = row.schema as JsonSchema;
  switch (schema.type) {
    case 'integer':
    case 'number':
      return /^\d+$/.test(raw.trim()) ? Number(raw) : raw;
    case 'boolean':
      return BOOLEAN_WORDS.get(raw.trim().toLowerCase()) ?? raw;
    case 'array':
      return splitList(raw);
    default:
      return raw;
  }
}

/** Whether the schema takes a list of plain strings (directly or as one `anyOf` branch). */
function takesStringList(schema: JsonSchema): boolean {
  if (schema.type === 'array') return schema.items?.type === 'string';
  return schema.anyOf?.some(takesStringList) ?? false;
}

/**
 * An in-code value in the JSON form the schema describes: a `URL` where a URL is expected as its
 * text, and a string where a list of strings is expected split as in the environment.
 */
export function codeValue(row: OptionRow, value: unknown): unknown {
  if (value instanceof URL && (row.schema as JsonSchema).format === 'url') return value.href;
  if (typeof value === 'string' && takesStringList(row.schema as JsonSchema))
    return splitList(value);
  return value;
}

/**
 * A variable read as the option's own ones, then converted: `convert` gets a value of the type
 * `is` checks, anything else stays the string it was, for ajv to refuse.
 */
function convertedVariable<T>(
  name: string,
  note: string,
  is: (value: unknown) => value is T,
  convert: (value: T) => unknown,
): EnvVariable {
  return {
    name,
    note,
    fromEnv: (raw, read) => {
      const value = read(raw);
      return is(value) ? convert(value) : raw;
    },
  };
}

/** A variable that gives a duration option (milliseconds) in whole seconds. */
export function secondsVariable(name: string): EnvVariable {
  const isNumber = (value: unknown) => typeof value === 'number';
  return convertedVariable(name, 'seconds', isNumber, (seconds) => seconds * 1000);
}

/** A variable that means the opposite of a boolean option (`DISABLE_X` for `enableX`). */
export function invertedVariable(name: string): EnvVariable {
  const isBoolean = (value: unknown) => typeof value === 'boolean';
  return convertedVariable(name, 'inverted', isBoolean, (value) => !value);
}
