import { type ProbeResult, probeUrl } from '@flags/config';

/**
 * The container probes of the `flags-server` command (`flags-server health`, `flags-server
 * ready`): an image without curl can ask the server running beside the probe whether it answers
 * (`/health`) or has loaded from its database (`/ready`). The container image's health check runs
 * `flags-server ready` in a container that runs flags-server.
 */
export const SERVER_PROBES = {
  health: { path: '/health', passed: 'healthy', failed: 'not healthy' },
  ready: { path: '/ready', passed: 'ready', failed: 'not ready' },
} as const;

export type ServerProbeName = keyof typeof SERVER_PROBES;

/** Short: a probe that waits longer than its orchestrator (Kubernetes gives 1 s by default) helps no one. */
export const DEFAULT_SERVER_PROBE_TIMEOUT_MS = 2000;
/** flags-server's default port (`SERVER_PORT`, `PORT`). */
const DEFAULT_PORT = '4242';
/** What a probe found: `ok` is the exit status (0 or 1), `line` the one line it prints. */
export type ServerProbeResult = ProbeResult;

export function isServerProbeName(name: string | undefined): name is ServerProbeName {
  return name !== undefined && Object.hasOwn(SERVER_PROBES, name);
}

/**
 * The base a probe asks when `--url` is not given: the server beside it, on the port and address
 * the environment gives the server (`SERVER_PORT`, `PORT`, `SERVER_HOST`). A wildcard address is
 * asked on the loopback of its family.
 */
export function defaultServerProbeUrl(env: Readonly<Record<string, string | undefined>>): string {
  const port = env.SERVER_PORT || env.PORT || DEFAULT_PORT;
  const host = env.SERVER_HOST || '0.0.0.0';
  const address =
    host === '0.0.0.0'
      ? '127.0.0.1'
      : host === '::'
        ? '[::1]'
        : host.includes(':')
          ? `[${host}]`
          : host;
  return `http://${address}:${port}`;
}

/**
 * `GET <base>/health` or `<base>/ready`: passes on 200 only, within `timeoutMs` (connecting and
 * the whole answer). Never throws.
 */
export function probeServer(
  name: ServerProbeName,
  base: string,
  timeoutMs: number,
): Promise<ServerProbeResult> {
  const { path, ...words } = SERVER_PROBES[name];
  return probeUrl(`${base.replace(/\/+$/, '')}${path}`, words, timeoutMs);
}
