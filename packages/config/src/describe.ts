import { compile as compileTrust } from '@fastify/proxy-addr';
import type { TSchema } from 'typebox';

/** A string format of the option schemas: its ajv check and how messages name it. */
interface Format {
  readonly validate: (value: string) => boolean;
  readonly text: string;
}

export const formats: Readonly<Record<string, Format>> = {
  // What `new URL()` takes (ajv-formats' `uri` is RFC 3986, which refuses some URLs Node accepts).
  url: { validate: (value) => URL.canParse(value), text: 'a URL' },
  // One entry of Fastify's `trustProxy`, checked the way Fastify will read it.
  'proxy-address': {
    validate: (value) => {
      try {
        compileTrust(value);
        return true;
      } catch {
        return false;
      }
    },
    text: 'an IP address, a CIDR range, loopback, linklocal or uniquelocal',
  },
};

interface Described {
  title?: string;
  type?: string;
  format?: string;
  enum?: readonly unknown[];
  anyOf?: readonly Described[];
  items?: Described;
  minimum?: number;
  exclusiveMinimum?: number;
  maximum?: number;
  minLength?: number;
  typeof?: string;
}

function range(schema: Described): string {
  const { minimum, exclusiveMinimum, maximum } = schema;
  if (minimum !== undefined && maximum !== undefined) return ` from ${minimum} to ${maximum}`;
  if (exclusiveMinimum !== undefined) return ` > ${exclusiveMinimum}`;
  if (minimum !== undefined) return ` ≥ ${minimum}`;
  return maximum === undefined ? '' : ` ≤ ${maximum}`;
}

/** What a schema accepts, in words (`a whole number from 0 to 65535`); its `title` when it has one. */
export function describe(schema: TSchema): string {
  const s = schema as Described;
  if (s.title !== undefined) return s.title;
  if (s.anyOf) return s.anyOf.map((branch) => describe(branch as TSchema)).join(' or ');
  if (s.enum) return `one of ${s.enum.join(', ')}`;
  if (s.typeof !== undefined) return `a ${s.typeof}`;
  switch (s.type) {
    case 'integer':
      return `a whole number${range(s)}`;
    case 'number':
      return `a number${range(s)}`;
    case 'boolean':
      return 'true or false';
    case 'string':
      if (s.format !== undefined) return formats[s.format]?.text ?? `a ${s.format}`;
      return s.minLength ? 'a non-empty string' : 'a string';
    case 'array':
      return s.items?.type === 'string' && s.items.format === undefined
        ? 'a comma-separated list'
        : `a list, each ${s.items ? describe(s.items as TSchema) : 'anything'}`;
    case 'object':
      return 'an object';
    default:
      return 'anything';
  }
}
