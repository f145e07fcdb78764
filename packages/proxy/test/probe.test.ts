import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../../test/helpers/processes.js';
import { defaultProbeUrl, probe, probeCommand } from '../src/probe.js';

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

  it('refuses settings it cannot use', async () => {
    const cases: [Record<string, string>, RegExp][] = [
      [
        { URL: 'localhost:3000' },
        /^ready: the URL to probe must be an http\(s\) URL, got "localhost:3000"$/,
      ],
      [
        { URL: `${base}/up`, TIMEOUT: 'soon' },
        /^ready: --timeout must be a whole number of ms > 0, got "soon"$/,
      ],
      [{ TIMEOUT: '0' }, /^ready: --timeout must be/],
      [
        { URL: `${base}/up`, CA_CERTIFICATE_FILE: '/nonexistent/ca.pem' },
        /^ready: cannot read the CA certificate file: ENOENT/,
      ],
    ];
    for (const [settings, expected] of cases) {
      const result = await probeCommand('ready', settings, {});
      assert.equal(result.ok, false, JSON.stringify(settings));
      assert.match(result.line, expected);
    }
    assert.equal(
      (await probeCommand('ready', { URL: `${base}/up`, TIMEOUT: '2000' }, {})).ok,
      true,
    );
  });

  it('asks EDGE_URL, else Edge’s localhost:3063 or the port the environment gives the proxy', async () => {
    assert.equal((await probeCommand('ready', {}, { EDGE_URL: `${base}/up` })).ok, true);
    assert.equal(
      (await probeCommand('ready', { EDGE_URL: `${base}/up` }, { EDGE_URL: 'http://127.0.0.1:1' }))
        .ok,
      true,
    );
    assert.equal(defaultProbeUrl({}), 'http://localhost:3063');
    assert.equal(defaultProbeUrl({ PORT: '4000' }), 'http://localhost:4000');
    assert.equal(defaultProbeUrl({ PROXY_PORT: '4001' }), 'http://localhost:4001');
  });

  it('trusts the CA file over HTTPS (-c, --ca-certificate-file), and fails without it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'probe-tls-'));
    const run = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
    run(
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=probe-ca',
      '-keyout',
      'ca.key',
      '-out',
      'ca.pem',
    );
    run(
      'req',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-subj',
      '/CN=localhost',
      '-keyout',
      'server.key',
      '-out',
      'server.csr',
    );
    writeFileSync(join(dir, 'san.ext'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\n');
    run(
      'x509',
      '-req',
      '-in',
      'server.csr',
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-days',
      '1',
      '-extfile',
      'san.ext',
      '-out',
      'server.pem',
    );
    const secure = createHttpsServer(
      { key: readFileSync(join(dir, 'server.key')), cert: readFileSync(join(dir, 'server.pem')) },
      (_request, response) => response.writeHead(200).end('{"status":"OK"}'),
    );
    await new Promise<void>((resolve) => secure.listen(0, '127.0.0.1', resolve));
    const url = `https://127.0.0.1:${(secure.address() as AddressInfo).port}`;
    try {
      const trusted = await probeCommand(
        'health',
        { EDGE_URL: url, CA_CERTIFICATE_FILE: join(dir, 'ca.pem') },
        {},
      );
      assert.deepEqual(trusted, {
        ok: true,
        line: `healthy: 200 {"status":"OK"} from ${url}/internal-backstage/health`,
      });
      const untrusted = await probeCommand('health', { EDGE_URL: url }, {});
      assert.equal(untrusted.ok, false);
      assert.match(untrusted.line, /^not healthy: cannot reach it \(.*certificate/);
      const byCommand = await command(['health', '-e', url, '-c', join(dir, 'ca.pem')]);
      assert.equal(byCommand.code, 0, byCommand.stderr);
    } finally {
      secure.closeAllConnections();
      secure.close();
      rmSync(dir, { recursive: true, force: true });
    }
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
    // A command line it does not take: exit 2, as Edge's, naming what it does not know.
    const unknown = await command(['readiness']);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /^flags-proxy: unknown command "readiness"\n/);
    const option = await command(['ready', '--edge', `${base}/up`]);
    assert.equal(option.code, 2);
    assert.match(option.stderr, /unknown option --edge for ready/);
  });
});
