import { closest, UsageError } from '@flags/config';

/** The subcommands of `flags`, each with the options it takes (a value, or a bare switch). */
export const COMMANDS = {
  pull: { url: 'value', token: 'value', dir: 'value' },
  plan: {
    url: 'value',
    token: 'value',
    dir: 'value',
    'detailed-exitcode': 'switch',
    output: 'value',
    out: 'value',
  },
  apply: { url: 'value', token: 'value', dir: 'value', plan: 'value', output: 'value' },
  validate: { dir: 'value' },
  manifest: { dir: 'value', out: 'value' },
  schema: { out: 'value' },
} as const satisfies Record<string, Record<string, 'value' | 'switch'>>;

export type CommandName = keyof typeof COMMANDS;
export const OUTPUTS = ['text', 'json', 'markdown'] as const;
export type Output = (typeof OUTPUTS)[number];

export interface Command {
  readonly name: CommandName;
  readonly url?: string;
  readonly token?: string;
  readonly dir: string;
  readonly detailedExitcode: boolean;
  readonly output: Output;
  readonly out?: string;
  readonly plan?: string;
}

/** The directory when `--dir` is not given. */
export const DEFAULT_DIR = 'flags';

const isCommand = (word: string | undefined): word is CommandName =>
  word !== undefined && Object.hasOwn(COMMANDS, word);

/**
 * Reads `flags`'s command line: `--help`/`-h` or `--version`/`-V` anywhere, else a subcommand and
 * its options (`--name value` or `--name=value`). Throws a `UsageError` naming every option and
 * argument it cannot take, with the one meant when it is close.
 */
export function parseCommandLine(args: readonly string[]): Command | 'help' | 'version' {
  if (args.includes('--help') || args.includes('-h')) return 'help';
  if (args.includes('--version') || args.includes('-V')) return 'version';
  const [name, ...rest] = args;
  if (!isCommand(name)) {
    const meant = name === undefined ? undefined : closest(name, Object.keys(COMMANDS));
    throw new UsageError([
      name === undefined
        ? `a command is needed: ${Object.keys(COMMANDS).join(', ')}`
        : `unknown command "${name}"${meant === undefined ? `; the commands are ${Object.keys(COMMANDS).join(', ')}` : ` (did you mean ${meant}?)`}`,
    ]);
  }
  const takes: Readonly<Record<string, 'value' | 'switch'>> = COMMANDS[name];
  const problems: string[] = [];
  const values: Record<string, string | true> = {};
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i] as string;
    if (!arg.startsWith('--')) {
      problems.push(`unexpected argument "${arg}"`);
      continue;
    }
    const equals = arg.indexOf('=');
    const option = arg.slice(2, equals === -1 ? undefined : equals);
    const kind = takes[option];
    if (kind === undefined) {
      const meant = closest(option, Object.keys(takes));
      problems.push(
        `unknown option --${option} for ${name}${
          meant === undefined
            ? `; it takes ${Object.keys(takes)
                .map((o) => `--${o}`)
                .join(', ')}`
            : ` (did you mean --${meant}?)`
        }`,
      );
      continue;
    }
    if (kind === 'switch') {
      if (equals !== -1) problems.push(`--${option} takes no value`);
      values[option] = true;
      continue;
    }
    const value = equals === -1 ? rest[++i] : arg.slice(equals + 1);
    if (value === undefined || value === '' || (equals === -1 && value.startsWith('--'))) {
      problems.push(`--${option} needs a value`);
      continue;
    }
    values[option] = value;
  }
  const output = (values.output as string | undefined) ?? 'text';
  if (!(OUTPUTS as readonly string[]).includes(output)) {
    problems.push(`--output is "${output}"; it takes ${OUTPUTS.join(', ')}`);
  }
  if (problems.length > 0) throw new UsageError(problems);
  const text = (key: string) => values[key] as string | undefined;
  return {
    name,
    dir: text('dir') ?? DEFAULT_DIR,
    detailedExitcode: values['detailed-exitcode'] === true,
    output: output as Output,
    ...(text('url') === undefined ? {} : { url: text('url') }),
    ...(text('token') === undefined ? {} : { token: text('token') }),
    ...(text('out') === undefined ? {} : { out: text('out') }),
    ...(text('plan') === undefined ? {} : { plan: text('plan') }),
  };
}
