import { type ChildProcess, spawn } from 'node:child_process';
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
 * A service's TypeScript entry point (`main`) as its own process, from the repository root, with
 * only `PATH` and `env` in its environment.
 */
export function spawnEntry(main: string, env: Record<string, string>): SpawnedEntry {
  return spawnCommand(process.execPath, ['--conditions=source', '--import', 'tsx', main], env);
}

/** A command as its own process, from the repository root, with only `PATH` and `env`. */
export function spawnCommand(
  command: string,
  args: readonly string[],
  env: Record<string, string>,
): SpawnedEntry {
  const child = spawn(command, args, {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
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
