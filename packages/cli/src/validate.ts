import { closest } from '@flags/config';
import type { SchemaNode } from './schema.js';

/** Where in a document: object keys and array indexes from its root. */
export type Path = readonly (string | number)[];

/** What is wrong, and where; `atKey` when the key itself is the problem (an unknown one). */
export interface Problem {
  readonly path: Path;
  readonly message: string;
  readonly atKey?: boolean;
}

const typeOf = (value: unknown): string =>
  value === null
    ? 'null'
    : Array.isArray(value)
      ? 'array'
      : Number.isInteger(value)
        ? 'integer'
        : typeof value;

const matchesType = (value: unknown, type: string): boolean => {
  const actual = typeOf(value);
  return actual === type || (type === 'number' && actual === 'integer');
};

const shown = (value: unknown): string => JSON.stringify(value) ?? String(value);

/**
 * Checks `value` against `schema` (the subset of JSON Schema that schema.ts uses: type, enum,
 * required, properties, additionalProperties, items, uniqueItems, lengths, pattern, bounds) and
 * answers every problem, each with its path. Unknown keys are refused by name, with the key meant
 * when one is close.
 */
export function validate(value: unknown, schema: SchemaNode, path: Path = []): Problem[] {
  if (schema.enum !== undefined) {
    return schema.enum.includes(value as string)
      ? []
      : [{ path, message: `is ${shown(value)}; expected one of ${schema.enum.join(', ')}` }];
  }
  if (schema.type !== undefined && !matchesType(value, schema.type)) {
    return [{ path, message: `is ${typeOf(value)} ${shown(value)}; expected ${schema.type}` }];
  }
  const problems: Problem[] = [];
  if (typeof value === 'string') {
    if (schema.minLength !== undefined && value.length < schema.minLength)
      problems.push({ path, message: 'is empty' });
    if (schema.maxLength !== undefined && value.length > schema.maxLength)
      problems.push({ path, message: `is longer than ${schema.maxLength} characters` });
    if (schema.pattern !== undefined && !new RegExp(schema.pattern).test(value))
      problems.push({ path, message: `${shown(value)} does not match ${schema.pattern}` });
  }
  if (typeof value === 'number') {
    if (schema.minimum !== undefined && value < schema.minimum)
      problems.push({ path, message: `is ${value}; the least allowed is ${schema.minimum}` });
    if (schema.maximum !== undefined && value > schema.maximum)
      problems.push({ path, message: `is ${value}; the most allowed is ${schema.maximum}` });
  }
  if (Array.isArray(value)) {
    if (schema.items !== undefined) {
      value.forEach((item, i) => {
        problems.push(...validate(item, schema.items as SchemaNode, [...path, i]));
      });
    }
    if (schema.uniqueItems) {
      const seen = new Set<string>();
      value.forEach((item, i) => {
        const key = shown(item);
        if (seen.has(key)) problems.push({ path: [...path, i], message: `repeats ${key}` });
        seen.add(key);
      });
    }
  }
  if (typeOf(value) === 'object') {
    const object = value as Record<string, unknown>;
    const properties = schema.properties ?? {};
    for (const name of schema.required ?? []) {
      if (!(name in object)) problems.push({ path, message: `needs "${name}"` });
    }
    for (const [key, item] of Object.entries(object)) {
      const known = properties[key];
      if (known !== undefined) {
        problems.push(...validate(item, known, [...path, key]));
      } else if (schema.additionalProperties === false) {
        const meant = closest(key, Object.keys(properties));
        problems.push({
          path: [...path, key],
          atKey: true,
          message: `unknown key "${key}"${meant === undefined ? `; known: ${Object.keys(properties).join(', ')}` : ` (did you mean "${meant}"?)`}`,
        });
      } else if (typeof schema.additionalProperties === 'object') {
        problems.push(...validate(item, schema.additionalProperties, [...path, key]));
      }
    }
  }
  return problems;
}
