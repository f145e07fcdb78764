import http from 'node:http';
import https from 'node:https';

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
/** How much of an answer's body the one line shows. */
const SHOWN_BODY_CHARACTERS = 200;

/** What a probe found: `ok` is the exit status (0 or 1), `line` the one line it prints. */
export interface ServerProbeResult {
  readonly ok: boolean;
  readonly line: string;
}

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

/** The body as one short line. */
function oneLine(body: string): string {
  const flat = body.replace(/\s+/g, ' ').trim();
  return flat.length > SHOWN_BODY_CHARACTERS ? `${flat.slice(0, SHOWN_BODY_CHARACTERS)}…` : flat;
}

/** Why a request got no answer, in a few words (`connect ECONNREFUSED 127.0.0.1:1`). */
function reason(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
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
  const { path, passed, failed } = SERVER_PROBES[name];
  const url = `${base.replace(/\/+$/, '')}${path}`;
  const client = url.startsWith('https:') ? https : http;
  return new Promise((resolve) => {
    let settled = false;
    const settle = (result: ServerProbeResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request.destroy();
      resolve(result);
    };
    const timer = setTimeout(
      () => settle({ ok: false, line: `${failed}: no answer within ${timeoutMs} ms from ${url}` }),
      timeoutMs,
    );
    const cannotReach = (error: unknown) =>
      settle({ ok: false, line: `${failed}: cannot reach it (${reason(error)}) from ${url}` });
    const request = client.get(url, { agent: false }, (answer) => {
      let body = '';
      answer.setEncoding('utf8');
      answer.on('data', (chunk: string) => {
        if (body.length < SHOWN_BODY_CHARACTERS * 4) body += chunk;
      });
      answer.on('end', () => {
        const ok = answer.statusCode === 200;
        settle({
          ok,
          line: `${ok ? passed : failed}: ${answer.statusCode} ${oneLine(body)} from ${url}`,
        });
      });
      answer.on('error', cannotReach);
    });
    request.on('error', cannotReach);
  });
}
