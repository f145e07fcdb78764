import { CONSTRAINT_OPERATORS } from '@flags/schemas';

/**
 * The file format of `flags`, as JSON Schema (draft 2020-12): one schema per kind of file, under
 * `$defs`, picked by a file's place in the directory. `flags schema` writes it and `flags pull`
 * puts it beside the files, so editors (YAML language server) complete and check them; the same
 * object drives the validation of `plan`, `apply` and `manifest` (validate.ts), so the two cannot
 * disagree.
 */

/** The parts of a flag a file can leave to people (the UI, the API): `ui: [enabled]`. */
export const FLAG_FIELDS = [
  'definition',
  'enabled',
  'strategies',
  'variants',
  'dependencies',
  'tags',
] as const;
export type FlagField = (typeof FLAG_FIELDS)[number];

const NAME = { type: 'string', minLength: 1, maxLength: 100 } as const;

const constraint = {
  type: 'object',
  description: 'A condition on a context field.',
  required: ['contextName', 'operator'],
  additionalProperties: false,
  properties: {
    contextName: { ...NAME, description: 'The context field compared.' },
    operator: { enum: CONSTRAINT_OPERATORS, description: 'How it is compared.' },
    values: { type: 'array', items: { type: 'string' }, description: 'For IN and NOT_IN.' },
    value: { type: 'string', description: 'For the other operators.' },
    caseInsensitive: { type: 'boolean' },
    inverted: { type: 'boolean' },
  },
} as const;

const payload = {
  type: 'object',
  required: ['type', 'value'],
  additionalProperties: false,
  properties: {
    type: { enum: ['string', 'json', 'csv', 'number'] },
    value: { type: 'string' },
  },
} as const;

const WEIGHT = { type: 'integer', minimum: 0, maximum: 1000 } as const;

const strategyVariant = {
  type: 'object',
  required: ['name'],
  additionalProperties: false,
  properties: {
    name: NAME,
    weight: { ...WEIGHT, description: 'Out of 1000; only read for weightType fix.' },
    weightType: { enum: ['variable', 'fix'] },
    stickiness: { type: 'string' },
    payload,
  },
} as const;

const variant = {
  type: 'object',
  required: ['name'],
  additionalProperties: false,
  properties: {
    ...strategyVariant.properties,
    overrides: {
      type: 'array',
      items: {
        type: 'object',
        required: ['contextName', 'values'],
        additionalProperties: false,
        properties: {
          contextName: NAME,
          values: { type: 'array', items: { type: 'string' } },
        },
      },
    },
  },
} as const;

const strategy = {
  type: 'object',
  description: 'An activation strategy; the flag is on where any enabled strategy matches.',
  required: ['name'],
  additionalProperties: false,
  properties: {
    name: { ...NAME, description: 'flexibleRollout, default, remoteAddress, … or a custom one.' },
    title: { type: 'string' },
    disabled: { type: 'boolean' },
    parameters: { type: 'object', additionalProperties: { type: 'string' } },
    constraints: { type: 'array', items: constraint },
    segments: {
      type: 'array',
      items: NAME,
      description: 'Segment names (segments.yaml).',
    },
    variants: { type: 'array', items: strategyVariant },
  },
} as const;

const flagEnvironment = {
  type: 'object',
  additionalProperties: false,
  properties: {
    enabled: { type: 'boolean' },
    strategies: { type: 'array', items: strategy },
    variants: { type: 'array', items: variant },
  },
} as const;

