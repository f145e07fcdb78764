import type { ConstraintOperator } from '@flags/schemas';
import type { FlagField } from './schema.js';

/**
 * What the files say and what a server holds, in one shape: the canonical form, where a default
 * (an empty list, `false`, `default` stickiness, no title) is left out, so that the two compare
 * with `===` on their JSON and the files `pull` writes stay short.
 */

export interface Constraint {
  contextName: string;
  operator: ConstraintOperator;
  values?: string[];
  value?: string;
  caseInsensitive?: boolean;
  inverted?: boolean;
}

export interface Payload {
  type: 'string' | 'json' | 'csv' | 'number';
  value: string;
}

export interface Variant {
  name: string;
  weight?: number;
  weightType?: 'variable' | 'fix';
  stickiness?: string;
  payload?: Payload;
  overrides?: { contextName: string; values: string[] }[];
}

export interface Strategy {
  name: string;
  title?: string;
  disabled?: boolean;
  parameters?: Record<string, string>;
  constraints?: Constraint[];
  /** Segment names. */
  segments?: string[];
  variants?: Variant[];
}

export interface FlagEnvironment {
  enabled?: boolean;
  strategies?: Strategy[];
  variants?: Variant[];
}

export interface Dependency {
  feature: string;
  enabled?: boolean;
  variants?: string[];
}

export interface Tag {
  type: string;
  value: string;
}

export interface Flag {
  name: string;
  type?: string;
  description?: string;
  impressionData?: boolean;
  stale?: boolean;
  ui?: FlagField[];
  environments?: Record<string, FlagEnvironment>;
  dependencies?: Dependency[];
  tags?: Tag[];
}

export interface Project {
  id: string;
  name?: string;
  description?: string;
}

export interface Environment {
  name: string;
  type?: string;
}

export interface Segment {
  name: string;
  description?: string;
  project?: string;
  constraints?: Constraint[];
}

export interface ContextField {
  name: string;
  description?: string;
  stickiness?: boolean;
  legalValues?: { value: string; description?: string }[];
}

export interface TagType {
  name: string;
  description?: string;
  icon?: string;
}

/** A flag and the project it belongs to. */
export interface ProjectFlag {
  readonly project: string;
  readonly flag: Flag;
}

/** Everything `flags` manages, from the files or from a server. */
export interface Desired {
  projects: Project[];
  environments: Environment[];
  segments: Segment[];
  contextFields: ContextField[];
  tagTypes: TagType[];
  flags: ProjectFlag[];
}

type Loose = Record<string, unknown>;

const text = (value: unknown): string | undefined =>
  typeof value === 'string' && value !== '' ? value : undefined;
const list = <T>(value: readonly T[] | undefined | null): T[] | undefined =>
  value && value.length > 0 ? [...value] : undefined;

/** `object` without its `undefined` members, keys in the order given. */
function compact<T extends object>(object: T): T {
  return Object.fromEntries(Object.entries(object).filter(([, value]) => value !== undefined)) as T;
}

export function canonicalConstraint(raw: Loose): Constraint {
  const values = Array.isArray(raw.values) ? (raw.values as string[]) : undefined;
  return compact({
    contextName: String(raw.contextName),
    operator: raw.operator as Constraint['operator'],
    values: list(values),
    value: text(raw.value),
    caseInsensitive: raw.caseInsensitive === true ? true : undefined,
    inverted: raw.inverted === true ? true : undefined,
  });
}

function canonicalPayload(raw: unknown): Payload | undefined {
  if (raw === null || typeof raw !== 'object') return undefined;
  const { type, value } = raw as Loose;
  return { type: type as Payload['type'], value: String(value) };
}

export function canonicalVariant(raw: Loose): Variant {
  const overrides = (raw.overrides as Variant['overrides'] | undefined)?.map((o) => ({
    contextName: o.contextName,
    values: [...o.values],
  }));
  return compact({
    name: String(raw.name),
    // A variable weight is the server's share of what fix ones leave: not the files' to say.
    weight: raw.weightType === 'fix' && typeof raw.weight === 'number' ? raw.weight : undefined,
    weightType: raw.weightType === 'fix' ? ('fix' as const) : undefined,
    stickiness: text(raw.stickiness) === 'default' ? undefined : text(raw.stickiness),
    payload: canonicalPayload(raw.payload),
    overrides: list(overrides),
  });
}

