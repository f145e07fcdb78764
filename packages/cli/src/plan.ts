import { createHash } from 'node:crypto';
import type { FlagOnServer, ServerEvent, ServerState } from './client.js';
import type { ReadResult } from './files.js';
import type { Desired, Flag, FlagEnvironment, Strategy, Variant } from './model.js';
import type { FlagField } from './schema.js';

/**
 * What `apply` would do: the files compared with the server, resource by resource and, for a flag,
 * field by field, only in what the files own; differences in what people own are notes.
 */

export type ResourceKind =
  | 'project'
  | 'environment'
  | 'tag type'
  | 'context field'
  | 'segment'
  | 'flag';

/** One field that changes: `+` added, `-` removed, `~` changed. */
export interface Change {
  readonly op: '+' | '-' | '~';
  readonly path: string;
  readonly before?: unknown;
  readonly after?: unknown;
}

/** An owned field changed on the server since its file: who changed it, and when. */
export interface Drift {
  readonly field: string;
  readonly by: string;
  readonly at: string;
  readonly event: string;
}

export interface Action {
  readonly kind: ResourceKind;
  readonly name: string;
  readonly project?: string;
  readonly action: 'create' | 'update' | 'archive';
  readonly changes: readonly Change[];
  readonly drift: readonly Drift[];
  /** Where the flag's file is (`file:line:column`), for flags. */
  readonly file?: string;
  /** A hash of the flag as the server held it when planned: `apply` of a saved plan checks it. */
  readonly serverVersion?: string;
}

/** A difference left alone because people own it, or something the files do not manage. */
export interface Note {
  readonly kind: ResourceKind;
  readonly name: string;
  readonly project?: string;
  readonly message: string;
}

export interface Plan {
  readonly actions: readonly Action[];
  readonly notes: readonly Note[];
}

export const countOf = (plan: Plan) => ({
  create: plan.actions.filter((a) => a.action === 'create').length,
  update: plan.actions.filter((a) => a.action === 'update').length,
  archive: plan.actions.filter((a) => a.action === 'archive').length,
});

