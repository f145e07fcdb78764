import { parseArgs } from 'node:util';

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

export const DEFAULT_PROBE_URL = 'http://127.0.0.1:3000';
/** Short: a probe that waits longer than its orchestrator (Kubernetes gives 1 s by default) helps no one. */
export const DEFAULT_PROBE_TIMEOUT_MS = 2000;
/** How much of an answer's body the one line shows. */
const SHOWN_BODY_CHARACTERS = 200;

/** What a probe found: `ok` is the exit status (0 or 1), `line` the one line it prints. */
export interface ProbeResult {
  readonly ok: boolean;
  readonly line: string;
}

export function isProbeName(name: string | undefined): name is ProbeName {
  return name !== undefined && Object.hasOwn(PROBES, name);
}

/** The body as one short line. */
function oneLine(body: string): string {
  const flat = body.replace(/\s+/g, ' ').trim();
  return flat.length > SHOWN_BODY_CHARACTERS ? `${flat.slice(0, SHOWN_BODY_CHARACTERS)}…` : flat;
}

/** Why a request got no answer, in a few words (`connect ECONNREFUSED 127.0.0.1:1`). */
function reason(error: unknown): string {
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  return cause instanceof Error ? cause.message : String(cause);
}

/**
 * `GET <base>/internal-backstage/<name>`: passes on 200 only, within `timeoutMs` (connecting and
 * the whole answer). Never throws.
 */
export async function probe(
  name: ProbeName,
  base: string,
  timeoutMs: number,
): Promise<ProbeResult> {
  const { path, passed, failed } = PROBES[name];
  const url = `${base.replace(/\/+$/, '')}${path}`;
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    const answer = await fetch(url, { signal, redirect: 'manual' });
    const body = oneLine(await answer.text());
    const ok = answer.status === 200;
    return { ok, line: `${ok ? passed : failed}: ${answer.status} ${body} from ${url}` };
  } catch (error) {
    const why = signal.aborted
      ? `no answer within ${timeoutMs} ms`
      : `cannot reach it (${reason(error)})`;
    return { ok: false, line: `${failed}: ${why} from ${url}` };
  }
}

/** `<name> [--url <base>] [--timeout <ms>]`: the probe the arguments ask for, or why they are wrong. */
export async function probeCommand(name: ProbeName, args: readonly string[]): Promise<ProbeResult> {
  let values: { url?: string; timeout?: string };
  try {
    ({ values } = parseArgs({
      args: [...args],
      options: { url: { type: 'string' }, timeout: { type: 'string' } },
      strict: true,
    }));
  } catch (error) {
    return {
      ok: false,
      line: `${name}: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
  const base = values.url ?? DEFAULT_PROBE_URL;
  if (!/^https?:\/\//i.test(base) || !URL.canParse(base))
    return { ok: false, line: `${name}: --url must be an http(s) URL, got "${base}"` };
  const timeout = values.timeout ?? String(DEFAULT_PROBE_TIMEOUT_MS);
  if (!/^\d+$/.test(timeout) || Number(timeout) === 0)
    return {
      ok: false,
      line: `${name}: --timeout must be a whole number of ms > 0, got "${timeout}"`,
    };
  return probe(name, base, Number(timeout));
}
