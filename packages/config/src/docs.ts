import { describe } from './describe.js';
import type { EnvVariable, OptionRow } from './option.js';

const code = (text: string) => `\`${text}\``;

/** `NAME (note)`, the name formatted by `name`. */
function variableText(variable: EnvVariable, name: (text: string) => string): string {
  return variable.note === undefined
    ? name(variable.name)
    : `${name(variable.name)} (${variable.note})`;
}

/**
 * The README configuration table of a service. `noDefault` fills the Default cell of an option
 * without one (each README has kept its own).
 */
export function markdownTable(rows: readonly OptionRow[], noDefault: string): string {
  const lines = rows.map((row) => {
    const env =
      row.variables.length > 0
        ? row.variables.map((variable) => variableText(variable, code)).join(', ')
        : '(in code only)';
    const fallback = row.default === undefined ? noDefault : code(row.default);
    return `| ${code(row.key)} | ${env} | ${fallback} | ${row.doc} |`;
  });
  return [
    '| Option | Environment variable | Default | Meaning |',
    '|---|---|---|---|',
    ...lines,
  ].join('\n');
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

/**
 * The `--help` text of a command: what it is, its subcommands, then every option it reads from
 * the environment.
 */
export function helpText(
  command: string,
  summary: string,
  rows: readonly OptionRow[],
  subcommands: readonly Subcommand[] = [],
): string {
  const usages = subcommands.flatMap((sub) => [`  ${command} ${sub.usage}`, `      ${sub.doc}`]);
  const options = rows
    .filter((row) => row.env.length > 0)
    .map((row) => {
      const facts = [
        row.key,
        row.meta.required ? 'required' : undefined,
        row.default === undefined
          ? undefined
          : `default ${row.default === '' ? '""' : row.default}`,
      ].filter((fact) => fact !== undefined);
      return [
        `  ${row.variables.map((variable) => variableText(variable, String)).join(', ')}  (${facts.join('; ')})`,
        `      ${row.doc}`,
        `      Takes ${describe(row.schema)}.`,
      ].join('\n');
    });
  return [
    `${command}: ${summary}`,
    '',
    `Usage: ${command} [--help]`,
    '',
    ...(usages.length > 0 ? ['Commands:', ...usages, ''] : []),
    'Configured by environment variables (lists are comma-separated; every problem is reported',
    'at once and the command exits with status 1):',
    '',
    ...options,
    '',
  ].join('\n');
}
