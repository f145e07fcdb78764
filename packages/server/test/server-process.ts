import { fileURLToPath } from 'node:url';
import type { ImportRequest } from '@flags/schemas';
import { type Dispatcher, request } from 'undici';
import {
  freePort,
  type SpawnedEntry,
  spawnEntry,
  waitUntilHealthy,
} from '../../../test/helpers/processes.js';
import { ADMIN_TOKEN, admin, DEV_TOKEN } from './helpers.js';

/** flags-server as a child process, and import payloads large enough to take a while. */

const MAIN = fileURLToPath(new URL('../src/main.ts', import.meta.url));

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

export interface ServerProcess extends SpawnedEntry {
  readonly base: string;
}

/** `flags-server` as its own process on the given storage; resolves once it answers /health. */
export async function spawnServer(env: Record<string, string>): Promise<ServerProcess> {
  const port = await freePort();
  const { child, exited, output } = spawnEntry(MAIN, {
    SERVER_PORT: String(port),
    SERVER_HOST: '127.0.0.1',
    FLAGS_ADMIN_TOKENS: ADMIN_TOKEN,
    FLAGS_CLIENT_TOKENS: DEV_TOKEN,
    LOG_LEVEL: 'warn',
    JSON_LOGGER: 'true',
    ...env,
  });
  const base = `http://127.0.0.1:${port}`;
  await waitUntilHealthy(`${base}/health`, child, { timeoutMs: 60_000, output });
  return { child, base, exited, output };
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
