import { ConfigError, type OptionRow } from '@flags/config';
import { proxyConfig } from './options.js';

/** Every environment variable of `rows`. */
function variableNames(rows: readonly OptionRow[]): ReadonlySet<string> {
  return new Set(rows.flatMap((row) => row.env));
}

/**
 * Settings given on the command line, as Unleash Edge takes them: `--upstream-url <url>` (or
 * `--upstream-url=<url>`) for the variable `UPSTREAM_URL`, a bare `--strict` for `STRICT=true`.
 * Every variable of `rows` (the options the command reads) can be given so (Edge's options are its
 * variables' names in kebab case). Returns them as variables, to be read with (and over) the environment's; throws a
 * `ConfigError` naming every option it does not know.
 */
export function variablesFromArgs(
  args: readonly string[],
  rows: readonly OptionRow[] = proxyConfig.options,
): Record<string, string> {
  const known = variableNames(rows);
  const variables: Record<string, string> = {};
  const problems: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    const match = /^--([a-z0-9]+(?:-[a-z0-9]+)*)(?:=(.*))?$/s.exec(arg);
    const name = match?.[1]?.toUpperCase().replaceAll('-', '_');
    if (match === null || name === undefined || !known.has(name)) {
      problems.push(`unknown option ${arg.split('=', 1)[0]}`);
      continue;
    }
    let value = match[2];
    if (value === undefined) {
      const next = args[i + 1];
      if (next === undefined || next.startsWith('--')) value = 'true';
      else {
        value = next;
        i++;
      }
    }
    variables[name] = value;
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return variables;
}
