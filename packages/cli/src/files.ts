import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, extname, join, relative, sep } from 'node:path';
import {
  isMap,
  isPair,
  isScalar,
  isSeq,
  LineCounter,
  type Node,
  parse,
  parseDocument,
  stringify,
} from 'yaml';
import {
  canonicalContextField,
  canonicalEnvironmentDefinition,
  canonicalFlag,
  canonicalProject,
  canonicalSegment,
  canonicalTagType,
  type Desired,
  type Flag,
  sortDesired,
} from './model.js';
import { FILE_KINDS, type FileKind, flagsSchema, SCHEMA_FILE, type SchemaNode } from './schema.js';
import { type Path, validate } from './validate.js';

/**
 * The directory of files: `projects.yaml`, `environments.yaml`, `segments.yaml`,
 * `context-fields.yaml` and `tag-types.yaml` at its top, one folder per project holding one file
 * per flag (`<project>/<flag>.yaml`), and `flags.schema.json` for editors.
 */

/** The files of the top of the directory, each with its kind and the key holding its list. */
export const TOP_FILES = {
  'projects.yaml': { kind: 'projects', key: 'projects' },
  'environments.yaml': { kind: 'environments', key: 'environments' },
  'segments.yaml': { kind: 'segments', key: 'segments' },
  'context-fields.yaml': { kind: 'contextFields', key: 'contextFields' },
  'tag-types.yaml': { kind: 'tagTypes', key: 'tagTypes' },
} as const satisfies Record<string, { kind: FileKind; key: string }>;

/** Files that do not hold: every problem, each `file:line:column: what is wrong`. */
export class FileError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(problems.join('\n'));
    this.name = 'FileError';
  }
}

/** Where a flag's file is, to point at its lines from the plan and from later checks. */
export interface Located {
  readonly file: string;
  /**
   * `file:line:column` of `path` in the file (of its key when `atKey`; of the file's start when
   * the path is not in it).
   */
  at(path: Path, atKey?: boolean): string;
}

export interface ReadResult {
  readonly desired: Desired;
  /** `project/flag` → its file. */
  readonly flagFiles: ReadonlyMap<string, Located>;
  /** Which top files exist: a list that is absent is not managed. */
  readonly managed: ReadonlySet<keyof typeof TOP_FILES>;
}

/** Parses and checks one YAML file against its kind; answers its value and where its nodes are. */
function readYaml(
  root: string,
  file: string,
  kind: FileKind,
  problems: string[],
): { value: unknown; located: Located } | undefined {
  const text = readFileSync(file, 'utf8');
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter, uniqueKeys: true, prettyErrors: false });
  const shown = relative(root, file).split(sep).join('/');
  const position = (offset: number) => {
    const { line, col } = lineCounter.linePos(offset);
    return `${shown}:${line}:${col}`;
  };
  const located: Located = {
    file: shown,
    at: (path, atKey = false) =>
      position(nodeAt(document.contents as Node | null, path, atKey) ?? 0),
  };
  if (document.errors.length > 0) {
    for (const error of document.errors) {
      problems.push(`${position(error.pos[0])}: ${error.message.split('\n')[0]}`);
    }
    return undefined;
  }
  const value = document.toJS() as unknown;
  if (value === null || value === undefined) {
    problems.push(`${shown}:1:1: the file is empty`);
    return undefined;
  }
  const found = validate(value, FILE_KINDS[kind] as SchemaNode);
  for (const problem of found) {
    const offset = nodeAt(document.contents as Node | null, problem.path, problem.atKey === true);
    const where = problem.path.length === 0 || problem.atKey ? '' : `${pathText(problem.path)} `;
    problems.push(`${position(offset ?? 0)}: ${where}${problem.message}`);
  }
  return found.length > 0 ? undefined : { value, located };
}

/** The start offset of the node at `path` (of its key when `atKey`), or of the deepest one found. */
function nodeAt(node: Node | null, path: Path, atKey: boolean): number | undefined {
  let current: unknown = node;
  let offset = (node?.range?.[0] as number | undefined) ?? undefined;
  for (let i = 0; i < path.length; i++) {
    const step = path[i];
    if (isMap(current)) {
      const pair = current.items.find(
        (item) => isPair(item) && isScalar(item.key) && String(item.key.value) === String(step),
      );
      if (!pair) return offset;
      const last = i === path.length - 1;
      const key = pair.key as Node;
      if (last && atKey) return key.range?.[0] ?? offset;
      current = pair.value;
      offset = (pair.value as Node | null)?.range?.[0] ?? key.range?.[0] ?? offset;
    } else if (isSeq(current) && typeof step === 'number') {
      const item = current.items[step] as Node | undefined;
      if (!item) return offset;
      current = item;
      offset = item.range?.[0] ?? offset;
    } else return offset;
  }
  return offset;
}

