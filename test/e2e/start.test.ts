import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, describe, it } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { createProxy } from '@flags/proxy';
import { buildApp, loadConfig, openDatabase } from '@flags/server';
import { pino } from 'pino';
import { waitUntilHealthy } from '../helpers/processes.js';

const root = new URL('../../', import.meta.url);
const execute = promisify(execFile);
const dataDir = mkdtempSync(join(tmpdir(), 'flags-start-'));
after(() => rmSync(dataDir, { recursive: true, force: true }));

interface Started {
  child: ChildProcess;
  /** What it printed up to its banner. */
  output: string;
  /** What it has printed so far (for failure messages). */
  printed: () => string;
  proxyUrl: string;
  clientKey: string;
}

/**
 * Runs the `npm start` entry point on free ports and waits for its banner: in the repository with
 * `DATA_DIR` set to a temporary directory, or, given `cwd`, in that directory without `DATA_DIR`.
 */
async function startDemo(cwd?: string): Promise<Started> {
  const { DATA_DIR: _unset, ...inherited } = process.env;
  const child = spawn(
    process.execPath,
    [
      '--conditions=source',
      '--import',
      pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href,
      fileURLToPath(new URL('scripts/start.ts', root)),
    ],
    {
      cwd: cwd ?? root,
      env: {
        ...inherited,
        PORT: '0',
        SERVER_PORT: '0',
        LOG_LEVEL: 'warn',
        ...(cwd ? {} : { DATA_DIR: dataDir }),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout!.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr!.on('data', (chunk) => {
    output += chunk;
  });
  const deadline = Date.now() + 60_000;
  while (!output.includes('Ctrl-C stops both')) {
    if (child.exitCode !== null) throw new Error(`npm start exited early:\n${output}`);
    if (Date.now() > deadline) throw new Error(`no banner within 60 s:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const proxy = /flags-proxy\s+(\S+)\/proxy\s+client key: (\S+)/.exec(output);
  assert.ok(proxy, `banner names the proxy URL and key:\n${output}`);
  return { child, output, printed: () => output, proxyUrl: proxy[1]!, clientKey: proxy[2]! };
}

/** Sends Ctrl-C and checks that the process exits with 0; the message says how it ended and what it printed. */
async function assertStops(started: Started): Promise<void> {
  const { child } = started;
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => {
    child.once('exit', (exitCode, exitSignal) => resolve([exitCode, exitSignal]));
    child.kill('SIGINT');
  });
  assert.equal(
    code,
    0,
    `Ctrl-C stops both cleanly; it ended with code ${code}, signal ${signal}, having printed:\n${started.printed()}`,
  );
}

async function enabledFlags(started: Started, query: string): Promise<string[]> {
  const response = await fetch(`${started.proxyUrl}/proxy?${query}`, {
    headers: { authorization: started.clientKey },
  });
  assert.equal(response.status, 200);
  const body = (await response.json()) as { toggles: { name: string }[] };
  return body.toggles.map((toggle) => toggle.name).sort();
}

/**
 * The `curl` commands of the README and the getting-started page, as a reader runs them: each is
 * one the banner prints (the page's port 3000 being the demo's default), and each answers flags.
 */
async function runDocumentedCurls(started: Started): Promise<void> {
  const printed = started.output.split('\n').map((line) => line.trim());
  for (const page of ['README.md', 'docs/getting-started.md']) {
    const curls = readFileSync(new URL(page, root), 'utf8')
      .split('\n')
      .filter((line) => line.startsWith('curl -g '))
      .map((line) => line.replaceAll('http://localhost:3000', started.proxyUrl));
    assert.ok(curls.length > 0, `${page} shows a curl`);
    for (const curl of curls) {
      assert.ok(printed.includes(curl), `npm start prints ${page}'s ${curl}:\n${started.output}`);
      const { stdout } = await execute('sh', ['-c', curl]);
      const names = (JSON.parse(stdout) as { toggles: { name: string }[] }).toggles.map(
        (toggle) => toggle.name,
      );
      assert.ok(names.includes('beta-banner'), `${curl} answers the demo flags: ${stdout}`);
    }
  }
}

/** A pino logger whose lines land in `lines`. */
function capturingLogger() {
  const lines: { level: number; msg: string }[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, logger: pino({ level: 'warn' }, sink) };
}

/** The demo's tokens and key, as `npm start` uses them by default. */
const DEMO = {
  admin: '*:*.demo-admin-token',
  client: 'default:development.demo-client-token',
  frontend: 'default:development.demo-frontend-token',
  clientKey: 'demo-client-key',
};

describe('npm start', () => {
  it('serves the demo flags through the proxy, and reuses its data on the next start', async () => {
    const first = await startDemo();
    try {
      // The first screen (issue 47): the banner first, no warning about the demo's own keys, one
      // line saying they are public.
      assert.match(first.output.split('\n')[0]!, /^flags is running/, first.output);
      assert.doesNotMatch(first.output, /shorter than|guess|"level":40|WARN/, first.output);
      assert.equal(
        first.output.split('\n').filter((line) => /public/.test(line)).length,
        1,
        first.output,
      );
      assert.match(first.output, /demo flags imported/);
      assert.match(
        first.output,
        /curl -g -H 'Authorization: \S+' 'http:\/\/localhost:\d+\/proxy\?/,
      );
      await waitUntilHealthy(`${first.proxyUrl}/proxy/health`, first.child);
      const alice = await enabledFlags(
        first,
        'userId=alice&properties[plan]=premium&appVersion=2.4.0&email=ops@example.com',
      );
      for (const name of ['beta-banner', 'dark-mode', 'mobile-offline-sync', 'premium-reports']) {
        assert.ok(alice.includes(name), `${name} is on for alice: ${alice}`);
      }
      assert.ok(!alice.includes('maintenance-mode'), 'maintenance-mode is switched off');
      // The Unleash Edge form: the demo's frontend token on /api/frontend, validated upstream.
      const token = /frontend token: (\S+)/.exec(first.output)?.[1];
      assert.ok(token, `banner names the frontend token:\n${first.output}`);
      const edge = await fetch(`${first.proxyUrl}/api/frontend?userId=alice`, {
        headers: { authorization: token },
      });
      assert.equal(edge.status, 200);
      const edgeNames = ((await edge.json()) as { toggles: { name: string }[] }).toggles.map(
        (toggle) => toggle.name,
      );
      assert.ok(edgeNames.includes('dark-mode'), `${edgeNames}`);
      await runDocumentedCurls(first);
      const anonymous = await enabledFlags(first, 'userId=zed&appVersion=1.0.0');
      assert.ok(!anonymous.includes('beta-banner'));
      assert.ok(!anonymous.includes('premium-reports'));
      assert.ok(!anonymous.includes('mobile-offline-sync'));
    } finally {
      await assertStops(first);
    }

    const second = await startDemo();
    try {
      assert.match(second.output, /data reused from/);
      await waitUntilHealthy(`${second.proxyUrl}/proxy/health`, second.child);
      assert.ok((await enabledFlags(second, 'userId=alice')).includes('beta-banner'));
    } finally {
      await assertStops(second);
    }
  });

  it('warns about the same short keys outside the demo, in a server and a proxy', async () => {
    const server = capturingLogger();
    const config = loadConfig(
      {},
      {
        dataDir: undefined,
        adminTokens: [DEMO.admin],
        clientTokens: [DEMO.client],
        frontendTokens: [DEMO.frontend],
      },
    );
    const db = await openDatabase(config);
    await (await buildApp(config, { db, logger: server.logger })).close();
    await db.close();
    assert.equal(
      server.lines.filter((line) => line.level === 40 && /shorter than 32/.test(line.msg)).length,
      3,
      JSON.stringify(server.lines),
    );

    const proxyLog = capturingLogger();
    const proxy = await createProxy({
      flagsUrl: 'http://127.0.0.1:9/api',
      flagsApiToken: DEMO.client,
      clientKeys: [DEMO.clientKey],
      logger: proxyLog.logger,
    });
    await proxy.app.close();
    const warnings = proxyLog.lines.filter((line) => line.level === 40).map((line) => line.msg);
    assert.ok(
      warnings.some((msg) => /client keys .* shorter than 32/.test(msg)),
      warnings.join('\n'),
    );
  });

  it('keeps its data in ./data/demo and says its tokens are demo-only; flags-server on ./data does not know them', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'flags-start-cwd-'));
    try {
      const demo = await startDemo(cwd);
      try {
        assert.match(demo.output, /demo only/);
        assert.ok(existsSync(join(cwd, 'data', 'demo', 'PG_VERSION')), 'PGlite in ./data/demo');
      } finally {
        await assertStops(demo);
      }
      // What `npx flags-server` does in the same directory: PGlite in ./data.
      const config = loadConfig({ DATA_DIR: join(cwd, 'data'), LOG_LEVEL: 'silent' });
      const db = await openDatabase(config);
      const server = await buildApp(config, { db, logger: false });
      try {
        for (const token of [
          '*:*.demo-admin-token',
          'default:development.demo-client-token',
          'default:development.demo-frontend-token',
        ]) {
          const url = token.startsWith('*:*') ? '/api/admin/projects' : '/api/client/features';
          const answer = await server.inject({ url, headers: { authorization: token } });
          assert.equal(answer.statusCode, 401, `${token} is unknown to flags-server on ./data`);
        }
      } finally {
        await server.close();
        await db.close();
      }
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });
});
