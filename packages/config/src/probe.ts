import http from 'node:http';
import https from 'node:https';

/** What a probe found: `ok` is the exit status (0 or 1), `line` the one line it prints. */
export interface ProbeResult {
  readonly ok: boolean;
  readonly line: string;
}

/** The words a probe's line starts with when it passes and when it fails (`ready`, `not ready`). */
export interface ProbeWords {
  readonly passed: string;
  readonly failed: string;
}

/** How much of an answer's body the one line shows. */
const SHOWN_BODY_CHARACTERS = 200;

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
 * The container probe of both commands (`flags-proxy health`, `flags-server ready`, …): `GET url`
 * passes on 200 only, within `timeoutMs` (connecting and the whole answer); over HTTPS, `ca`
 * (PEM) is trusted besides the system's authorities. Never throws. Plain `node:http`: a probe
 * runs every few seconds in a container and should load nothing more.
 */
export function probeUrl(
  url: string,
  { passed, failed }: ProbeWords,
  timeoutMs: number,
  ca?: string,
): Promise<ProbeResult> {
  const client = url.startsWith('https:') ? https : http;
  return new Promise((resolve) => {
    let settled = false;
    const settle = (result: ProbeResult) => {
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
    const request = client.get(
      url,
      { agent: false, ...(ca === undefined ? {} : { ca }) },
      (answer) => {
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
      },
    );
    request.on('error', cannotReach);
  });
}