/** `environments.production.strategies[0].parameters.rollout` */
export function pathText(path: Path): string {
  return path
    .map((step, i) => (typeof step === 'number' ? `[${step}]` : i === 0 ? step : `.${step}`))
    .join('');
}

/**
 * Reads and checks the directory: every file against its schema, then what holds across files
 * (file names, environments, segments, parents, tag types and context fields that exist). Throws
 * a `FileError` listing every problem.
 */
export function readDirectory(root: string): ReadResult {
  if (!existsSync(root)) throw new FileError([`${root}: no such directory`]);
  const problems: string[] = [];
  const desired: Desired = {
    projects: [],
    environments: [],
    segments: [],
    contextFields: [],
    tagTypes: [],
    flags: [],
  };
  const managed = new Set<keyof typeof TOP_FILES>();
  const topLocated = new Map<string, Located>();
  for (const entry of readdirSync(root, { withFileTypes: true })) {
    if (!entry.isFile() || !/\.ya?ml$/.test(entry.name)) continue;
    const name = entry.name.replace(/\.yml$/, '.yaml') as keyof typeof TOP_FILES;
    const top = TOP_FILES[name];
    if (top === undefined) {
      problems.push(
        `${entry.name}:1:1: unknown file; the top of the directory holds ${Object.keys(TOP_FILES).join(', ')} and one folder per project with a file per flag (<project>/<flag>.yaml)`,
      );
      continue;
    }
    const read = readYaml(root, join(root, entry.name), top.kind, problems);
    if (!read) continue;
    managed.add(name);
    topLocated.set(top.key, read.located);
    const items = (read.value as Record<string, Record<string, unknown>[]>)[top.key] ?? [];
    const canonical = {
      projects: canonicalProject,
      environments: canonicalEnvironmentDefinition,
      segments: canonicalSegment,
      contextFields: canonicalContextField,
      tagTypes: canonicalTagType,
    }[top.key] as (raw: Record<string, unknown>) => never;
    (desired[top.key] as unknown[]) = items.map(canonical);
    const seen = new Set<string>();
    items.forEach((item, i) => {
      const id = String(item.id ?? item.name);
      if (seen.has(id)) problems.push(`${read.located.at([top.key, i])}: "${id}" is listed twice`);
      seen.add(id);
    });
  }

  const flagFiles = new Map<string, Located>();
  const flagsByName = new Map<string, string>();
  // Every folder of the top (but hidden ones: .git, editor settings) is a project's.
  for (const project of readdirSync(root, { withFileTypes: true })) {
    if (!project.isDirectory() || project.name.startsWith('.')) continue;
    const folder = join(root, project.name);
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      if (!entry.isFile() || !/\.ya?ml$/.test(entry.name)) continue;
      const read = readYaml(root, join(folder, entry.name), 'flag', problems);
      if (!read) continue;
      const flag = canonicalFlag(read.value as Record<string, unknown>);
      const expected = basename(entry.name, extname(entry.name));
      if (flag.name !== expected) {
        problems.push(
          `${read.located.at(['name'])}: name "${flag.name}" differs from the file name; rename the file to ${flag.name}.yaml or the flag to "${expected}"`,
        );
        continue;
      }
      const other = flagsByName.get(flag.name);
      if (other !== undefined) {
        problems.push(
          `${read.located.at(['name'])}: flag "${flag.name}" is also in project "${other}"; flag names are unique across projects`,
        );
        continue;
      }
      flagsByName.set(flag.name, project.name);
      desired.flags.push({ project: project.name, flag });
      flagFiles.set(`${project.name}/${flag.name}`, read.located);
    }
  }
  problems.push(...crossChecks(desired, managed, flagFiles));
  if (problems.length > 0) throw new FileError(problems);
  return { desired: sortDesired(desired), flagFiles, managed };
}

