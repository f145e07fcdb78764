import { isDeepStrictEqual } from 'node:util';
import { Ajv, type ErrorObject } from 'ajv';
import ajvKeywords from 'ajv-keywords';
import type { TObject } from 'typebox';
import { describe, formats } from './describe.js';
import {
  type EnvVariable,
  type InCode,
  type Loaded,
  type OptionRow,
  optionRows,
} from './option.js';
import { codeValue, envValue } from './values.js';

/** Every problem found in a configuration, reported at once. */
export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`invalid configuration:\n  ${problems.join('\n  ')}`);
    this.name = 'ConfigError';
  }
}

export type Environment = Readonly<Record<string, string | undefined>>;

/** Where a value came from, so that a message names what the operator wrote. */
type Source =
  | {
      readonly env: string;
      /** How the operator wrote it, when not as the variable (a command line's option). */
      readonly written: string | undefined;
      readonly raw: string;
      readonly takes: string | undefined;
    }
  | { readonly code: unknown };

/** A problem found outside the schema, placed in schema order. */
interface Found {
  readonly order: number;
  readonly text: string;
}

/** A service's option schema, compiled once, with its options listed. */
export interface ConfigSchema<S extends TObject> {
  readonly schema: S;
  readonly options: readonly OptionRow[];
  /**
   * The options from the environment and code (code wins; `undefined` in code leaves an option to
   * the environment), validated, defaults filled in: `profile`'s where it has its own
   * (`OptionMeta.profiles`). Throws a `ConfigError` naming every problem, each variable as
   * `written` says the operator wrote it (a command line's `-t (--tokens)` for `TOKENS`).
   */
  load(
    env: Environment,
    inCode?: InCode<S>,
    profile?: string,
    written?: Readonly<Record<string, string>>,
  ): Loaded<S>;
}

function pathOf(row: OptionRow): string {
  return `/${row.path.join('/')}`;
}

