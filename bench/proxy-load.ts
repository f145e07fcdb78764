// What the proxy benchmark and the soak share: the built `flags-proxy` command, waiting for a
// flags-proxy process to be ready, and the `GET /proxy` / `POST /proxy` requests of one context.
import { type ChildProcess, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type autocannon from 'autocannon';
import type { realisticContexts } from '../packages/proxy/test/fixtures/realistic.js';
import { waitUntilHealthy } from '../test/helpers/processes.js';

type BenchContext = ReturnType<typeof realisticContexts>[number];

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The `flags-proxy` command as npm links it: what `npx flags-proxy` runs. */
export const PROXY_COMMAND = join(ROOT, 'node_modules/.bin/flags-proxy');

/**
 * Brings the build the command runs up to date (plain node, no TypeScript loader). If the tree
 * does not compile right now, the last build is measured, with a warning.
 */
export function buildProxy(): void {
  const build = spawnSync(
    process.execPath,
    [join(ROOT, 'node_modules/typescript/bin/tsc'), '-b', 'packages/proxy'],
    { cwd: ROOT, stdio: 'inherit' },
  );
  if (build.status !== 0)
    console.warn('warning: packages/proxy does not build; measuring the previous build in dist/');
}

/** Resolves once `{base}/proxy/health` answers 200; fails if the process exits or 30 s pass. */
export function waitReady(base: string, child: ChildProcess): Promise<void> {
  return waitUntilHealthy(`${base}/proxy/health`, child);
}

/**
 * `GET <mount>` with the context in the query, or `POST <mount>` with it in the body (`/proxy`, or
 * Edge's `/api/frontend`).
 */
export function evaluationRequest(
  method: 'GET' | 'POST',
  context: BenchContext,
  clientKey: string,
  mount = '/proxy',
): autocannon.Request {
  if (method === 'POST') {
    return {
      method: 'POST',
      path: mount,
      headers: { authorization: clientKey, 'content-type': 'application/json' },
      body: JSON.stringify({ context }),
    };
  }
  const query = new URLSearchParams({
    userId: context.userId,
    sessionId: context.sessionId,
    remoteAddress: context.remoteAddress,
  });
  for (const [name, value] of Object.entries(context.properties))
    query.append(`properties[${name}]`, value);
  return { method: 'GET', path: `${mount}?${query}`, headers: { authorization: clientKey } };
}
