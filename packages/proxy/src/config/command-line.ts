import { closest, UsageError } from '@flags/config';
import { EDGE_OPTIONS, type EdgeOption, type EdgeScope, edgeVariable } from './edge-options.js';

/** The subcommands, as Unleash Edge 20 names them. */
export const COMMANDS = ['edge', 'offline', 'health', 'ready'] as const;
export type CommandName = (typeof COMMANDS)[number];

/** One of our own options as written (`--upstream-streaming polling`), not yet checked. */
export interface OwnOption {
  /** The variable it stands for. */
  readonly name: string;
  readonly label: string;
  readonly value: string | undefined;
}

/** What a command line asks for. */
export interface CommandLine {
  /** `undefined`: no subcommand (serving with Unleash Proxy's defaults). */
  readonly command: CommandName | undefined;
  /** The Edge options given, as the environment variables they stand for (over the environment's). */
  readonly variables: Readonly<Record<string, string>>;
  /** Our own options, for `ownSettings` (which needs the command's options, loaded only to serve). */
  readonly own: readonly OwnOption[];
  /** How each variable given was written (`TOKENS`: `-t (--tokens)`), for messages naming it. */
  readonly written: Readonly<Record<string, string>>;
}

/** Our own variables a command takes as `--kebab-case` options, and which of them are switches. */
export interface OwnVariables {
  readonly names: ReadonlySet<string>;
  readonly switches: ReadonlySet<string>;
}

function isCommand(word: string): word is CommandName {
  return (COMMANDS as readonly string[]).includes(word);
}

/** The scope a subcommand's own options have. */
function scopeOf(command: CommandName | undefined): EdgeScope | undefined {
  if (command === 'health' || command === 'ready') return 'probe';
  return command;
}

/** Whether a command takes an Edge option of `scope` (wherever it stands: long options may stand anywhere). */
function takes(command: CommandName | undefined, scope: EdgeScope): boolean {
  if (scope === 'top' || scope === 'global') return true;
  // Without a subcommand the proxy serves from an upstream, as `edge` does.
  return scope === (scopeOf(command) ?? 'edge');
}

const BOOLEAN_WORD = /^(?:true|false)$/i;

/** One option as written: `--name=value`, `--name`, `-x=value`, `-xvalue`, `-x`. */
interface Written {
  readonly text: string;
  readonly inline: string | undefined;
}

function splitInline(arg: string, at: number): Written {
  const equals = arg.indexOf('=', at);
  return equals === -1
    ? { text: arg, inline: undefined }
    : { text: arg.slice(0, equals), inline: arg.slice(equals + 1) };
}

/**
 * Reads a command line as Unleash Edge 20 takes it (`flags-proxy [OPTIONS] <edge|offline|health|
 * ready> [OPTIONS]`, Edge's short and long options, lists repeated or comma-separated, switches
 * without a value) and as flags-proxy always has (any of its variables as `--kebab-case <value>`,
 * checked by `ownSettings`). Returns the Edge options as variables; throws a `UsageError` naming
 * every Edge option it cannot take. Edge options flags-proxy refuses or ignores are returned too,
 * for `edgeVariableFindings`.
 */
export function parseCommandLine(args: readonly string[]): CommandLine {
  let command: CommandName | undefined;
  const problems: string[] = [];
  /** Edge options given, with where each was given, for the scope check once the command is known. */
  const edgeGiven: { option: EdgeOption; label: string; value: string }[] = [];
  const ownGiven: OwnOption[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (!arg.startsWith('-') || arg === '-' || arg === '--') {
      if (command === undefined && isCommand(arg)) {
        command = arg;
        continue;
      }
      const meant = command === undefined ? closest(arg, COMMANDS) : undefined;
      problems.push(
        command !== undefined
          ? `unexpected argument "${arg}"`
          : meant === undefined
            ? `unknown command "${arg}"`
            : `unknown command "${arg}" (did you mean ${meant}?)`,
      );
      continue;
    }
    const long = arg.startsWith('--');
    const written = long ? splitInline(arg, 2) : splitInline(arg, 1);
    let option: EdgeOption | undefined;
    let inline = written.inline;
    if (long) {
      const name = written.text.slice(2);
      option = EDGE_OPTIONS.find((candidate) => candidate.long === name);
      if (option === undefined) {
        // Whether it is a switch is known once the command is: a following word that is not an
        // option or a command is its value (`--strict true` as well as `--upstream-url <url>`).
        const next = args[i + 1];
        const takesNext =
          inline === undefined && next !== undefined && !next.startsWith('-') && !isCommand(next);
        if (takesNext) i++;
        ownGiven.push({
          name: edgeVariable(name),
          label: written.text,
          value: takesNext ? next : inline,
        });
        continue;
      }
    } else {
      const letter = arg.slice(1, 2);
      // `-tvalue`: the rest of the word is the value.
      if (inline === undefined && arg.length > 2) inline = arg.slice(2);
      const here = scopeOf(command);
      option = EDGE_OPTIONS.find(
        (candidate) =>
          candidate.short === letter &&
          (here === undefined
            ? candidate.scope === 'top' || candidate.scope === 'global'
            : candidate.scope === 'global' || candidate.scope === here),
      );
      if (option === undefined) {
        const elsewhere = shortElsewhere(letter, command);
        problems.push(unknownShort(letter, command, elsewhere));
        // Its value goes with it: `-u <url>` before `edge` is one mistake, not two.
        const next = args[i + 1];
        const valued = elsewhere.length > 0 && elsewhere.every((other) => other.flag !== true);
        if (valued && inline === undefined && next !== undefined && !next.startsWith('-')) i++;
        continue;
      }
    }
    const label = long ? written.text : `-${option.short} (--${option.long})`;
    let value: string;
    if (option.flag) {
      if (inline !== undefined && !BOOLEAN_WORD.test(inline)) {
        problems.push(`${label} is a switch: give it alone, or as =true or =false`);
        continue;
      }
      value = inline?.toLowerCase() ?? 'true';
    } else if (inline !== undefined) value = inline;
    else {
      const next = args[i + 1];
      if (next === undefined) {
        problems.push(`${label} needs a value`);
        continue;
      }
      value = next;
      i++;
    }
    const port = long ? undefined : portAfterCommand(option, value);
    if (port !== undefined) {
      problems.push(
        `${label} ${port} looks like a port: after \`${command}\`, -${option.short} is the pretrusted tokens; write the port before \`${command}\` (-${option.short} ${port} ${command} …)`,
      );
      continue;
    }
    edgeGiven.push({ option, label, value });
  }
  const variables: Record<string, string> = {};
  const counted = new Map<string, string[]>();
  for (const { option, label, value } of edgeGiven) {
    if (!takes(command, option.scope)) {
      problems.push(
        `${label} is an option of ${option.scope === 'probe' ? 'health and ready' : option.scope}, not of ${command ?? 'serving without a command'}`,
      );
      continue;
    }
    if (option.env === undefined) {
      if (option.handling.kind === 'refused')
        problems.push(
          `${label} is an Unleash Edge option flags-proxy does not take: ${option.handling.instead}`,
        );
      continue;
    }
    const values = counted.get(option.env) ?? [];
    if (values.length > 0 && !option.list) {
      problems.push(`${label} is given more than once`);
      continue;
    }
    counted.set(option.env, [...values, value]);
  }
  for (const [name, values] of counted) variables[name] = values.join(',');
  if (problems.length > 0) throw new UsageError(problems);
  const written: Record<string, string> = {};
  for (const { option, label } of edgeGiven)
    if (option.env !== undefined) written[option.env] ??= label;
  for (const { name, label } of ownGiven) written[name] ??= label;
  return { command, variables, own: ownGiven, written };
}

