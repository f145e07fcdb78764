// `flags-server health` and `flags-server ready`: the container image's health check of a
// container running flags-server, which has no curl.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../../test/helpers/processes.js';
import { defaultServerProbeUrl, probeServer } from '../src/probe.js';

/**
 * A stand-in for a running flags-server's probes: `/up/…` answers as a loaded server, `/loading/…`
 * as one that has not loaded from its database yet, `/silent/…` never answers.
 */
function probes(): Server {
  return createServer((request, response) => {
    const [, mode, ...rest] = (request.url ?? '').split('/');
    const path = `/${rest.join('/')}`;
    if (mode === 'silent') return;
    const answers: Record<string, Record<string, [number, string]>> = {
      up: {
        '/health': [200, '{"health":"GOOD"}'],
        '/ready': [200, '{\n  "status": "READY",\n  "database": "reachable"\n}'],
      },
      loading: {
        '/health': [200, '{"health":"GOOD"}'],
        '/ready': [503, 'x'.repeat(5000)],
      },
    };
    const [status, body] = answers[mode ?? '']?.[path] ?? [404, 'Not Found'];
    response.writeHead(status, { 'content-type': 'application/json' }).end(body);
  });
}

const MAIN = fileURLToPath(new URL('../src/main.ts', import.meta.url));

/** `flags-server <args>` as its own process, with only `env` besides PATH. */
function command(
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--conditions=source', '--import', 'tsx', MAIN, ...args],
      { env: { PATH: process.env.PATH ?? '', ...env } },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code) : 0, stdout, stderr }),
    );
  });
}

describe('flags-server health|ready', () => {
  const server = probes();
  let base = '';
  let port = 0;
  before(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    base = `http://127.0.0.1:${port}`;
  });
  after(() => {
    server.closeAllConnections();
    server.close();
  });

  it('passes on 200, printing the answer on one line', async () => {
    assert.deepEqual(await probeServer('health', `${base}/up`, 2000), {
      ok: true,
      line: `healthy: 200 {"health":"GOOD"} from ${base}/up/health`,
    });
    assert.deepEqual(await probeServer('ready', `${base}/up/`, 2000), {
      ok: true,
      line: `ready: 200 { "status": "READY", "database": "reachable" } from ${base}/up/ready`,
    });
  });

  it('fails on any other status (not loaded yet: 503), the body on one line and cut short', async () => {
    assert.deepEqual(await probeServer('ready', `${base}/loading`, 2000), {
      ok: false,
      line: `not ready: 503 ${'x'.repeat(200)}… from ${base}/loading/ready`,
    });
    assert.equal((await probeServer('health', `${base}/loading`, 2000)).ok, true);
    assert.equal((await probeServer('health', `${base}/elsewhere`, 2000)).ok, false, '404');
  });

  it('fails when nothing listens, or nothing answers within the timeout', async () => {
    const closed = `http://127.0.0.1:${await freePort()}`;
    const refused = await probeServer('health', closed, 2000);
    assert.equal(refused.ok, false);
    assert.match(
      refused.line,
      new RegExp(`^not healthy: cannot reach it \\(.*ECONNREFUSED.*\\) from ${closed}/health$`),
    );
    assert.deepEqual(await probeServer('ready', `${base}/silent`, 100), {
      ok: false,
      line: `not ready: no answer within 100 ms from ${base}/silent/ready`,
    });
  });

  it('asks the server beside it: the port and address its environment gives it', () => {
    assert.equal(defaultServerProbeUrl({}), 'http://127.0.0.1:4242');
    assert.equal(defaultServerProbeUrl({ PORT: '8080' }), 'http://127.0.0.1:8080');
    assert.equal(
      defaultServerProbeUrl({ PORT: '8080', SERVER_PORT: '8081' }),
      'http://127.0.0.1:8081',
    );
    assert.equal(defaultServerProbeUrl({ SERVER_HOST: '::' }), 'http://[::1]:4242');
    assert.equal(defaultServerProbeUrl({ SERVER_HOST: '10.0.0.7' }), 'http://10.0.0.7:4242');
    assert.equal(defaultServerProbeUrl({ SERVER_HOST: 'fd00::7' }), 'http://[fd00::7]:4242');
  });

  it('as a command: exit 0 and the line on stdout when it passes, exit 1 and stderr when not', async () => {
    const passed = await command(['ready', '--url', `${base}/up`]);
    assert.equal(passed.code, 0, passed.stderr);
    assert.equal(
      passed.stdout,
      `ready: 200 { "status": "READY", "database": "reachable" } from ${base}/up/ready\n`,
    );
    const failed = await command(['ready', `--url=${base}/loading`, '--timeout', '3000']);
    assert.equal(failed.code, 1);
    assert.equal(failed.stdout, '');
    assert.match(failed.stderr, /^not ready: 503 x+… from .*\/loading\/ready\n$/);
  });

  it('as a command without --url: asks 127.0.0.1 on the port of SERVER_PORT or PORT', async () => {
    // The stand-in answers 404 at /health (its answers sit under /up): reached, and refused.
    const reached = await command(['health'], { PORT: String(port) });
    assert.equal(reached.code, 1);
    assert.equal(reached.stderr, `not healthy: 404 Not Found from ${base}/health\n`);
    const elsewhere = await command(['health'], {
      PORT: String(port),
      SERVER_PORT: String(await freePort()),
    });
    assert.equal(elsewhere.code, 1);
    assert.match(elsewhere.stderr, /cannot reach it/);
  });

  const refused: [readonly string[], RegExp][] = [
    [['health', '--url', 'localhost:4242'], /--url must be an http\(s\) URL, got "localhost:4242"/],
    [['ready', '--timeout', '0'], /--timeout must be a whole number of ms > 0, got "0"/],
    [['ready', '--timeout=soon'], /--timeout must be a whole number of ms > 0, got "soon"/],
    [['ready', '--url'], /--url needs a value/],
    [
      ['health', '--tiemout', '5'],
      /unknown option --tiemout for health \(did you mean --timeout\?\)/,
    ],
    [['health', 'now'], /unexpected argument "now"/],
    [['helth'], /unexpected argument "helth" \(did you mean health\?\)/],
  ];
  for (const [args, message] of refused)
    it(`refuses \`flags-server ${args.join(' ')}\` with exit 2, asking nothing`, async () => {
      const result = await command(args);
      assert.equal(result.code, 2, result.stderr);
      assert.match(result.stderr, message);
      assert.match(
        result.stderr,
        /\nRun `flags-server --help` for the variables and examples\.\n$/,
      );
    });
});
