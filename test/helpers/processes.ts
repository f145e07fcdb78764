import { type ChildProcess, spawn } from 'node:child_process';
import { get } from 'node:http';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

/** A port nobody listens on right now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface SpawnedEntry {
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  /** Everything it wrote to stdout and stderr so far. */
  output(): string;
}

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * A service's TypeScript entry point (`main`) run with `args` as its own process, from the
 * repository root, with only `PATH` and `env` in its environment.
 */
export function spawnEntry(
  main: string,
  env: Record<string, string>,
  args: readonly string[] = [],
): SpawnedEntry {
  return spawnCommand(
    process.execPath,
    ['--conditions=source', '--import', 'tsx', main, ...args],
    env,
  );
}

/**
 * `main …args` (see `spawnEntry`) as a command that should exit at once: its exit status
 * (`'still running'` when it had not within 20 s: it is then stopped) and all it wrote.
 */
export async function runEntry(
  main: string,
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<{ status: number | null | 'still running'; output: string }> {
  const entry = spawnEntry(main, env, args);
  const status = await exitStatusWithin(entry, 20_000);
  return { status, output: entry.output() };
}

export interface SpawnOptions {
  /** Leader of its own process group, so `process.kill(-pid)` ends it and all it started. */
  readonly detached?: boolean;
  /** A pipe on its standard input, closed by the system when this process ends in any way. */
  readonly stdin?: 'ignore' | 'pipe';
}

/** A command as its own process, from the repository root, with only `PATH` and `env`. */
export function spawnCommand(
  command: string,
  args: readonly string[],
  env: Record<string, string>,
  { detached = false, stdin = 'ignore' }: SpawnOptions = {},
): SpawnedEntry {
  const child = spawn(command, args, {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: [stdin, 'pipe', 'pipe'],
    detached,
  });
  let output = '';
  const record = (chunk: unknown) => {
    output += String(chunk);
  };
  child.stdout?.on('data', record);
  child.stderr?.on('data', record);
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, output: () => output };
}

/**
 * The exit status of `entry` once it exits, or `'still running'` when it has not within
 * `timeoutMs`: it is then stopped (SIGTERM) before this returns. For commands that should exit at
 * once and might instead start a server.
 */
export async function exitStatusWithin(
  entry: SpawnedEntry,
  timeoutMs: number,
): Promise<number | null | 'still running'> {
  let timer: NodeJS.Timeout | undefined;
  const status = await Promise.race([
    entry.exited,
    new Promise<'still running'>((resolve) => {
      timer = setTimeout(() => resolve('still running'), timeoutMs);
    }),
  ]);
  clearTimeout(timer);
  if (status === 'still running') {
    entry.child.kill('SIGTERM');
    await entry.exited;
  }
  return status;
}

export interface HealthWait {
  /** Give up after this long (default 30 s). */
  readonly timeoutMs?: number;
  /** What the process wrote so far, for the error message. */
  readonly output?: () => string;
  /** Request headers (a token, for a route that needs one). */
  readonly headers?: Record<string, string>;
}

/**
 * Resolves once `url` answers 200; fails if `child` exits first or the time runs out (and then
 * kills it). Each probe
 * uses a connection of its own (`agent: false`), so none is left open into a shutdown test.
 */
export async function waitUntilHealthy(
  url: string,
  child: ChildProcess,
  { timeoutMs = 30_000, output = () => '', headers = {} }: HealthWait = {},
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`exited before ${url} answered 200: ${output()}`);
    if ((await statusOf(url, headers)) === 200) return;
    if (Date.now() > deadline) {
      // A child left running would keep the test file's process alive until the run's limit.
      child.kill('SIGKILL');
      throw new Error(`${url} did not answer 200 in time: ${output()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The status of a GET, or 0 when there is no answer. */
function statusOf(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve) => {
    get(url, { agent: false, headers }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    }).on('error', () => resolve(0));
  });
}

/** The port a process printed as its first line (a bare reference server of the benchmarks). */
export async function printedPort(entry: SpawnedEntry): Promise<number> {
  for (let attempt = 0; attempt < 600; attempt++) {
    const port = /^(\d+)\n/.exec(entry.output())?.[1];
    if (port !== undefined) return Number(port);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`no port printed:\n${entry.output()}`);
}
