import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, relative } from 'node:path';
import { USAGE_EXIT_CODE, UsageError, usageMessage } from '@flags/config';
import { applyPlan } from './apply.js';
import { AdminClient, flagEvents, readServer, ServerError, type ServerEvent } from './client.js';
import { type Command, parseCommandLine } from './command-line.js';
import { FileError, flagFile, type ReadResult, readDirectory, writeDirectory } from './files.js';
import { manifestOf } from './manifest.js';
import type { Desired } from './model.js';
import { countOf, makePlan, type Plan } from './plan.js';
import {
  outcomeJson,
  outcomeMarkdown,
  outcomeText,
  planJson,
  planMarkdown,
  planText,
} from './render.js';
import { flagsSchema } from './schema.js';

/** What a run of `flags` reads and writes besides files: the environment and the two streams. */
export interface Io {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  /** Where relative paths start (default: the process's working directory). */
  readonly cwd?: string;
}

/** The variables `--url` and `--token` fall back to. */
export const URL_VARIABLE = 'FLAGS_SERVER_URL';
export const TOKEN_VARIABLE = 'FLAGS_ADMIN_TOKEN';

/** A saved plan (`plan --out`): what the files said, and the version of each flag it saw. */
interface SavedPlan {
  readonly format: 'flags-plan/1';
  readonly server: string;
  readonly desired: Desired;
  readonly managed: string[];
  readonly flagFiles: Record<string, { file: string; time: number }>;
  readonly versions: Record<string, string | null>;
}

class RunError extends Error {}

function clientOf(command: Command, io: Io): AdminClient {
  const url = command.url ?? io.env[URL_VARIABLE];
  const token = command.token ?? io.env[TOKEN_VARIABLE];
  const missing = [
    url === undefined ? `--url or ${URL_VARIABLE}` : undefined,
    token === undefined ? `--token or ${TOKEN_VARIABLE}` : undefined,
  ].filter((m) => m !== undefined);
  if (missing.length > 0) throw new RunError(`${command.name} needs ${missing.join(' and ')}`);
  return new AdminClient(url!, token!);
}

/**
 * When a flag's file was last written: its last commit's time when it is committed and unchanged
 * in a Git work tree (a checkout's file times are the checkout's), else its modification time.
 */