/**
 * The command line's settings as variables: its Edge options and its own options, checked against
 * the variables the command takes (`known`). Throws a `UsageError` naming every option it does not
 * take, with the option meant when one is close.
 */
export function ownSettings(line: CommandLine, known: OwnVariables): Record<string, string> {
  const { command } = line;
  const problems: string[] = [];
  const variables: Record<string, string> = { ...line.variables };
  for (const { name, label, value } of line.own) {
    if (!known.names.has(name)) {
      const meant = closest(label.slice(2), longOptions(command, known));
      problems.push(
        `unknown option ${label}${command === undefined ? '' : ` for ${command}`}${meant === undefined ? '' : ` (did you mean --${meant}?)`}`,
      );
      continue;
    }
    if (known.switches.has(name)) {
      if (value !== undefined && !BOOLEAN_WORD.test(value)) {
        problems.push(`${label} is a switch: give it alone, or as =true or =false`);
        continue;
      }
      variables[name] = value?.toLowerCase() ?? 'true';
      continue;
    }
    if (value === undefined) {
      problems.push(`${label} needs a value`);
      continue;
    }
    variables[name] = value;
  }
  if (problems.length > 0) throw new UsageError(problems);
  return variables;
}

/**
 * The port in the value of `-p` written after the subcommand, where it is Edge's pretrusted tokens
 * (`-p` is the port before it): no pretrusted token is a bare number, and taking one would listen
 * on the default port and trust that number as a key.
 */
function portAfterCommand(option: EdgeOption, value: string): string | undefined {
  if (option.long !== 'pretrusted-tokens') return undefined;
  return value
    .split(',')
    .map((entry) => entry.trim())
    .find((entry) => /^\d{1,5}$/.test(entry));
}

/** The long options `command` takes, without `--`: Edge's, ours (`known`), help and version. */
function longOptions(command: CommandName | undefined, known: OwnVariables): string[] {
  return [
    ...EDGE_OPTIONS.filter((option) => takes(command, option.scope)).map((option) => option.long),
    ...[...known.names].map((name) => name.toLowerCase().replaceAll('_', '-')),
    'help',
    'version',
  ];
}

/** Who takes the options of a scope, and where they are written, in a message's words. */
const OWNER: Readonly<Record<EdgeScope, string>> = {
  top: 'flags-proxy itself',
  global: 'every command',
  edge: 'edge',
  offline: 'offline',
  probe: 'health and ready',
};

function place(scope: EdgeScope, command: CommandName | undefined): string {
  if (scope === 'top') return `before \`${command ?? 'the subcommand'}\``;
  if (scope === 'probe') return 'after `health` or `ready`';
  return `after \`${scope}\``;
}

/** The Edge options a short option `command` does not take stands for elsewhere. */
function shortElsewhere(letter: string, command: CommandName | undefined): EdgeOption[] {
  return EDGE_OPTIONS.filter(
    (option) => option.short === letter && option.scope !== scopeOf(command),
  );
}

/**
 * The problem of a short option `command` does not take: where it belongs when it is an option
 * `elsewhere` (`-u` before `edge`), else unknown.
 */
function unknownShort(
  letter: string,
  command: CommandName | undefined,
  elsewhere: readonly EdgeOption[],
): string {
  const unknown = `unknown option -${letter}${command === undefined ? '' : ` for ${command}`}`;
  const [only] = elsewhere;
  if (only === undefined) return unknown;
  if (elsewhere.length === 1)
    return `-${letter} (--${only.long}) is an option of ${OWNER[only.scope]}: write it ${place(only.scope, command)}`;
  const owners = elsewhere.map((option) => `${OWNER[option.scope]} (--${option.long})`);
  return `${unknown}; it is an option of ${owners.join(' and of ')}: write it after the subcommand`;
}
