import { existsSync } from 'node:fs';
import { closest, UsageError } from '@flags/config';
import { ConfigError, loadConfig } from '../config/load.js';
import { lockDataDir } from '../db/data-dir-lock.js';
import type { Database } from '../db/database.js';
import { openDatabase } from '../db/open.js';
import { copyInstance, planInstance } from './copy.js';
import { checkSourceDatabase, readPasswordHashes } from './password-source.js';
import { countPlan, type Plan, planChanges } from './plan.js';
import { KINDS, type Kind } from './records.js';
import { MigrateError, readUnleash, UnleashApi } from './unleash-source.js';
import { verifyCopy } from './verify.js';

/** Where the command writes, and what it reads its settings from (`main.ts` passes the process's). */
export interface CommandIo {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
}

/** Exit statuses: as `terraform plan -detailed-exitcode`, 2 says a dry run found changes. */
export const EXIT = { ok: 0, failed: 1, usage: 2, changes: 2 } as const;

export const MIGRATE_SYNOPSIS = `Usage:
  flags-server migrate from-unleash --url <unleash-server URL> --token <admin token> [--database <URL>] [--dry-run]
  flags-server migrate verify --url <unleash-server URL> --token <admin token> [--flags-url <URL>] [--contexts <N>]
`;

/** `flags-server migrate --help`. */
export function migrateHelp(): string {
  return `${MIGRATE_SYNOPSIS}
flags-server migrate: copies a whole unleash-server (6, 7 or 8, open source) into the database
flags-server is configured with (DATABASE_URL, or DATA_DIR for PGlite), whether flags-server runs or
not (PGlite: stop it first). Projects, environments, flag types, tag types and tags, context fields,
custom strategies, segments, every flag in every environment (archived ones too), API tokens with
their secrets, and users with their root roles. One transaction: it all lands or nothing does. A
second run copies only what changed since; nothing is deleted.

Commands:
  from-unleash   Copy. Prints the plan (create, update, skip per kind) and what does not move.
      --url <URL>         unleash-server's base URL (as its SDKs are given, without /api)
      --token <token>     an admin API token, or the personal access token of an Admin
      --database <URL>    unleash-server's PostgreSQL (read-only): copies password hashes, so
                          users keep their passwords; without it each user gets a link to set one
      --dry-run           write nothing; exit 0 when nothing would change, 2 when something would
  verify         Compare what SDKs get from both servers with each of unleash-server's tokens:
                 /api/client/features per client token, /api/frontend for N contexts per frontend
                 token. Prints the differences; exits 1 on any.
      --url <URL>, --token <token>   unleash-server, as above
      --flags-url <URL>   flags-server's base URL (default: PUBLIC_URL)
      --contexts <N>      contexts per frontend token (default 1000)

Examples:
  See what would change, without writing:
    DATABASE_URL=postgres://flags@db/flags flags-server migrate from-unleash --url https://unleash.example.com --token '*:*.<secret>' --dry-run
  Copy, with passwords:
    DATABASE_URL=postgres://flags@db/flags flags-server migrate from-unleash --url https://unleash.example.com --token '*:*.<secret>' --database postgres://unleash@db/unleash
  Compare the answers once flags-server runs:
    flags-server migrate verify --url https://unleash.example.com --token '*:*.<secret>' --flags-url http://localhost:4242

Not copied: metrics and their history, applications and instances seen, the event log, sessions,
personal access tokens (unleash-server does not show their secrets), signup links, and Enterprise
data (change requests, custom roles, groups, SSO settings, banners, actions). See
docs/migrate-from-unleash-server.md.
`;
}

/** What was not copied, printed after every copy. */
const NOT_MOVED = [
  'metrics and their history, applications and instances (SDKs report to flags-server from now on)',
  "the event log (flags-server's starts with this copy)",
  'login sessions (users log in again)',
  'personal access tokens (unleash-server does not show their secrets: users make new ones)',
  'public signup links (make new ones)',
  'Enterprise data: change requests, custom and project roles, groups, SSO settings, banners, actions',
];

interface Options {
  readonly url: string;
  readonly token: string;
  readonly database?: string;
  readonly dryRun: boolean;
  readonly flagsUrl?: string;
  readonly contexts: number;
}

const VALUE_OPTIONS: Record<'from-unleash' | 'verify', readonly string[]> = {
  'from-unleash': ['url', 'token', 'database'],
  verify: ['url', 'token', 'flags-url', 'contexts'],
};
const SWITCHES: Record<'from-unleash' | 'verify', readonly string[]> = {
  'from-unleash': ['dry-run'],
  verify: [],
};

