import type { Static, TObject, TOptional, TProperties, TSchema } from 'typebox';
import { schemaCopy, Type } from './type.js';

/** Where an option keeps what its JSON Schema cannot say; a symbol, so ajv never sees it. */
const META = Symbol('flags.option');

/**
 * An environment variable an option is read from. A plain name reads as the option's schema says;
 * another spelling of the option (another product's name for it, in another unit or sense) brings
 * its own reading.
 */
export interface EnvVariable {
  readonly name: string;
  /**
   * The option's JSON value for this variable's string; `read` is how the option's own variables
   * read it. A string that means nothing is returned as it is, for ajv to refuse.
   */
  readonly fromEnv?: (raw: string, read: (raw: string) => unknown) => unknown;
  /** What sets this variable apart from the option's own ones (`seconds`), for the README and `--help`. */
  readonly note?: string;
  /** What this variable takes, in messages, when that is not what the option takes. */
  readonly takes?: string;
  /**
   * Read only when no other variable of the option is set, and never compared with them: a
   * general name that other programs set too (`PORT` beside `SERVER_PORT`).
   */
  readonly fallback?: true;
}

/** What an option carries besides the JSON Schema of its value. */
export interface OptionMeta<Value> {
  /**
   * Environment variables read; none: in code only. Where several are set (and not empty) they
   * must mean the same value, else loading fails naming them (a `fallback` one aside).
   */
  readonly env: readonly (string | EnvVariable)[];
  /** One line: the README table's "Meaning" and the `--help` text. */
  readonly doc: string;
  /** Filled in by ajv (`useDefaults`) when neither code nor environment sets the option. */
  readonly default?: Value;
  /**
   * Other defaults, each for a named profile the service loads with (flags-proxy's `edge`, Unleash
   * Edge's defaults): what the option is when neither code nor environment sets it in that profile.
   */
  readonly profiles?: Readonly<Record<string, Value>>;
  /** The service does not start without it (a JSON Schema `required`). */
  readonly required?: true;
  /** Never repeated in a message (keys, tokens). */
  readonly secret?: true;
  /**
   * The JSON value an environment string stands for, when the schema's type alone does not say
   * it (see `envValue`). A string that means nothing is returned as it is, for ajv to refuse.
   */
  readonly fromEnv?: (raw: string) => unknown;
}

type Given<S extends TSchema> = OptionMeta<Static<S>>;

/**
 * One option: its value's schema, annotated. With a default (or `required`) the option is always
 * there once loaded; without, it is optional. The schema is copied, never changed.
 */
export function option<S extends TSchema>(
  schema: S,
  meta: Given<S> & ({ default: Static<S> } | { required: true }),
): S;
export function option<S extends TSchema>(schema: S, meta: Given<S>): TOptional<S>;
export function option<S extends TSchema>(schema: S, meta: Given<S>): S | TOptional<S> {
  const annotated = schemaCopy(schema);
  Object.assign(annotated, { description: meta.doc, [META]: meta });
  if (meta.default !== undefined) Object.assign(annotated, { default: meta.default });
  return meta.default !== undefined || meta.required ? annotated : Type.Optional(annotated);
}

/** Options nested under one name (`cors.origin`); present (so its defaults apply) even when empty. */
export function group<P extends TProperties>(properties: P): TObject<P> {
  return Type.Object(properties, { default: {} });
}

/** The metadata `option` attached, if `schema` is an option. */
export function optionMeta(schema: TSchema): OptionMeta<unknown> | undefined {
  return (schema as { [META]?: OptionMeta<unknown> })[META];
}

/** One option of a schema, as the README table, `--help` and the environment reader see it. */
export interface OptionRow {
  /** The in-code name, dotted when nested: `cors.origin`. */
  readonly key: string;
  readonly path: readonly string[];
  /** The names of `variables`. */
  readonly env: readonly string[];
  readonly variables: readonly EnvVariable[];
  /** The default as written in the environment (lists comma-separated); none for no value or `[]`. */
  readonly default: string | undefined;
  /** The default in a profile, written so, when the profile gives the option one of its own. */
  profileDefault(profile: string): string | undefined;
  readonly doc: string;
  readonly schema: TSchema;
  readonly meta: OptionMeta<unknown>;
}

/** The default as an operator would write it in the environment. */
function documentedDefault(value: unknown): string | undefined {
  if (value === undefined || (Array.isArray(value) && value.length === 0)) return undefined;
  return Array.isArray(value) ? value.join(', ') : String(value);
}

/** Every option of a schema, depth first, in the order the schema declares them. */
export function optionRows(schema: TObject, path: readonly string[] = []): OptionRow[] {
  return Object.entries(schema.properties).flatMap(([name, property]): OptionRow[] => {
    const here = [...path, name];
    const meta = optionMeta(property);
    if (meta === undefined) return optionRows(property as TObject, here);
    const variables = meta.env.map((entry) =>
      typeof entry === 'string' ? { name: entry } : entry,
    );
    return [
      {
        key: here.join('.'),
        path: here,
        env: variables.map((variable) => variable.name),
        variables,
        default: documentedDefault(meta.default),
        profileDefault: (profile) =>
          meta.profiles !== undefined && Object.hasOwn(meta.profiles, profile)
            ? documentedDefault(meta.profiles[profile])
            : documentedDefault(meta.default),
        doc: meta.doc,
        schema: property,
        meta,
      },
    ];
  });
}

/** A list of strings may be given in code as one comma-separated string, as in the environment. */
type Loosen<V> = V extends readonly string[]
  ? string | readonly string[]
  : V extends readonly (infer Item)[]
    ? readonly Item[]
    : V;

/** What code may pass: every option optional, groups nested, lists also as one string. */
export type InCode<S extends TSchema> =
  S extends TObject<infer P> ? { [K in keyof P]?: InCode<P[K]> } : Loosen<Static<S>>;

/** The options once loaded: validated, defaults filled in. */
export type Loaded<S extends TSchema> = Static<S>;