function get(source: unknown, path: readonly string[]): unknown {
  let value = source;
  for (const key of path) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

function set(target: Record<string, unknown>, path: readonly string[], value: unknown): void {
  let node = target;
  for (const key of path.slice(0, -1)) {
    node[key] ??= {};
    node = node[key] as Record<string, unknown>;
  }
  node[path[path.length - 1] as string] = value;
}

/**
 * `FLAGS_URL` (or the command line's option for it) when the environment gave the value, else
 * `flagsUrl (FLAGS_URL)`.
 */
function subject(row: OptionRow, source: Source | undefined): string {
  if (source && 'env' in source) return source.written ?? source.env;
  return row.env.length > 0 ? `${row.key} (${row.env.join(' or ')})` : row.key;
}

/** `the flagsUrl option (FLAGS_URL)` */
function requirement(row: OptionRow): string {
  return `the ${row.key} option${row.env.length > 0 ? ` (${row.env.join(' or ')})` : ''}`;
}

/** What was given, unless it is secret or not a plain value. */
function shown(row: OptionRow, source: Source | undefined): string {
  if (row.meta.secret || source === undefined) return '';
  if ('env' in source) return `, got "${source.raw}"`;
  const value = source.code;
  if (typeof value === 'string') return `, got "${value}"`;
  const plain = typeof value === 'number' || typeof value === 'boolean' || value === null;
  return plain ? `, got ${String(value)}` : '';
}

/**
 * What the variable takes when it says so; else a range check that alone failed is named as such,
 * and anything else by what the option takes.
 */
function expectation(
  row: OptionRow,
  errors: readonly ErrorObject[],
  source: Source | undefined,
): string {
  if (source && 'env' in source && source.takes !== undefined) return source.takes;
  const [only] = errors;
  if (errors.length === 1 && only) {
    const limit = only.params.limit as number;
    if (only.keyword === 'minimum') return `at least ${limit}`;
    if (only.keyword === 'exclusiveMinimum') return `greater than ${limit}`;
    if (only.keyword === 'maximum') return `at most ${limit}`;
  }
  return describe(row.schema);
}

/** The JSON pointer of what an error is about (for `required`, the missing property). */
function pointer(error: ErrorObject): string {
  return error.keyword === 'required'
    ? `${error.instancePath}/${error.params.missingProperty as string}`
    : error.instancePath;
}

/** `(entry 2)`, `(entries 2, 5)` when the errors are about items of a list. */
function entries(row: OptionRow, errors: readonly ErrorObject[]): string {
  const indexes = new Set<number>();
  for (const error of errors) {
    const index = error.instancePath.slice(pathOf(row).length).split('/')[1];
    if (index !== undefined && /^\d+$/.test(index)) indexes.add(Number(index) + 1);
  }
  if (indexes.size === 0) return '';
  return ` (${indexes.size === 1 ? 'entry' : 'entries'} ${[...indexes].join(', ')})`;
}

/**
 * One message per option, in the order of the schema. An `anyOf` over a group of options rather
 * than inside one (`clientKeys` or `proxySecrets`) is one requirement: "You must specify A or B".
 */
function problems(
  schema: TObject,
  errors: readonly ErrorObject[],
  rows: readonly OptionRow[],
  sources: ReadonlyMap<OptionRow, Source>,
  conflicts: readonly Found[],
): string[] {
  const rowOf = (error: ErrorObject): OptionRow | undefined => {
    const at = pointer(error);
    return rows.find((row) => at === pathOf(row) || at.startsWith(`${pathOf(row)}/`));
  };
  const requirements = errors.filter((error) => error.keyword === 'anyOf' && !rowOf(error));
  const within = (anyOf: ErrorObject, error: ErrorObject) =>
    error.schemaPath.startsWith(`${anyOf.schemaPath}/`);
  const found: Found[] = [...conflicts];
  for (const anyOf of requirements) {
    const named = new Set<OptionRow>();
    for (const error of errors.filter((error) => within(anyOf, error))) {
      const row = rowOf(error);
      if (row) named.add(row);
    }
    // Branches that describe themselves are named by their descriptions, in schema order.
    const branches = ((schema as { anyOf?: unknown }).anyOf ?? []) as readonly {
      description?: string;
    }[];
    const described = anyOf.schemaPath === '#/anyOf' && branches.every((b) => b.description);
    found.push({
      order: Math.min(rows.length, ...[...named].map((row) => rows.indexOf(row))),
      text: `You must specify ${
        described
          ? branches.map((branch) => branch.description).join(' or ')
          : [...named].map(requirement).join(' or ')
      }`,
    });
  }
  const byRow = new Map<OptionRow, ErrorObject[]>();
  for (const error of errors) {
    if (requirements.some((anyOf) => anyOf === error || within(anyOf, error))) continue;
    const row = rowOf(error);
    if (row) byRow.set(row, [...(byRow.get(row) ?? []), error]);
    else found.push({ order: rows.length, text: `${error.instancePath} ${error.message}` });
  }
  for (const [row, rowErrors] of byRow) {
    const source = sources.get(row);
    const missing = rowErrors.some(
      (error) => error.keyword === 'required' && pointer(error) === pathOf(row),
    );
    const text = missing
      ? `You must specify ${requirement(row)}`
      : `${subject(row, source)} must be ${expectation(row, rowErrors, source)}${entries(row, rowErrors)}${shown(row, source)}`;
    found.push({ order: rows.indexOf(row), text });
  }
  return found.sort((a, b) => a.order - b.order).map((problem) => problem.text);
}

/** A variable set in the environment, and the option value it means. */
interface Given {
  readonly variable: EnvVariable;
  readonly raw: string;
  readonly value: unknown;
}

/** The variables of an option set (not empty) in the environment; fallbacks when no other is. */
function givenVariables(row: OptionRow, env: Environment): Given[] {
  const present = row.variables.flatMap((variable): Given[] => {
    const raw = env[variable.name];
    if (raw === undefined || raw === '') return [];
    return [{ variable, raw, value: envValue(row, raw, variable) }];
  });
  const specific = present.filter((given) => !given.variable.fallback);
  return specific.length > 0 ? specific : present;
}

/** `A and B`, `A, B and C` */
function listed(names: readonly string[]): string {
  return names.length < 2 ? names.join('') : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
}

/** Two spellings of one option that mean different values: which one the operator meant is unknown. */
function conflict(row: OptionRow, given: readonly Given[]): string {
  const names = given.map(({ variable, raw }) =>
    row.meta.secret ? variable.name : `${variable.name}="${raw}"`,
  );
  return `${listed(names)} set ${row.key} to different values; set only one of them`;
}

/**
 * Compiles a service's option schema (once, at start). Validation is ajv's, as Fastify's own
 * config and env-schema do: `allErrors` to report every problem at once, `useDefaults` for the
 * defaults; `typeof` (ajv-keywords) checks in-code functions.
 */
export function configSchema<S extends TObject>(schema: S): ConfigSchema<S> {
  const ajv = new Ajv({
    allErrors: true,
    useDefaults: true,
    formats: Object.fromEntries(Object.entries(formats).map(([name, f]) => [name, f.validate])),
  });
  ajvKeywords.default(ajv, ['typeof']);
  const validate = ajv.compile(schema);
  const rows = optionRows(schema);
  return {
    schema,
    options: rows,
    load(env, inCode, profile, written) {
      const values: Record<string, unknown> = {};
      const sources = new Map<OptionRow, Source>();
      const conflicts: Found[] = [];
      for (const [order, row] of rows.entries()) {
        const code = get(inCode, row.path);
        if (code !== undefined) {
          set(values, row.path, codeValue(row, code));
          sources.set(row, { code });
          continue;
        }
        const given = givenVariables(row, env);
        const [first] = given;
        if (first === undefined) {
          const profiles = row.meta.profiles;
          if (profile !== undefined && profiles !== undefined && Object.hasOwn(profiles, profile))
            set(values, row.path, structuredClone(profiles[profile]));
          continue;
        }
        set(values, row.path, first.value);
        sources.set(row, {
          env: first.variable.name,
          written: written?.[first.variable.name],
          raw: first.raw,
          takes: first.variable.takes,
        });
        if (given.some((other) => !isDeepStrictEqual(other.value, first.value)))
          conflicts.push({ order, text: conflict(row, given) });
      }
      if (!validate(values) || conflicts.length > 0)
        throw new ConfigError(problems(schema, validate.errors ?? [], rows, sources, conflicts));
      return values as Loaded<S>;
    },
  };
}