/** Reads `migrate <subcommand> …`'s options; every problem is a `UsageError`. */
export function parseMigrateArgs(
  subcommand: 'from-unleash' | 'verify',
  args: readonly string[],
): Options {
  const values = new Map<string, string>();
  const switches = new Set<string>();
  const problems: string[] = [];
  const known = [...VALUE_OPTIONS[subcommand], ...SWITCHES[subcommand]];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (!arg.startsWith('--')) {
      problems.push(`unexpected argument "${arg}"`);
      continue;
    }
    const equals = arg.indexOf('=');
    const name = arg.slice(2, equals === -1 ? undefined : equals);
    if (VALUE_OPTIONS[subcommand].includes(name)) {
      let value = equals === -1 ? undefined : arg.slice(equals + 1);
      if (value === undefined) {
        value = args[i + 1];
        i++;
      }
      if (value === undefined || value === '') problems.push(`--${name} needs a value`);
      else values.set(name, value);
    } else if (SWITCHES[subcommand].includes(name) && equals === -1) {
      switches.add(name);
    } else {
      const meant = closest(name, known);
      problems.push(
        `unknown option --${name} for migrate ${subcommand}${meant ? ` (did you mean --${meant}?)` : ''}`,
      );
    }
  }
  for (const required of ['url', 'token']) {
    if (!values.has(required)) problems.push(`migrate ${subcommand} needs --${required}`);
  }
  const contexts = Number(values.get('contexts') ?? 1000);
  if (!Number.isSafeInteger(contexts) || contexts < 1) {
    problems.push(`--contexts takes a whole number of 1 or more, not "${values.get('contexts')}"`);
  }
  if (problems.length > 0) throw new UsageError(problems);
  return {
    url: values.get('url') as string,
    token: values.get('token') as string,
    ...(values.has('database') ? { database: values.get('database') as string } : {}),
    ...(values.has('flags-url') ? { flagsUrl: values.get('flags-url') as string } : {}),
    dryRun: switches.has('dry-run'),
    contexts,
  };
}

const LABELS: Record<Kind, string> = {
  environments: 'environments',
  projects: 'projects',
  featureTypes: 'flag types',
  tagTypes: 'tag types',
  tags: 'tags',
  contextFields: 'context fields',
  strategies: 'custom strategies',
  segments: 'segments',
  flags: 'flags',
  apiTokens: 'API tokens',
  users: 'users',
};

/** The plan as a table: one row per kind, creates, updates and skips. */
export function planTable(plan: Plan): string {
  const counts = countPlan(plan);
  const rows = KINDS.map((kind) => [
    LABELS[kind],
    String(counts[kind].create),
    String(counts[kind].update),
    String(counts[kind].skip),
  ]);
  const header = ['', 'create', 'update', 'skip'];
  const widths = header.map((_, column) =>
    Math.max(...[header, ...rows].map((row) => (row[column] as string).length)),
  );
  const line = (row: readonly string[]) =>
    row
      .map((cell, column) =>
        column === 0 ? cell.padEnd(widths[0] as number) : cell.padStart(widths[column] as number),
      )
      .join('  ')
      .trimEnd();
  return `${[header, ...rows].map(line).join('\n')}\n`;
}

/** The names of what a plan creates or updates, a few per kind. */
function planDetails(plan: Plan): string {
  const lines: string[] = [];
  for (const kind of KINDS) {
    const changed = (plan.changes[kind] as { key: string; action: string }[]).filter(
      (change) => change.action !== 'skip',
    );
    if (changed.length === 0 || kind === 'apiTokens') continue;
    const shown = changed.slice(0, 10).map((change) => `${change.action} ${change.key}`);
    const more = changed.length > 10 ? `, and ${changed.length - 10} more` : '';
    lines.push(`  ${LABELS[kind]}: ${shown.join(', ')}${more}`);
  }
  return lines.length > 0 ? `${lines.join('\n')}\n` : '';
}

/**
 * `flags-server migrate …args` (args after `migrate`): returns the exit status. Usage mistakes
 * throw `UsageError` (main prints them and exits 2).
 */
export async function runMigrate(args: readonly string[], io: CommandIo): Promise<number> {
  const [subcommand, ...rest] = args;
  if (subcommand === undefined || subcommand === '--help' || subcommand === '-h') {
    io.out(migrateHelp());
    return subcommand === undefined ? EXIT.usage : EXIT.ok;
  }
  if (subcommand !== 'from-unleash' && subcommand !== 'verify') {
    const meant = closest(subcommand, ['from-unleash', 'verify']);
    throw new UsageError([
      `unknown migrate command "${subcommand}"${meant ? ` (did you mean ${meant}?)` : ''}: from-unleash or verify`,
    ]);
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    io.out(migrateHelp());
    return EXIT.ok;
  }
  const options = parseMigrateArgs(subcommand, rest);
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig(io.env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    io.err(`${error.message}\n`);
    return EXIT.failed;
  }
  try {
    const api = new UnleashApi(options.url, options.token);
    if (subcommand === 'verify') {
      return await verify(api, options.flagsUrl ?? config.publicUrl.href, options.contexts, io);
    }
    return await copy(api, options, config, io);
  } catch (error) {
    if (!(error instanceof MigrateError)) throw error;
    io.err(`flags-server migrate ${subcommand}: ${error.message}; nothing was written\n`);
    return EXIT.failed;
  }
}