/** A hash of a flag's canonical form. */
export function flagVersion(flag: Flag): string {
  return createHash('sha256').update(JSON.stringify(flag)).digest('hex').slice(0, 16);
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** Field by field differences between `before` and `after`, lists of named items by name. */
export function diff(before: unknown, after: unknown, path = ''): Change[] {
  if (same(before, after)) return [];
  if (before === undefined) return [{ op: '+', path, after }];
  if (after === undefined) return [{ op: '-', path, before }];
  if (Array.isArray(before) && Array.isArray(after)) {
    const named = (list: unknown[]) =>
      list.every((item) => typeof item === 'object' && item !== null && 'name' in item) &&
      new Set(list.map((item) => (item as { name: string }).name)).size === list.length;
    // Strategies are told apart by their place (two may share a name); variants and the like by name.
    if (!path.endsWith('strategies') && named(before) && named(after)) {
      const beforeNames = before.map((item) => (item as { name: string }).name);
      const afterNames = after.map((item) => (item as { name: string }).name);
      const changes: Change[] = [];
      for (const name of new Set([...beforeNames, ...afterNames])) {
        changes.push(
          ...diff(
            before.find((item) => (item as { name: string }).name === name),
            after.find((item) => (item as { name: string }).name === name),
            `${path}[${name}]`,
          ),
        );
      }
      if (changes.length === 0)
        return [{ op: '~', path: `${path} (order)`, before: beforeNames, after: afterNames }];
      return changes;
    }
    const changes: Change[] = [];
    for (let i = 0; i < Math.max(before.length, after.length); i++) {
      changes.push(...diff(before[i], after[i], `${path}[${i}]`));
    }
    return changes;
  }
  if (
    typeof before === 'object' &&
    before !== null &&
    typeof after === 'object' &&
    after !== null &&
    !Array.isArray(before) &&
    !Array.isArray(after)
  ) {
    const b = before as Record<string, unknown>;
    const a = after as Record<string, unknown>;
    const changes: Change[] = [];
    for (const key of new Set([...Object.keys(b), ...Object.keys(a)])) {
      changes.push(...diff(b[key], a[key], path === '' ? key : `${path}.${key}`));
    }
    return changes;
  }
  return [{ op: '~', path, before, after }];
}

/** A flag's definition: what `PUT` and the stale switch write. */
export const definitionOf = (flag: Flag) => ({
  type: flag.type ?? 'release',
  description: flag.description ?? '',
  impressionData: flag.impressionData ?? false,
  stale: flag.stale ?? false,
});

/**
 * Variants of the files without a weight take the server's (variable weights are the server's to
 * share out): they compare equal on it.
 */
function withWeights(
  wanted: Variant[] | undefined,
  held: Variant[] | undefined,
): Variant[] | undefined {
  return wanted?.map((variant) => {
    if (variant.weight !== undefined) return variant;
    const weight = held?.find((other) => other.name === variant.name)?.weight;
    return weight === undefined ? variant : { ...variant, weight };
  });
}

function strategiesWithWeights(wanted: Strategy[] | undefined, held: Strategy[] | undefined) {
  return wanted?.map((strategy, i) => {
    const variants = withWeights(strategy.variants, held?.[i]?.variants);
    return variants === undefined ? strategy : { ...strategy, variants };
  });
}

/** The file's flag with the server's weights where the file gives none. */
export function alignedFlag(wanted: Flag, held: Flag | undefined): Flag {
  if (!held) return wanted;
  const environments: Record<string, FlagEnvironment> = {};
  for (const [name, environment] of Object.entries(wanted.environments ?? {})) {
    const other = held.environments?.[name];
    const strategies = strategiesWithWeights(environment.strategies, other?.strategies);
    const variants = withWeights(environment.variants, other?.variants);
    environments[name] = {
      ...environment,
      ...(strategies ? { strategies } : {}),
      ...(variants ? { variants } : {}),
    };
  }
  return wanted.environments ? { ...wanted, environments } : wanted;
}

/** A part of a flag, as plan and apply compare and write it. */
export interface FlagPart {
  readonly field: FlagField;
  readonly environment?: string;
  readonly path: string;
  readonly wanted: unknown;
  readonly held: unknown;
}

/** The parts of a flag the files speak of (environments the file leaves out are not among them). */
export function flagParts(wanted: Flag, held: Flag): FlagPart[] {
  const parts: FlagPart[] = [
    {
      field: 'definition',
      path: '',
      wanted: definitionOf(wanted),
      held: definitionOf(held),
    },
  ];
  for (const [name, environment] of Object.entries(wanted.environments ?? {})) {
    const other = held.environments?.[name] ?? {};
    const at = `environments.${name}`;
    parts.push(
      {
        field: 'strategies',
        environment: name,
        path: `${at}.strategies`,
        wanted: environment.strategies ?? [],
        held: other.strategies ?? [],
      },
      {
        field: 'variants',
        environment: name,
        path: `${at}.variants`,
        wanted: environment.variants ?? [],
        held: other.variants ?? [],
      },
      {
        field: 'enabled',
        environment: name,
        path: `${at}.enabled`,
        wanted: environment.enabled ?? false,
        held: other.enabled ?? false,
      },
    );
  }
  parts.push(
    {
      field: 'dependencies',
      path: 'dependencies',
      wanted: wanted.dependencies ?? [],
      held: held.dependencies ?? [],
    },
    { field: 'tags', path: 'tags', wanted: wanted.tags ?? [], held: held.tags ?? [] },
  );
  return parts;
}

/** Which event types write which part of a flag. */
const EVENT_FIELDS: Readonly<Record<FlagField, readonly string[]>> = {
  definition: [
    'feature-metadata-updated',
    'feature-type-updated',
    'feature-impression-data-updated',
    'feature-stale-on',
    'feature-stale-off',
    'feature-updated',
  ],
  enabled: ['feature-environment-enabled', 'feature-environment-disabled'],
  strategies: [
    'feature-strategy-add',
    'feature-strategy-update',
    'feature-strategy-remove',
    'strategy-order-changed',
  ],
  variants: ['feature-environment-variants-updated', 'feature-variants-updated'],
  dependencies: [
    'feature-dependency-added',
    'feature-dependency-removed',
    'feature-dependencies-removed',
  ],
  tags: ['feature-tagged', 'feature-untagged', 'feature-tags-updated'],
};
const WHOLE_FLAG_EVENTS = new Set(['feature-created', 'features-imported', 'feature-revived']);

/** The latest event that wrote `part` (events newest first). */
export function lastWrite(events: readonly ServerEvent[], part: FlagPart): ServerEvent | undefined {
  const types = EVENT_FIELDS[part.field];
  return events.find(
    (event) =>
      WHOLE_FLAG_EVENTS.has(event.type) ||
      (types.includes(event.type) &&
        (part.environment === undefined ||
          event.environment == null ||
          event.environment === part.environment)),
  );
}

export interface PlanInputs {
  readonly files: Pick<ReadResult, 'desired' | 'flagFiles' | 'managed'>;
  readonly server: ServerState;
  /** The latest events of a flag, newest first. */
  readonly events: (flag: string) => Promise<readonly ServerEvent[]>;
  /** When a flag's file was last written (ms since the epoch). */
  readonly fileTime: (project: string, flag: string) => number;
}

const uiOwns = (flag: Flag, field: FlagField) => (flag.ui ?? []).includes(field);

/** Compares the files with the server. */
export async function makePlan(inputs: PlanInputs): Promise<Plan> {
  const { files, server } = inputs;
  const wanted = files.desired;
  const held = server.desired;
  const actions: Action[] = [];
  const notes: Note[] = [];

  const simple = <T extends object>(
    kind: ResourceKind,
    file: string,
    list: (d: Desired) => T[],
    key: (item: T) => string,
  ) => {
    if (!files.managed.has(file as never)) return;
    const current = new Map(list(held).map((item) => [key(item), item]));
    for (const item of list(wanted)) {
      const name = key(item);
      const other = current.get(name);
      const changes = diff(other, item);
      if (changes.length === 0) continue;
      actions.push({
        kind,
        name,
        action: other === undefined ? 'create' : 'update',
        changes: other === undefined ? [{ op: '+', path: '', after: item }] : changes,
        drift: [],
      });
    }
    const named = new Set(list(wanted).map(key));
    for (const name of current.keys()) {
      if (!named.has(name)) {
        notes.push({ kind, name, message: `on the server, not in ${file}: left as it is` });
      }
    }
  };
  simple(
    'project',
    'projects.yaml',
    (d) => d.projects,
    (p) => p.id,
  );
  simple(
    'environment',
    'environments.yaml',
    (d) => d.environments,
    (e) => e.name,
  );
  simple(
    'tag type',
    'tag-types.yaml',
    (d) => d.tagTypes,
    (t) => t.name,
  );
  simple(
    'context field',
    'context-fields.yaml',
    (d) => d.contextFields,
    (c) => c.name,
  );
  simple(
    'segment',
    'segments.yaml',
    (d) => d.segments,
    (s) => s.name,
  );

  const flagActions: Action[] = [];
  for (const { project, flag } of wanted.flags) {
    const key = `${project}/${flag.name}`;
    const file = files.flagFiles.get(key)?.at([]);
    const current = server.flags.get(key);
    if (!current) {
      const elsewhere = [...server.flags.values()].find((f) => f.flag.name === flag.name);
      if (elsewhere) {
        notes.push({
          kind: 'flag',
          name: flag.name,
          project,
          message: `is in project "${elsewhere.project}" on the server; move it there first`,
        });
        continue;
      }
      flagActions.push({
        kind: 'flag',
        name: flag.name,
        project,
        action: 'create',
        changes: creationSummary(flag),
        drift: [],
        ...(file ? { file } : {}),
      });
      continue;
    }
    const aligned = alignedFlag(flag, current.flag);
    const changes: Change[] = [];
    const changedParts: FlagPart[] = [];
    for (const part of flagParts(aligned, current.flag)) {
      const partChanges = diff(part.held, part.wanted, part.path);
      if (partChanges.length === 0) continue;
      if (uiOwns(flag, part.field)) {
        for (const change of partChanges) {
          notes.push({
            kind: 'flag',
            name: flag.name,
            project,
            message: `${change.path || 'definition'}: ${shownValue(change.before)} on the server, ${shownValue(change.after)} in the file; people own "${part.field}" (ui), so it is left as it is`,
          });
        }
        continue;
      }
      changes.push(...partChanges);
      changedParts.push(part);
    }
    if (changes.length === 0) continue;
    const drift = await driftOf(inputs, project, flag.name, changedParts);
    flagActions.push({
      kind: 'flag',
      name: flag.name,
      project,
      action: 'update',
      changes,
      drift,
      serverVersion: flagVersion(current.flag),
      ...(file ? { file } : {}),
    });
  }

  // Flags of the projects the files manage that have no file are archived.
  const managedProjects = new Set([
    ...wanted.flags.map(({ project }) => project),
    ...(files.managed.has('projects.yaml') ? wanted.projects.map((p) => p.id) : []),
  ]);
  const named = new Set(wanted.flags.map(({ flag }) => flag.name));
  for (const current of server.flags.values()) {
    if (named.has(current.flag.name) || !managedProjects.has(current.project)) continue;
    flagActions.push({
      kind: 'flag',
      name: current.flag.name,
      project: current.project,
      action: 'archive',
      changes: [{ op: '-', path: current.flag.name }],
      drift: [],
      serverVersion: flagVersion(current.flag),
    });
  }
  actions.push(...orderFlags(flagActions, wanted, server));
  return { actions, notes };
}

/** What a created flag will hold, one line per part. */
function creationSummary(flag: Flag): Change[] {
  const changes: Change[] = [{ op: '+', path: 'definition', after: definitionOf(flag) }];
  for (const [name, environment] of Object.entries(flag.environments ?? {})) {
    const strategies = environment.strategies ?? [];
    const variants = environment.variants ?? [];
    changes.push({
      op: '+',
      path: `environments.${name}`,
      after: `${environment.enabled ? 'enabled' : 'disabled'}, strategies: ${strategies.map((s) => s.name).join(', ') || 'none'}${variants.length > 0 ? `, variants: ${variants.map((v) => v.name).join(', ')}` : ''}`,
    });
  }
  if (flag.dependencies) changes.push({ op: '+', path: 'dependencies', after: flag.dependencies });
  if (flag.tags) changes.push({ op: '+', path: 'tags', after: flag.tags });
  if (flag.ui) changes.push({ op: '+', path: 'ui', after: flag.ui });
  return changes;
}

export const shownValue = (value: unknown) =>
  value === undefined ? '(none)' : JSON.stringify(value);

/**
 * Owned parts changed on the server after the flag's file was written: drift, with the author and
 * time of the event that wrote each.
 */
async function driftOf(
  inputs: PlanInputs,
  project: string,
  flag: string,
  parts: readonly FlagPart[],
): Promise<Drift[]> {
  const events = await inputs.events(flag);
  const written = inputs.fileTime(project, flag);
  const drift: Drift[] = [];
  for (const part of parts) {
    const event = lastWrite(events, part);
    if (!event || Date.parse(event.createdAt) <= written) continue;
    drift.push({
      field: part.path || 'definition',
      by: event.createdBy,
      at: event.createdAt,
      event: event.type,
    });
  }
  return drift;
}

/**
 * Creations and updates with parents before children (a child's dependency needs its parent),
 * then archives with children before parents (a parent with children cannot be archived).
 */
function orderFlags(actions: Action[], wanted: Desired, server: ServerState): Action[] {
  const parentOf = new Map<string, string>();
  for (const { flag } of wanted.flags) {
    const parent = flag.dependencies?.[0]?.feature;
    if (parent) parentOf.set(flag.name, parent);
  }
  for (const { flag } of server.flags.values()) {
    const parent = flag.dependencies?.[0]?.feature;
    if (parent && !parentOf.has(flag.name)) parentOf.set(flag.name, parent);
  }
  const depth = (name: string) => (parentOf.has(name) ? 1 : 0);
  const writes = actions
    .filter((a) => a.action !== 'archive')
    .sort((a, b) => depth(a.name) - depth(b.name));
  const archives = actions
    .filter((a) => a.action === 'archive')
    .sort((a, b) => depth(b.name) - depth(a.name));
  return [...writes, ...archives];
}

/** The flag on the server an action is about, if any. */
export const heldFlag = (server: ServerState, action: Action): FlagOnServer | undefined =>
  server.flags.get(`${action.project}/${action.name}`);
