import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../../test/helpers/processes.js';
import { probe, probeCommand } from '../src/probe.js';

/**
 * A stand-in for a running proxy's backstage: `/up/…` answers 200 as the proxy does, `/down/…`
 * 503, `/silent/…` never answers.
 */
function backstage(): Server {
  return createServer((request, response) => {
    const [, mode, ...rest] = (request.url ?? '').split('/');
    const path = `/${rest.join('/')}`;
    if (mode === 'silent') return;
    const answers: Record<string, Record<string, [number, string]>> = {
      up: {
        '/internal-backstage/ready': [200, '{"status":"READY"}'],
        '/internal-backstage/health': [200, '{"status":"OK"}'],
      },
      down: {
        '/internal-backstage/ready': [
          503,
          '{\n  "status": "NOTREADY",\n  "error": "development is not hydrated yet"\n}',
        ],
        '/internal-backstage/health': [500, 'x'.repeat(5000)],
      },
    };
    const [status, body] = answers[mode ?? '']?.[path] ?? [404, 'Not Found'];
    response.writeHead(status, { 'content-type': 'application/json' }).end(body);
  });
}

const MAIN = fileURLToPath(new URL('../src/main.ts', import.meta.url));

/** `flags-proxy <args>` as its own process: exit status and what it printed where. */
function command(
  args: readonly string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--conditions=source', '--import', 'tsx', MAIN, ...args],
      { env: { PATH: process.env.PATH ?? '' } },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code) : 0, stdout, stderr }),
    );
  });
}

describe('flags-proxy ready|health', () => {
  const server = backstage();
  let base = '';
  before(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => {
    server.closeAllConnections();
    server.close();
  });

  it('passes on 200, printing the answer on one line', async () => {
    assert.deepEqual(await probe('ready', `${base}/up`, 2000), {
      ok: true,
      line: `ready: 200 {"status":"READY"} from ${base}/up/internal-backstage/ready`,
    });
    assert.deepEqual(await probe('health', `${base}/up/`, 2000), {
      ok: true,
      line: `healthy: 200 {"status":"OK"} from ${base}/up/internal-backstage/health`,
    });
  });

  it('fails on any other status, the body on one line and cut short', async () => {
    assert.deepEqual(await probe('ready', `${base}/down`, 2000), {
      ok: false,
      line: `not ready: 503 { "status": "NOTREADY", "error": "development is not hydrated yet" } from ${base}/down/internal-backstage/ready`,
    });
    const health = await probe('health', `${base}/down`, 2000);
    assert.equal(health.ok, false);
    assert.equal(
      health.line,
      `not healthy: 500 ${'x'.repeat(200)}… from ${base}/down/internal-backstage/health`,
    );
    assert.equal((await probe('ready', `${base}/elsewhere`, 2000)).ok, false, '404');
  });

  it('fails when nothing listens, or nothing answers within the timeout', async () => {
    const closed = `http://127.0.0.1:${await freePort()}`;
    const refused = await probe('ready', closed, 2000);
    assert.equal(refused.ok, false);
    assert.match(
      refused.line,
      new RegExp(
        `^not ready: cannot reach it \\(.*ECONNREFUSED.*\\) from ${closed}/internal-backstage/ready$`,
      ),
    );
    assert.deepEqual(await probe('health', `${base}/silent`, 100), {
      ok: false,
      line: `not healthy: no answer within 100 ms from ${base}/silent/internal-backstage/health`,
    });
  });

  it('refuses arguments it does not know or cannot use', async () => {
    const cases: [readonly string[], RegExp][] = [
      [
        ['--url', 'localhost:3000'],
        /^ready: --url must be an http\(s\) URL, got "localhost:3000"$/,
      ],
      [
        ['--url', `${base}/up`, '--timeout', 'soon'],
        /^ready: --timeout must be a whole number of ms > 0, got "soon"$/,
      ],
      [['--timeout', '0'], /^ready: --timeout must be/],
      [['--edge'], /^ready: Unknown option '--edge'/],
      [['extra'], /^ready: Unexpected argument 'extra'/],
    ];
    for (const [args, expected] of cases) {
      const result = await probeCommand('ready', args);
      assert.equal(result.ok, false, args.join(' '));
      assert.match(result.line, expected);
    }
    assert.equal(
      (await probeCommand('ready', ['--url', `${base}/up`, '--timeout', '2000'])).ok,
      true,
    );
  });

  it('runs as the command: exit status 0 or 1 and one line, on stdout or stderr', async () => {
    const ready = await command(['ready', '--url', `${base}/up`]);
    assert.deepEqual(ready, {
      code: 0,
      stdout: `ready: 200 {"status":"READY"} from ${base}/up/internal-backstage/ready\n`,
      stderr: '',
    });
    const health = await command(['health', `--url=${base}/down`, '--timeout', '2000']);
    assert.equal(health.code, 1);
    assert.equal(health.stdout, '');
    assert.match(health.stderr, /^not healthy: 500 x+… from .*\n$/);
    const unknown = await command(['readiness']);
    assert.equal(unknown.code, 1);
    assert.equal(
      unknown.stderr,
      'flags-proxy: unknown command "readiness" (see flags-proxy --help)\n',
    );
  });
});