const flag = {
  type: 'object',
  description: 'One feature flag: <project>/<name>.yaml.',
  required: ['name'],
  additionalProperties: false,
  properties: {
    $schema: { type: 'string' },
    name: { ...NAME, pattern: '^[A-Za-z0-9_.~-]+$', description: 'The file name, without .yaml.' },
    type: { type: 'string', description: 'release (default), experiment, operational, …' },
    description: { type: 'string' },
    impressionData: { type: 'boolean' },
    stale: { type: 'boolean' },
    ui: {
      type: 'array',
      items: { enum: FLAG_FIELDS },
      uniqueItems: true,
      description:
        'What people own (in the UI or the API): written when the flag is created, never changed by apply afterwards.',
    },
    environments: {
      type: 'object',
      description: 'Per environment; an environment left out is not managed.',
      additionalProperties: flagEnvironment,
    },
    dependencies: {
      type: 'array',
      items: {
        type: 'object',
        required: ['feature'],
        additionalProperties: false,
        properties: {
          feature: { ...NAME, description: 'The parent flag, in the same project.' },
          enabled: { type: 'boolean' },
          variants: { type: 'array', items: { type: 'string' } },
        },
      },
    },
    tags: {
      type: 'array',
      items: {
        type: 'object',
        required: ['type', 'value'],
        additionalProperties: false,
        properties: { type: NAME, value: NAME },
      },
    },
  },
} as const;

/**
 * A file that lists items of one kind under one key (`projects.yaml`: `projects: [...]`), with the
 * `$schema` line `pull` writes.
 */
function listFile(key: string, item: SchemaNode): SchemaNode {
  return {
    type: 'object',
    required: [key],
    additionalProperties: false,
    properties: { $schema: { type: 'string' }, [key]: { type: 'array', items: item } },
  };
}

const projects = listFile('projects', {
  type: 'object',
  required: ['id'],
  additionalProperties: false,
  properties: { id: NAME, name: { type: 'string' }, description: { type: 'string' } },
});

const environments = listFile('environments', {
  type: 'object',
  required: ['name'],
  additionalProperties: false,
  properties: { name: NAME, type: { type: 'string' } },
});

const segments = listFile('segments', {
  type: 'object',
  required: ['name'],
  additionalProperties: false,
  properties: {
    name: NAME,
    description: { type: 'string' },
    project: { ...NAME, description: 'Only for flags of this project; global if absent.' },
    constraints: { type: 'array', items: constraint },
  },
});

const contextFields = listFile('contextFields', {
  type: 'object',
  required: ['name'],
  additionalProperties: false,
  properties: {
    name: NAME,
    description: { type: 'string' },
    stickiness: { type: 'boolean' },
    legalValues: {
      type: 'array',
      items: {
        type: 'object',
        required: ['value'],
        additionalProperties: false,
        properties: { value: { type: 'string' }, description: { type: 'string' } },
      },
    },
  },
});

const tagTypes = listFile('tagTypes', {
  type: 'object',
  required: ['name'],
  additionalProperties: false,
  properties: {
    name: NAME,
    description: { type: 'string' },
    icon: { type: 'string' },
  },
});

/** The kinds of file, each with its schema under `$defs`. */
export const FILE_KINDS = {
  flag,
  projects,
  environments,
  segments,
  contextFields,
  tagTypes,
} as const;
export type FileKind = keyof typeof FILE_KINDS;

/** The schema file's name, written beside the files by `pull`. */
export const SCHEMA_FILE = 'flags.schema.json';

/** The whole schema: one of the kinds (an editor is told which by a `$ref` in the modeline). */
export const flagsSchema = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  $id: 'https://github.com/flags-oss/flags/blob/main/docs/flags-as-code.md',
  title: 'flags as code',
  description:
    'Files of `flags pull`/`plan`/`apply`: <project>/<flag>.yaml, projects.yaml, environments.yaml, segments.yaml, context-fields.yaml, tag-types.yaml.',
  $defs: FILE_KINDS,
  anyOf: Object.keys(FILE_KINDS).map((kind) => ({ $ref: `#/$defs/${kind}` })),
} as const;

/** A node of the schemas above, as the validator reads it. */
export interface SchemaNode {
  readonly type?: string;
  readonly enum?: readonly string[];
  readonly required?: readonly string[];
  readonly properties?: Readonly<Record<string, SchemaNode>>;
  readonly additionalProperties?: boolean | SchemaNode;
  readonly items?: SchemaNode;
  readonly uniqueItems?: boolean;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly pattern?: string;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly description?: string;
}
