import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { ImportRequest } from '@flags/schemas';
import { type Dispatcher, request } from 'undici';
import { ADMIN_TOKEN, admin, DEV_TOKEN } from './helpers.js';

/** flags-server as a child process, and import payloads large enough to take a while. */

const MAIN = fileURLToPath(new URL('../src/main.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** `count` flags with three strategies each; `variant` changes every value but the names. */
export function bigImport(count: number, variant: number): ImportRequest {
  const names = Array.from({ length: count }, (_, i) => `safety-${String(i).padStart(5, '0')}`);
  return {
    project: 'default',
    environment: 'development',
    data: {
      features: names.map((name) => ({
        name,
        type: 'release',
        project: 'default',
        description: `variant ${variant}`,
      })),
      featureStrategies: names.flatMap((name) => [
        {
          name: 'flexibleRollout',
          featureName: name,
          sortOrder: 0,
          parameters: {
            rollout: String((variant * 17) % 101),
            stickiness: 'default',
            groupId: name,
          },
          constraints: [
            { contextName: 'userId', operator: 'IN', values: [`u${variant}`, `v${variant}`] },
          ],
        },
        {
          name: 'userWithId',
          featureName: name,
          sortOrder: 1,
          parameters: { userIds: `a${variant},b${variant}` },
          constraints: [],
        },
        { name: 'default', featureName: name, sortOrder: 2, parameters: {}, constraints: [] },
      ]),
      featureEnvironments: names.map((name) => ({
        name,
        featureName: name,
        environment: 'development',
        enabled: variant % 2 === 0,
        variants: [
          {
            name: `v${variant}`,
            weight: 1000,
            weightType: 'variable',
            stickiness: 'default',
            payload: { type: 'string', value: `payload ${variant}` },
          },
        ],
      })),
      contextFields: [],
      featureTags: [],
      segments: [],
      tagTypes: [],
      dependencies: [],
    },
  } as unknown as ImportRequest;
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface ServerProcess {
  readonly child: ChildProcess;
  readonly base: string;
  readonly exited: Promise<number | null>;
  output(): string;
}

/** `flags-server` as its own process on the given storage; resolves once it answers /health. */
export async function spawnServer(env: Record<string, string>): Promise<ServerProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', MAIN], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      SERVER_PORT: String(port),
      SERVER_HOST: '127.0.0.1',
      FLAGS_ADMIN_TOKENS: ADMIN_TOKEN,
      FLAGS_CLIENT_TOKENS: DEV_TOKEN,
      LOG_LEVEL: 'warn',
      JSON_LOGGER: 'true',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk) => {
    output += String(chunk);
  });
  child.stderr?.on('data', (chunk) => {
    output += String(chunk);
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`flags-server exited at start: ${output}`);
    try {
      const health = await request(`${base}/health`);
      await health.body.dump();
      if (health.statusCode === 200) break;
    } catch {}
    if (Date.now() > deadline) throw new Error(`flags-server did not start: ${output}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { child, base, exited, output: () => output };
}

export async function postImport(
  base: string,
  payload: string,
  dispatcher?: Dispatcher,
): Promise<{ status: number; ms: number }> {
  const started = Date.now();
  const response = await request(`${base}/api/admin/features-batch/import`, {
    method: 'POST',
    headers: { ...admin, 'content-type': 'application/json' },
    body: payload,
    headersTimeout: 120_000,
    bodyTimeout: 120_000,
    ...(dispatcher === undefined ? {} : { dispatcher }),
  });
  await response.body.dump();
  return { status: response.statusCode, ms: Date.now() - started };
}