function fileTimeOf(path: string): number {
  try {
    const cwd = dirname(path);
    const status = execFileSync('git', ['status', '--porcelain', '--', path], {
      cwd,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    if (status.trim() === '') {
      const committed = execFileSync('git', ['log', '-1', '--format=%ct', '--', path], {
        cwd,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      }).trim();
      if (committed !== '') return Number(committed) * 1000;
    }
  } catch {
    // Not in a Git work tree, or no git: the file's own time.
  }
  return statSync(path).mtimeMs;
}

async function planFor(
  client: AdminClient,
  files: Pick<ReadResult, 'desired' | 'flagFiles' | 'managed'>,
  fileTime: (project: string, flag: string) => number,
) {
  const server = await readServer(client);
  const cache = new Map<string, Promise<readonly ServerEvent[]>>();
  const events = (flag: string) => {
    let found = cache.get(flag);
    if (!found) {
      found = flagEvents(client, flag).catch(() => []);
      cache.set(flag, found);
    }
    return found;
  };
  const plan = await makePlan({ files, server, events, fileTime });
  return { server, plan };
}

function writePlan(plan: Plan, server: string, command: Command, io: Io): void {
  if (command.output === 'json') io.stdout(`${JSON.stringify(planJson(plan, server), null, 2)}\n`);
  else if (command.output === 'markdown') io.stdout(planMarkdown(plan, server));
  else io.stdout(planText(plan, server));
}

/** Runs one command line; answers the exit status (0, 2 for changes with --detailed-exitcode, 1 on an error). */
export async function run(args: readonly string[], io: Io): Promise<number> {
  let command: ReturnType<typeof parseCommandLine>;
  try {
    command = parseCommandLine(args);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.stderr(usageMessage('flags', error.problems, 'the commands and examples'));
    return USAGE_EXIT_CODE;
  }
  if (command === 'help') {
    const { help } = await import('./help.js');
    io.stdout(help());
    return 0;
  }
  if (command === 'version') {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
    io.stdout(`flags ${(pkg as { version: string }).version}\n`);
    return 0;
  }
  const cwd = io.cwd ?? process.cwd();
  const resolve = (path: string) => (path.startsWith('/') ? path : `${cwd}/${path}`);
  const dir = resolve(command.dir);
  try {
    const readsFiles =
      ['validate', 'manifest', 'plan'].includes(command.name) ||
      (command.name === 'apply' && command.plan === undefined);
    if (readsFiles && !existsSync(dir)) {
      throw new RunError(
        `${command.dir}: no such directory (--dir names the directory of the files)`,
      );
    }
    switch (command.name) {
      case 'schema': {
        const text = `${JSON.stringify(flagsSchema, null, 2)}\n`;
        if (command.out) writeFileSync(resolve(command.out), text);
        else io.stdout(text);
        return 0;
      }
      case 'validate': {
        const files = readDirectory(dir);
        io.stdout(`${files.desired.flags.length} flag(s) and their definitions are valid.\n`);
        return 0;
      }
      case 'manifest': {
        const files = readDirectory(dir);
        const text = `${JSON.stringify(manifestOf(files.desired), null, 2)}\n`;
        if (command.out) {
          writeFileSync(resolve(command.out), text);
          io.stderr(`wrote ${command.out}: ${files.desired.flags.length} flag(s)\n`);
        } else io.stdout(text);
        return 0;
      }
      case 'pull': {
        const client = clientOf(command, io);
        const { desired } = await readServer(client);
        const written = writeDirectory(dir, desired);
        io.stdout(
          `pulled ${desired.flags.length} flag(s) from ${client.url} into ${relative(cwd, dir) || '.'} (${written.length} files)\n`,
        );
        return 0;
      }
      case 'plan': {
        const client = clientOf(command, io);
        const files = readDirectory(dir);
        const fileTime = (project: string, flag: string) =>
          fileTimeOf(flagFile(dir, project, flag));
        const { server, plan } = await planFor(client, files, fileTime);
        writePlan(plan, client.url, command, io);
        if (command.out) {
          const times: SavedPlan['flagFiles'] = {};
          for (const { project, flag } of files.desired.flags) {
            const key = `${project}/${flag.name}`;
            times[key] = {
              file: files.flagFiles.get(key)?.file ?? '',
              time: fileTime(project, flag.name),
            };
          }
          const versions: SavedPlan['versions'] = {};
          for (const action of plan.actions) {
            if (action.kind === 'flag')
              versions[`${action.project}/${action.name}`] = action.serverVersion ?? null;
          }
          const saved: SavedPlan = {
            format: 'flags-plan/1',
            server: client.url,
            desired: files.desired,
            managed: [...files.managed],
            flagFiles: times,
            versions,
          };
          void server;
          writeFileSync(resolve(command.out), `${JSON.stringify(saved)}\n`);
        }
        const { create, update, archive } = countOf(plan);
        return command.detailedExitcode && create + update + archive > 0 ? 2 : 0;
      }
      case 'apply': {
        const client = clientOf(command, io);
        let files: Pick<ReadResult, 'desired' | 'flagFiles' | 'managed'>;
        let fileTime: (project: string, flag: string) => number;
        let expected: Map<string, string | undefined> | undefined;
        if (command.plan) {
          const saved = JSON.parse(readFileSync(resolve(command.plan), 'utf8')) as SavedPlan;
          if (saved.format !== 'flags-plan/1')
            throw new RunError(`${command.plan} is not a plan of flags plan --out`);
          if (saved.server !== client.url) {
            throw new RunError(
              `${command.plan} was planned against ${saved.server}, not ${client.url}`,
            );
          }
          files = {
            desired: saved.desired,
            managed: new Set(saved.managed) as ReadResult['managed'],
            flagFiles: new Map(
              Object.entries(saved.flagFiles).map(([key, { file }]) => [
                key,
                { file, at: () => file },
              ]),
            ),
          };
          fileTime = (project, flag) => saved.flagFiles[`${project}/${flag}`]?.time ?? 0;
          expected = new Map(
            Object.entries(saved.versions).map(([key, version]) => [key, version ?? undefined]),
          );
        } else {
          files = readDirectory(dir);
          fileTime = (project, flag) => fileTimeOf(flagFile(dir, project, flag));
        }
        const { server, plan } = await planFor(client, files, fileTime);
        // A saved plan: flags it did not plan to change but that now differ are left for the next plan.
        const actions = expected
          ? plan.actions.filter(
              (action) =>
                action.kind !== 'flag' || expected.has(`${action.project}/${action.name}`),
            )
          : plan.actions;
        const outcomes = await applyPlan(
          client,
          { ...plan, actions },
          files.desired,
          server,
          expected,
        );
        if (command.output === 'json')
          io.stdout(`${JSON.stringify(outcomeJson(outcomes), null, 2)}\n`);
        else if (command.output === 'markdown') io.stdout(outcomeMarkdown(outcomes));
        else io.stdout(outcomeText(outcomes));
        return outcomes.every((outcome) => outcome.result === 'applied') ? 0 : 1;
      }
    }
  } catch (error) {
    if (error instanceof FileError) {
      io.stderr(
        `${error.problems.map((problem) => `${relative(cwd, dir) || '.'}/${problem}`).join('\n')}\n`,
      );
      io.stderr(
        `flags: ${error.problems.length} problem(s) in the files; nothing was sent to the server\n`,
      );
      return 1;
    }
    if (error instanceof ServerError || error instanceof RunError) {
      io.stderr(`flags: ${error.message}\n`);
      return 1;
    }
    throw error;
  }
}