/** What must hold between files: every name a flag uses is defined where the files define them. */
function crossChecks(
  desired: Desired,
  managed: ReadonlySet<keyof typeof TOP_FILES>,
  flagFiles: ReadonlyMap<string, Located>,
): string[] {
  const problems: string[] = [];
  const names = (list: readonly { name: string }[]) => new Set(list.map((item) => item.name));
  const environments = managed.has('environments.yaml') ? names(desired.environments) : undefined;
  const segments = managed.has('segments.yaml') ? names(desired.segments) : undefined;
  const tagTypes = managed.has('tag-types.yaml') ? names(desired.tagTypes) : undefined;
  const projects = managed.has('projects.yaml')
    ? new Set(desired.projects.map((project) => project.id))
    : undefined;
  const flags = new Map(desired.flags.map(({ project, flag }) => [flag.name, { project, flag }]));
  for (const { project, flag } of desired.flags) {
    const located = flagFiles.get(`${project}/${flag.name}`)!;
    if (projects && !projects.has(project)) {
      problems.push(`${located.at([])}: project "${project}" is not in projects.yaml`);
    }
    for (const [environment, state] of Object.entries(flag.environments ?? {})) {
      if (environments && !environments.has(environment)) {
        problems.push(
          `${located.at(['environments', environment], true)}: environment "${environment}" is not in environments.yaml (${[...environments].join(', ')})`,
        );
      }
      (state.strategies ?? []).forEach((strategy, i) => {
        for (const segment of strategy.segments ?? []) {
          if (segments && !segments.has(segment)) {
            problems.push(
              `${located.at(['environments', environment, 'strategies', i, 'segments'])}: segment "${segment}" is not in segments.yaml`,
            );
          }
        }
      });
      const fixed = (state.variants ?? [])
        .filter((variant) => variant.weightType === 'fix')
        .reduce((sum, variant) => sum + (variant.weight ?? 0), 0);
      if (fixed > 1000) {
        problems.push(
          `${located.at(['environments', environment, 'variants'])}: the fix variant weights add up to ${fixed}, more than 1000`,
        );
      }
    }
    (flag.dependencies ?? []).forEach((dependency, i) => {
      const parent = flags.get(dependency.feature);
      const where = located.at(['dependencies', i, 'feature']);
      if (!parent) problems.push(`${where}: parent flag "${dependency.feature}" has no file`);
      else if (parent.project !== project)
        problems.push(
          `${where}: parent flag "${dependency.feature}" is in project "${parent.project}", not "${project}"`,
        );
      else if ((parent.flag.dependencies ?? []).length > 0)
        problems.push(
          `${where}: parent flag "${dependency.feature}" has a parent itself; dependencies are one level deep`,
        );
    });
    if ((flag.dependencies ?? []).length > 1) {
      problems.push(`${located.at(['dependencies'])}: a flag has at most one parent`);
    }
    (flag.tags ?? []).forEach((tag, i) => {
      if (tagTypes && !tagTypes.has(tag.type)) {
        problems.push(
          `${located.at(['tags', i, 'type'])}: tag type "${tag.type}" is not in tag-types.yaml`,
        );
      }
    });
  }
  return problems;
}

const modeline = (fromFile: string, root: string, kind: FileKind) =>
  `# yaml-language-server: $schema=${relative(dirname(fromFile), join(root, SCHEMA_FILE)).split(sep).join('/')}#/$defs/${kind}\n`;

/** A file's text: the schema modeline, then the YAML. */
function yamlText(root: string, file: string, kind: FileKind, value: unknown): string {
  return modeline(file, root, kind) + stringify(value, { lineWidth: 0 });
}

/** The path of a flag's file. */
export function flagFile(root: string, project: string, flag: string): string {
  return join(root, project, `${flag}.yaml`);
}

/**
 * Writes `desired` as the directory's files (the schema beside them); flag files of flags that are
 * not in `desired` are removed, so the directory mirrors what was read. Answers the files written.
 */
export function writeDirectory(root: string, desired: Desired): string[] {
  const sorted = sortDesired(desired);
  mkdirSync(root, { recursive: true });
  const written: string[] = [];
  const write = (file: string, text: string) => {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
    written.push(relative(root, file).split(sep).join('/'));
  };
  write(join(root, SCHEMA_FILE), `${JSON.stringify(flagsSchema, null, 2)}\n`);
  for (const [name, { kind, key }] of Object.entries(TOP_FILES)) {
    const file = join(root, name);
    write(file, yamlText(root, file, kind, { [key]: sorted[key] }));
  }
  const kept = new Set<string>();
  for (const { project, flag } of sorted.flags) {
    const file = flagFile(root, project, flag.name);
    kept.add(file);
    write(file, yamlText(root, file, 'flag', flagDocument({ ...flag, ...uiOf(file) })));
  }
  for (const project of readdirSync(root, { withFileTypes: true })) {
    if (!project.isDirectory() || project.name.startsWith('.')) continue;
    const folder = join(root, project.name);
    for (const entry of readdirSync(folder)) {
      const file = join(folder, entry);
      if (/\.ya?ml$/.test(entry) && !kept.has(file)) rmSync(file);
    }
    if (readdirSync(folder).length === 0) rmSync(folder, { recursive: true });
  }
  return written;
}

/**
 * The `ui` list of a flag file already there: the server does not know who owns what, so a pull
 * keeps what the file said.
 */
function uiOf(file: string): Pick<Flag, 'ui'> {
  if (!existsSync(file)) return {};
  try {
    const { ui } = (parse(readFileSync(file, 'utf8')) ?? {}) as { ui?: unknown };
    return Array.isArray(ui) && ui.length > 0 ? { ui: ui as Flag['ui'] } : {};
  } catch {
    return {};
  }
}

/** A flag as its file shows it: name first, the type always. */
function flagDocument(flag: Flag): Flag {
  const { name, type, ...rest } = flag;
  return { name, type: type ?? 'release', ...rest };
}
