import { readFile } from 'node:fs/promises';
import { type ProbeResult, probeUrl } from '@flags/config';

/**
 * The container probes of the `flags-proxy` command (`flags-proxy ready`, `flags-proxy health`):
 * an image without a shell or curl can still ask a running proxy whether it is ready or healthy,
 * as Unleash Edge's `unleash-edge ready|health` do.
 */
export const PROBES = {
  ready: { path: '/internal-backstage/ready', passed: 'ready', failed: 'not ready' },
  health: { path: '/internal-backstage/health', passed: 'healthy', failed: 'not healthy' },
} as const;

export type ProbeName = keyof typeof PROBES;

/** Unleash Edge's default (`unleash-edge health --edge-url`). */
export const DEFAULT_PROBE_URL = 'http://localhost:3063';
/** Short: a probe that waits longer than its orchestrator (Kubernetes gives 1 s by default) helps no one. */
export const DEFAULT_PROBE_TIMEOUT_MS = 2000;

export function isProbeName(name: string | undefined): name is ProbeName {
  return name !== undefined && Object.hasOwn(PROBES, name);
}

/**
 * `GET <base>/internal-backstage/<name>`: passes on 200 only, within `timeoutMs` (connecting and
 * the whole answer); over HTTPS, `ca` (PEM) is trusted besides the system's authorities. Never
 * throws.
 */
export async function probe(
  name: ProbeName,
  base: string,
  timeoutMs: number,
  ca?: string,
): Promise<ProbeResult> {
  const { path, ...words } = PROBES[name];
  return probeUrl(`${base.replace(/\/+$/, '')}${path}`, words, timeoutMs, ca);
}

/** The options the probes take besides Edge's (`-e/--edge-url`, `-c/--ca-certificate-file`). */
export const PROBE_VARIABLES = {
  names: new Set(['URL', 'TIMEOUT']),
  switches: new Set<string>(),
} as const;

/**
 * The base a probe asks when none is given: Edge's `http://localhost:3063`, or the port the
 * environment gives the proxy (`PORT`, `PROXY_PORT`), as the probe runs beside it.
 */
export function defaultProbeUrl(env: Readonly<Record<string, string | undefined>>): string {
  const port = env.PORT || env.PROXY_PORT;
  return port !== undefined && /^\d+$/.test(port) ? `http://localhost:${port}` : DEFAULT_PROBE_URL;
}

/**
 * The probe its settings ask for (`--url`, `-e/--edge-url` or `EDGE_URL`; `-c/--ca-certificate-file`
 * or `CA_CERTIFICATE_FILE`; `--timeout`), or why they are wrong.
 */
export async function probeCommand(
  name: ProbeName,
  settings: Readonly<Record<string, string>>,
  env: Readonly<Record<string, string | undefined>>,
): Promise<ProbeResult> {
  const base = settings.URL ?? settings.EDGE_URL ?? (env.EDGE_URL || defaultProbeUrl(env));
  if (!/^https?:\/\//i.test(base) || !URL.canParse(base))
    return { ok: false, line: `${name}: the URL to probe must be an http(s) URL, got "${base}"` };
  const timeout = settings.TIMEOUT ?? String(DEFAULT_PROBE_TIMEOUT_MS);
  if (!/^\d+$/.test(timeout) || Number(timeout) === 0)
    return {
      ok: false,
      line: `${name}: --timeout must be a whole number of ms > 0, got "${timeout}"`,
    };
  const caFile = settings.CA_CERTIFICATE_FILE ?? (env.CA_CERTIFICATE_FILE || undefined);
  let ca: string | undefined;
  if (caFile !== undefined) {
    try {
      ca = await readFile(caFile, 'utf8');
    } catch (error) {
      return {
        ok: false,
        line: `${name}: cannot read the CA certificate file: ${(error as Error).message}`,
      };
    }
  }
  return probe(name, base, Number(timeout), ca);
}

/** The Edge variables the probes read. */
export const PROBE_EDGE_VARIABLES: ReadonlySet<string> = new Set([
  'EDGE_URL',
  'CA_CERTIFICATE_FILE',
]);