async function verify(api: UnleashApi, flagsUrl: string, contexts: number, io: CommandIo) {
  io.out(`Comparing unleash-server at ${api.base.href} with flags-server at ${flagsUrl}\n`);
  const result = await verifyCopy({
    unleash: api,
    flagsUrl,
    contexts,
    onToken: (token, type, differences) =>
      io.out(
        `  ${type} token ${token}: ${differences === 0 ? 'same answers' : `${differences} differences`}\n`,
      ),
  });
  for (const difference of result.differences.slice(0, 20)) {
    io.out(
      `\n${difference.token} ${difference.what}\n  unleash-server: ${difference.unleash}\n  flags-server:   ${difference.flags}\n`,
    );
  }
  if (result.differences.length > 20) io.out(`\n…and ${result.differences.length - 20} more\n`);
  const comparisons = result.checked.reduce((sum, entry) => sum + entry.comparisons, 0);
  io.out(
    `${result.checked.length} tokens, ${comparisons} comparisons, ${result.differences.length} differences\n`,
  );
  return result.differences.length === 0 ? EXIT.ok : EXIT.failed;
}

async function copy(
  api: UnleashApi,
  options: Options,
  config: ReturnType<typeof loadConfig>,
  io: CommandIo,
): Promise<number> {
  const started = Date.now();
  // A DATA_DIR a running flags-server has open stops the command here rather than after the long
  // read; the database is opened (and the directory taken) once there is something to write.
  if (config.databaseUrl === undefined && config.dataDir && existsSync(config.dataDir)) {
    try {
      lockDataDir(config.dataDir)();
    } catch (error) {
      throw cannotOpen(error);
    }
  }
  io.out(`Reading unleash-server at ${api.base.href}\n`);
  const database = options.database;
  const source = await readUnleash(api, (instanceId) =>
    database === undefined ? Promise.resolve() : checkSourceDatabase(database, instanceId),
  );
  const hashes = database === undefined ? undefined : await readPasswordHashes(database, source);
  io.out(
    `unleash-server ${source.version}: ${source.records.flags.size} flags, ${source.records.apiTokens.size} API tokens, ${source.records.users.size} users (read in ${((Date.now() - started) / 1000).toFixed(1)} s)\n`,
  );

  let db: Database;
  try {
    db = await openDatabase(config);
  } catch (error) {
    throw cannotOpen(error);
  }
  try {
    if (options.dryRun) {
      const plan = await inDatabase(() => planInstance(db, source, hashes));
      io.out(`\nPlan (dry run, nothing written):\n${planTable(plan)}${planDetails(plan)}`);
      printNotes(source.notes, hashes === undefined, io);
      return planChanges(plan) ? EXIT.changes : EXIT.ok;
    }
    const outcome = await inDatabase(() =>
      copyInstance(db, source, hashes, { publicUrl: config.publicUrl, now: new Date() }),
    );
    io.out(`\nCopied:\n${planTable(outcome.plan)}${planDetails(outcome.plan)}`);
    if (outcome.links.length > 0) {
      io.out(
        '\nUsers created without a password (no --database): send each their link to set one (valid 7 days):\n',
      );
      for (const { user, link } of outcome.links) io.out(`  ${user}: ${link}\n`);
    }
    printNotes(source.notes, hashes === undefined, io);
    io.out(`Done in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
    return EXIT.ok;
  } finally {
    await db.close();
  }
}

/** flags-server's database could not be opened (a DATA_DIR in use, …), as the command tells it. */
function cannotOpen(error: unknown): MigrateError {
  const reason =
    error instanceof ConfigError ? error.problems.join('; ') : (error as Error).message;
  return new MigrateError(`cannot open flags-server's database: ${reason}`);
}

/**
 * Runs `work` on flags-server's database; its failure (unreachable, refused, a constraint) is
 * told as such: the transaction was rolled back.
 */
async function inDatabase<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof MigrateError) throw error;
    throw new MigrateError(
      `flags-server's database (DATABASE_URL or DATA_DIR) failed: ${(error as Error).message}`,
    );
  }
}

function printNotes(notes: readonly string[], withoutPasswords: boolean, io: CommandIo): void {
  const lines = [
    ...notes,
    ...(withoutPasswords ? ['passwords (give --database to copy them)'] : []),
    ...NOT_MOVED,
  ];
  io.out(`\nNot copied:\n${lines.map((line) => `  - ${line}\n`).join('')}`);
}
