import { describe } from './describe.js';
import type { EnvVariable, OptionRow } from './option.js';

const code = (text: string) => `\`${text}\``;

/** `NAME (note)`, the name formatted by `name`. */
function variableText(variable: EnvVariable, name: (text: string) => string): string {
  return variable.note === undefined
    ? name(variable.name)
    : `${name(variable.name)} (${variable.note})`;
}

/** A profile's column in the README table: its name and the column's title. */
export interface ProfileColumn {
  readonly profile: string;
  readonly title: string;
}

/**
 * The README configuration table of a service. `noDefault` fills the Default cell of an option
 * without one (each README has kept its own); `profile` adds a column of that profile's defaults.
 */
export function markdownTable(
  rows: readonly OptionRow[],
  noDefault: string,
  profile?: ProfileColumn,
): string {
  const cell = (value: string | undefined) => (value === undefined ? noDefault : code(value));
  const lines = rows.map((row) => {
    const env =
      row.variables.length > 0
        ? row.variables.map((variable) => variableText(variable, code)).join(', ')
        : '(in code only)';
    const defaults =
      profile === undefined
        ? cell(row.default)
        : `${cell(row.default)} | ${cell(row.profileDefault(profile.profile))}`;
    return `| ${code(row.key)} | ${env} | ${defaults} | ${row.doc} |`;
  });
  const head =
    profile === undefined
      ? ['| Option | Environment variable | Default | Meaning |', '|---|---|---|---|']
      : [
          `| Option | Environment variable | Default | ${profile.title} | Meaning |`,
          '|---|---|---|---|---|',
        ];
  return [...head, ...lines].join('\n');
}

/**
 * `text` with what stands between `<!-- name:start -->` and `<!-- name:end -->` replaced by
 * `content`; throws when the markers are missing.
 */
export function replaceSection(text: string, name: string, content: string): string {
  const start = `<!-- ${name}:start -->`;
  const end = `<!-- ${name}:end -->`;
  const from = text.indexOf(start);
  const to = text.indexOf(end, from);
  if (from < 0 || to < 0) throw new Error(`no ${start} … ${end} section`);
  return `${text.slice(0, from + start.length)}\n${content}\n${text.slice(to)}`;
}

/** A subcommand, for `--help`: `ready [--url <base>]` and what it does. */
export interface Subcommand {
  readonly usage: string;
  readonly doc: string;
}

/** An example of `--help`: what it does, then the command line that does it. */
export interface Example {
  readonly doc: string;
  readonly command: string;
}

/** What `--help` says of a command, besides the options it reads from the environment. */
export interface HelpPage {
  readonly command: string;
  /** What follows the command's name in the usage line: `[OPTIONS] <edge|offline>`. */
  readonly synopsis: string;
  /** What the command is, one line. */
  readonly summary: string;
  readonly examples: readonly Example[];
  readonly subcommands?: readonly Subcommand[];
  /** The options, each listed with its variables, meaning, values and default. */
  readonly rows: readonly OptionRow[];
  /** A profile whose defaults are shown beside the default ones. */
  readonly profile?: ProfileColumn;
}

/**
 * The `--help` text of a command: the usage line, what it is and examples, so that the first
 * screen answers "how do I run it"; then its subcommands and every option it reads from the
 * environment.
 */
export function helpText(page: HelpPage): string {
  const { command, profile, subcommands = [] } = page;
  const examples = page.examples.flatMap((example) => [
    `  ${example.doc}:`,
    `    ${example.command}`,
  ]);
  const usages = subcommands.flatMap((sub) => [`  ${command} ${sub.usage}`, `      ${sub.doc}`]);
  const options = page.rows
    .filter((row) => row.env.length > 0)
    .map((row) => {
      const shown = (value: string) => (value === '' ? '""' : value);
      const other = profile === undefined ? undefined : row.profileDefault(profile.profile);
      const facts = [
        row.key,
        row.meta.required ? 'required' : undefined,
        row.default === undefined ? undefined : `default ${shown(row.default)}`,
        other === undefined || other === row.default
          ? undefined
          : `${profile?.profile} ${shown(other)}`,
      ].filter((fact) => fact !== undefined);
      return [
        `  ${row.variables.map((variable) => variableText(variable, String)).join(', ')}  (${facts.join('; ')})`,
        `      ${row.doc}`,
        `      Takes ${describe(row.schema)}.`,
      ].join('\n');
    });
  return [
    `Usage: ${command} ${page.synopsis}`,
    '',
    `${command}: ${page.summary}`,
    '',
    ...(examples.length > 0 ? ['Examples:', ...examples, ''] : []),
    ...(usages.length > 0 ? ['Commands:', ...usages, ''] : []),
    'Configured by environment variables (lists are comma-separated; every problem is reported',
    'at once and the command exits with status 1):',
    '',
    ...options,
    '',
  ].join('\n');
}
