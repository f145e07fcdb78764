import { closest, type OptionRow, UsageError } from '@flags/config';

/** The usage line's options: flags-server is configured by environment variables only. */
export const SERVER_SYNOPSIS = '[-h|--help] [-V|--version]';

/** What a `flags-server` command line asks for. */
export type ServerCommand = 'help' | 'version' | 'serve';

/**
 * Reads `flags-server`'s command line: `--help`/`-h` or `--version`/`-V` (wherever they stand),
 * else nothing at all, as every setting is an environment variable (`rows`). Throws a `UsageError`
 * naming every option and argument it cannot take; an option that names a variable
 * (`--port 8080`) says which variable to set instead, a near miss what was meant.
 */
export function parseServerCommandLine(
  args: readonly string[],
  rows: readonly OptionRow[],
): ServerCommand {
  if (args.includes('--help') || args.includes('-h')) return 'help';
  if (args.includes('--version') || args.includes('-V')) return 'version';
  const byVariable = new Map(rows.flatMap((row) => row.env.map((name) => [name, row] as const)));
  const kebab = new Map([...byVariable.keys()].map((name) => [kebabCase(name), name]));
  const problems: string[] = [];
  let operands = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (operands || !arg.startsWith('-') || arg === '-') {
      problems.push(`unexpected argument "${arg}"`);
      continue;
    }
    if (arg === '--') {
      operands = true;
      continue;
    }
    const equals = arg.indexOf('=');
    const written = equals === -1 ? arg : arg.slice(0, equals);
    if (!written.startsWith('--')) {
      problems.push(`unknown option ${written}`);
      continue;
    }
    const name = written.slice(2);
    const variable = kebab.get(name.toLowerCase());
    if (variable !== undefined) {
      // Its value goes with it: `--port 8080` is one mistake, not two.
      let value = equals === -1 ? undefined : arg.slice(equals + 1);
      const next = args[i + 1];
      if (value === undefined && next !== undefined && !next.startsWith('-')) {
        value = next;
        i++;
      }
      const secret = byVariable.get(variable)?.meta.secret === true;
      const setting = value === undefined || secret ? variable : `${variable}=${value}`;
      problems.push(
        `unknown option ${written}: flags-server is configured by environment variables, set ${setting} instead`,
      );
      continue;
    }
    const meant = closest(name, ['help', 'version', ...kebab.keys()]);
    if (meant === 'help' || meant === 'version')
      problems.push(`unknown option ${written} (did you mean --${meant}?)`);
    else if (meant !== undefined)
      problems.push(
        `unknown option ${written}: flags-server is configured by environment variables, did you mean ${kebab.get(meant)}?`,
      );
    else problems.push(`unknown option ${written}`);
  }
  if (problems.length > 0) throw new UsageError(problems);
  return 'serve';
}

/** `DATABASE_URL` → `database-url`, as an operator would write it as an option. */
function kebabCase(variable: string): string {
  return variable.toLowerCase().replaceAll('_', '-');
}
