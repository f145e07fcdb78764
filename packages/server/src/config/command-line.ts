import { closest, type OptionRow, UsageError } from '@flags/config';
import {
  DEFAULT_SERVER_PROBE_TIMEOUT_MS,
  isServerProbeName,
  SERVER_PROBES,
  type ServerProbeName,
} from '../probe.js';

/**
 * The usage line's options: flags-server is configured by environment variables only; its probes
 * take where to ask and how long to wait.
 */
export const SERVER_SYNOPSIS =
  '[-h|--help] [-V|--version] | health|ready [--url <base>] [--timeout <ms>] | migrate from-unleash|verify …';

/** `flags-server health|ready`: ask a running server, at `url` (else the environment's port). */
export interface ServerProbeCommand {
  readonly probe: ServerProbeName;
  readonly url: string | undefined;
  readonly timeoutMs: number;
}

/** What a `flags-server` command line asks for. */
export type ServerCommand = 'help' | 'version' | 'serve' | ServerProbeCommand;

/**
 * Reads `flags-server`'s command line: `--help`/`-h` or `--version`/`-V` (wherever they stand),
 * a probe (`health`, `ready`) with its options, else nothing at all, as every setting is an
 * environment variable (`rows`). Throws a `UsageError` naming every option and argument it cannot
 * take; an option that names a variable (`--port 8080`) says which variable to set instead, a near
 * miss what was meant.
 */
export function parseServerCommandLine(
  args: readonly string[],
  rows: readonly OptionRow[],
): ServerCommand {
  if (args.includes('--help') || args.includes('-h')) return 'help';
  if (args.includes('--version') || args.includes('-V')) return 'version';
  if (isServerProbeName(args[0])) return parseProbeCommandLine(args[0], args.slice(1));
  const byVariable = new Map(rows.flatMap((row) => row.env.map((name) => [name, row] as const)));
  const kebab = new Map([...byVariable.keys()].map((name) => [kebabCase(name), name]));
  const problems: string[] = [];
  let operands = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (operands || !arg.startsWith('-') || arg === '-') {
      const meant = i === 0 ? closest(arg, Object.keys(SERVER_PROBES)) : undefined;
      problems.push(
        `unexpected argument "${arg}"${meant === undefined ? '' : ` (did you mean ${meant}?)`}`,
      );
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

/** The options of `flags-server health|ready`: `--url <base>` and `--timeout <ms>`. */
function parseProbeCommandLine(
  probe: ServerProbeName,
  args: readonly string[],
): ServerProbeCommand {
  const problems: string[] = [];
  const values: { url?: string; timeout?: string } = {};
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    const equals = arg.indexOf('=');
    const written = equals === -1 ? arg : arg.slice(0, equals);
    if (written !== '--url' && written !== '--timeout') {
      const meant = written.startsWith('--')
        ? closest(written.slice(2), ['url', 'timeout'])
        : undefined;
      problems.push(
        written.startsWith('-')
          ? `unknown option ${written} for ${probe}${meant === undefined ? '' : ` (did you mean --${meant}?)`}`
          : `unexpected argument "${arg}"`,
      );
      continue;
    }
    const value = equals === -1 ? args[++i] : arg.slice(equals + 1);
    if (value === undefined || value === '') {
      problems.push(`${written} needs a value`);
      continue;
    }
    if (written === '--url') values.url = value;
    else values.timeout = value;
  }
  const { url, timeout } = values;
  if (url !== undefined && (!/^https?:\/\//i.test(url) || !URL.canParse(url)))
    problems.push(`--url must be an http(s) URL, got "${url}"`);
  if (timeout !== undefined && (!/^\d+$/.test(timeout) || Number(timeout) === 0))
    problems.push(`--timeout must be a whole number of ms > 0, got "${timeout}"`);
  if (problems.length > 0) throw new UsageError(problems);
  return {
    probe,
    url,
    timeoutMs: timeout === undefined ? DEFAULT_SERVER_PROBE_TIMEOUT_MS : Number(timeout),
  };
}

/** `DATABASE_URL` → `database-url`, as an operator would write it as an option. */
function kebabCase(variable: string): string {
  return variable.toLowerCase().replaceAll('_', '-');
}