export function canonicalStrategy(raw: Loose, segmentName: (id: unknown) => string): Strategy {
  const parameters = (raw.parameters ?? {}) as Record<string, unknown>;
  const sortedParameters = Object.fromEntries(
    Object.keys(parameters)
      .sort()
      .map((key) => [key, String(parameters[key])]),
  );
  return compact({
    name: String(raw.name),
    title: text(raw.title),
    disabled: raw.disabled === true ? true : undefined,
    parameters: Object.keys(sortedParameters).length > 0 ? sortedParameters : undefined,
    constraints: list(((raw.constraints as Loose[] | undefined) ?? []).map(canonicalConstraint)),
    segments: list(((raw.segments as unknown[] | undefined) ?? []).map(segmentName).sort()),
    variants: list(((raw.variants as Loose[] | undefined) ?? []).map(canonicalVariant)),
  });
}

export function canonicalEnvironment(
  raw: Loose,
  segmentName: (id: unknown) => string,
): FlagEnvironment {
  return compact({
    enabled: raw.enabled === true,
    strategies: list(
      ((raw.strategies as Loose[] | undefined) ?? []).map((s) => canonicalStrategy(s, segmentName)),
    ),
    variants: list(((raw.variants as Loose[] | undefined) ?? []).map(canonicalVariant)),
  });
}

const byName = <T extends { name: string }>(a: T, b: T) =>
  a.name < b.name ? -1 : a.name > b.name ? 1 : 0;

export function canonicalDependency(raw: Loose): Dependency {
  return compact({
    feature: String(raw.feature),
    enabled: raw.enabled === false ? false : undefined,
    variants: list((raw.variants as string[] | undefined) ?? []),
  });
}

/**
 * A flag in canonical form; `segmentName` turns a strategy's segment (an id from a server, a name
 * from a file) into its name.
 */
export function canonicalFlag(raw: Loose, segmentName: (id: unknown) => string = String): Flag {
  const environments = (raw.environments ?? {}) as Record<string, Loose>;
  const names = Object.keys(environments).sort();
  const tags = ((raw.tags as Tag[] | undefined) ?? [])
    .map((tag) => ({ type: tag.type, value: tag.value }))
    .sort((a, b) => `${a.type}:${a.value}`.localeCompare(`${b.type}:${b.value}`));
  return compact({
    name: String(raw.name),
    type: text(raw.type) === 'release' ? undefined : text(raw.type),
    description: text(raw.description),
    impressionData: raw.impressionData === true ? true : undefined,
    stale: raw.stale === true ? true : undefined,
    ui: list(raw.ui as FlagField[] | undefined),
    environments:
      names.length > 0
        ? Object.fromEntries(
            names.map((name) => [
              name,
              canonicalEnvironment(environments[name] as Loose, segmentName),
            ]),
          )
        : undefined,
    dependencies: list(
      ((raw.dependencies as Loose[] | undefined) ?? [])
        .map(canonicalDependency)
        .sort((a, b) => a.feature.localeCompare(b.feature)),
    ),
    tags: list(tags),
  });
}

export function canonicalSegment(raw: Loose): Segment {
  return compact({
    name: String(raw.name),
    description: text(raw.description),
    project: text(raw.project),
    constraints: list(((raw.constraints as Loose[] | undefined) ?? []).map(canonicalConstraint)),
  });
}

export function canonicalContextField(raw: Loose): ContextField {
  const legalValues = ((raw.legalValues as Loose[] | undefined) ?? []).map((legal) =>
    compact({ value: String(legal.value), description: text(legal.description) }),
  );
  return compact({
    name: String(raw.name),
    description: text(raw.description),
    stickiness: raw.stickiness === true ? true : undefined,
    legalValues: list(legalValues),
  });
}

export function canonicalTagType(raw: Loose): TagType {
  return compact({
    name: String(raw.name),
    description: text(raw.description),
    icon: text(raw.icon),
  });
}

export function canonicalProject(raw: Loose): Project {
  return compact({
    id: String(raw.id),
    name: text(raw.name),
    description: text(raw.description),
  });
}

export function canonicalEnvironmentDefinition(raw: Loose): Environment {
  return compact({ name: String(raw.name), type: text(raw.type) });
}

/** Sorts every list of named things by name, for files that read the same whatever the server's order. */
export function sortDesired(desired: Desired): Desired {
  return {
    projects: [...desired.projects].sort((a, b) => a.id.localeCompare(b.id)),
    environments: [...desired.environments].sort(byName),
    segments: [...desired.segments].sort(byName),
    contextFields: [...desired.contextFields].sort(byName),
    tagTypes: [...desired.tagTypes].sort(byName),
    flags: [...desired.flags].sort(
      (a, b) => a.project.localeCompare(b.project) || a.flag.name.localeCompare(b.flag.name),
    ),
  };
}
