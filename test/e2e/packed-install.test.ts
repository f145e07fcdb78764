import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { freePort, type SpawnedEntry, waitUntilHealthy } from '../helpers/processes.js';

/**
 * flags as its users install it: scripts/pack-install.mjs (the container image's install step)
 * builds, packs every package and installs the tarballs without dev dependencies into an empty
 * folder; the commands are then started from that folder's node_modules/.bin, through the image's
 * entry point, and talk to each other over HTTP.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const ENTRYPOINT = join(ROOT, 'deploy/docker/entrypoint.sh');
const PACKAGES = ['schemas', 'config', 'engine', 'serving', 'proxy', 'server', 'cli'] as const;
const COMMANDS: Readonly<Record<string, string>> = {
  proxy: 'flags-proxy',
  server: 'flags-server',
  cli: 'flags',
};
const run = promisify(execFile);

const ADMIN_TOKEN = '*:*.packed-install-admin-secret-0123456789abcdef';
const CLIENT_TOKEN = 'default:development.packed-install-client-secret-0123456789';
const FRONTEND_TOKEN = 'default:development.packed-install-frontend-secret-012345';
const FLAG = 'packed-install-flag';

/** npm's environment without the `npm_*` variables of the `npm test` that may have started us. */
function npmEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name)));
}

interface PackEntry {
  name: string;
  version: string;
  files: { path: string }[];
}

interface Manifest {
  name: string;
  version: string;
  license?: string;
  engines?: Record<string, string>;
  repository?: { type: string; url: string; directory?: string };
  bin?: Record<string, string>;
  dependencies?: Record<string, string>;
}

const readJson = <T>(path: string): T => JSON.parse(readFileSync(path, 'utf8')) as T;
const rootManifest = readJson<Manifest & { engines: Record<string, string> }>(
  join(ROOT, 'package.json'),
);

/** A command of the install folder, started through the image's entry point. */
function startInstalled(folder: string, args: string[], env: Record<string, string>): SpawnedEntry {
  const child = spawn(ENTRYPOINT, args, {
    cwd: folder,
    env: { PATH: `${join(folder, 'node_modules/.bin')}:${process.env.PATH ?? ''}`, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const record = (chunk: unknown) => {
    output += String(chunk);
  };
  child.stdout.on('data', record);
  child.stderr.on('data', record);
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, output: () => output };
}

/** Sends SIGTERM and resolves to the exit code. */
async function terminate(entry: SpawnedEntry): Promise<number | null> {
  if (entry.child.exitCode !== null) return entry.child.exitCode;
  entry.child.kill('SIGTERM');
  return entry.exited;
}

describe('packed packages installed without dev dependencies', () => {
  const folder = mkdtempSync(join(tmpdir(), 'flags-packed-'));
  const installed = join(folder, 'install');
  let packed: PackEntry[];
  let installOutput = '';

  before(async () => {
    // Builds once, packs, installs; the npm cache and the registry give the dependencies.
    const install = await run(
      process.execPath,
      [join(ROOT, 'scripts/pack-install.mjs'), installed],
      {
        cwd: ROOT,
        env: npmEnv(),
        maxBuffer: 64 * 1024 * 1024,
      },
    );
    installOutput = `${install.stdout}${install.stderr}`;
    const { stdout } = await run('npm', ['pack', '--dry-run', '--json', '--workspaces'], {
      cwd: ROOT,
      env: npmEnv(),
      maxBuffer: 64 * 1024 * 1024,
    });
    packed = JSON.parse(stdout) as PackEntry[];
  });
  after(() => rmSync(folder, { recursive: true, force: true }));

  it('every package packs dist, its bin, README, LICENSE and package.json, and no sources or tests', () => {
    assert.deepEqual(
      packed.map((entry) => entry.name).sort(),
      PACKAGES.map((p) => `@flags/${p}`).sort(),
    );
    for (const name of PACKAGES) {
      const entry = packed.find((candidate) => candidate.name === `@flags/${name}`)!;
      const paths = entry.files.map((file) => file.path);
      for (const required of [
        'package.json',
        'README.md',
        'LICENSE',
        'dist/index.js',
        'dist/index.d.ts',
      ]) {
        assert.ok(
          paths.includes(required),
          `@flags/${name} packs ${required}: ${paths.join(', ')}`,
        );
      }
      const command = COMMANDS[name];
      if (command) assert.ok(paths.includes(`bin/${command}.js`), `@flags/${name} packs its bin`);
      const stray = paths.filter(
        (path) =>
          !/^(dist|bin)\//.test(path) && !['package.json', 'README.md', 'LICENSE'].includes(path),
      );
      assert.deepEqual(stray, [], `@flags/${name} packs only dist, bin and the top files`);
      const tests = paths.filter((path) =>
        /(^|\/)(test|tests|__tests__)\/|\.test\.[cm]?[jt]s/.test(path),
      );
      assert.deepEqual(tests, [], `@flags/${name} packs no tests`);
    }
  });

  it('every manifest has engines, license and repository, and workspace dependencies by exact version', () => {
    const versions = new Map(
      PACKAGES.map((name) => {
        const manifest = readJson<Manifest>(join(ROOT, 'packages', name, 'package.json'));
        return [manifest.name, manifest.version] as const;
      }),
    );
    for (const name of PACKAGES) {
      const manifest = readJson<Manifest>(join(ROOT, 'packages', name, 'package.json'));
      assert.equal(manifest.license, 'Apache-2.0', `${manifest.name} license`);
      assert.deepEqual(manifest.engines, rootManifest.engines, `${manifest.name} engines`);
      assert.equal(
        manifest.repository?.url,
        rootManifest.repository?.url,
        `${manifest.name} repository`,
      );
      assert.equal(manifest.repository?.directory, `packages/${name}`);
      for (const [dependency, range] of Object.entries(manifest.dependencies ?? {})) {
        if (!dependency.startsWith('@flags/')) continue;
        assert.equal(
          range,
          versions.get(dependency),
          `${manifest.name} needs ${dependency} at its version`,
        );
      }
    }
  });

  it('installs every package from its tarball, once, with the full license text', () => {
    const license = readFileSync(join(ROOT, 'LICENSE'), 'utf8');
    assert.match(license, /Apache License\s+Version 2\.0, January 2004/);
    assert.match(license, /END OF TERMS AND CONDITIONS/);
    const lock = readJson<{
      packages: Record<string, { version?: string; resolved?: string; dev?: boolean }>;
    }>(join(installed, 'package-lock.json'));
    for (const name of PACKAGES) {
      const where = `node_modules/@flags/${name}`;
      assert.match(
        lock.packages[where]?.resolved ?? '',
        /^file:packages\/flags-.*\.tgz$/,
        `${where} comes from a tarball`,
      );
      assert.equal(readFileSync(join(installed, where, 'LICENSE'), 'utf8'), license);
    }
    const nested = Object.keys(lock.packages).filter((path) =>
      /.+\/node_modules\/@flags\//.test(path),
    );
    assert.deepEqual(nested, [], 'no second copy of a workspace package');
    const dev = Object.entries(lock.packages).filter(([, entry]) => entry.dev);
    assert.deepEqual(dev, [], 'no dev dependency installed');
    for (const devOnly of ['typescript', 'tsx', '@biomejs/biome', 'esbuild', 'preact']) {
      assert.ok(
        !existsSync(join(installed, 'node_modules', devOnly)),
        `${devOnly} is not installed`,
      );
    }
    assert.deepEqual(
      readdirSync(join(installed, 'node_modules/.bin'))
        .filter((bin) => bin.startsWith('flags-'))
        .sort(),
      ['flags-proxy', 'flags-server'],
    );
  });

  it('installs every dependency at the version the workspace lockfile holds, without an engine warning', () => {
    type Lock = { packages: Record<string, { version?: string }> };
    const workspace = readJson<Lock>(join(ROOT, 'package-lock.json')).packages;
    const install = readJson<Lock>(join(installed, 'package-lock.json')).packages;
    const differing: string[] = [];
    let compared = 0;
    for (const where of Object.keys(install)) {
      if (where === '' || /^node_modules\/@flags\/[^/]+$/.test(where)) continue;
      // A package nested under a workspace package sits under its folder in the workspace.
      const inWorkspace = where.replace(/^node_modules\/@flags\/([^/]+)/, 'packages/$1');
      const version = readJson<Manifest>(join(installed, where, 'package.json')).version;
      compared += 1;
      if (workspace[inWorkspace]?.version !== version) {
        differing.push(`${where} ${version} (workspace: ${workspace[inWorkspace]?.version})`);
      }
    }
    assert.ok(compared > 50, `compared ${compared} installed packages`);
    assert.deepEqual(differing, [], 'installed versions differ from the tested ones');
    assert.doesNotMatch(
      installOutput,
      /EBADENGINE/,
      `no engine warning on Node.js ${process.version}`,
    );
  });

  it('flags-server (PGlite) and flags-proxy edge from the install serve an imported flag, probe healthy and exit 0 on SIGTERM', async () => {
    const serverPort = await freePort();
    const proxyPort = await freePort();
    const serverUrl = `http://127.0.0.1:${serverPort}`;
    const proxyUrl = `http://127.0.0.1:${proxyPort}`;
    const server = startInstalled(installed, ['flags-server'], {
      SERVER_PORT: String(serverPort),
      SERVER_HOST: '127.0.0.1',
      DATA_DIR: join(folder, 'data'),
      FLAGS_ADMIN_TOKENS: ADMIN_TOKEN,
      FLAGS_CLIENT_TOKENS: CLIENT_TOKEN,
      FLAGS_FRONTEND_TOKENS: FRONTEND_TOKEN,
      LOG_LEVEL: 'warn',
    });
    let proxy: SpawnedEntry | undefined;
    try {
      await waitUntilHealthy(`${serverUrl}/ready`, server.child, {
        timeoutMs: 60_000,
        output: server.output,
      });
      const imported = await fetch(`${serverUrl}/api/admin/features-batch/import`, {
        method: 'POST',
        headers: { authorization: ADMIN_TOKEN, 'content-type': 'application/json' },
        body: JSON.stringify({
          project: 'default',
          environment: 'development',
          data: {
            features: [{ name: FLAG, type: 'release', project: 'default' }],
            featureStrategies: [
              { name: 'default', featureName: FLAG, parameters: {}, constraints: [] },
            ],
            tagTypes: [],
            featureEnvironments: [
              { name: FLAG, featureName: FLAG, environment: 'development', enabled: true },
            ],
          },
        }),
      });
      assert.ok(imported.ok, `import: ${imported.status} ${await imported.text()}`);

      // No arguments: the image's default command, `flags-proxy edge`, with Edge's variables.
      proxy = startInstalled(installed, [], {
        PORT: String(proxyPort),
        UPSTREAM_URL: serverUrl,
        TOKENS: CLIENT_TOKEN,
        LOG_LEVEL: 'warn',
      });
      const proxyOutput = proxy.output;
      await waitUntilHealthy(`${proxyUrl}/internal-backstage/ready`, proxy.child, {
        output: proxyOutput,
      });

      // The proxy's own probe (the image's health check runs it where the proxy runs), beside it (its PORT).
      const health = await run(ENTRYPOINT, ['health'], {
        env: {
          PATH: `${join(installed, 'node_modules/.bin')}:${process.env.PATH ?? ''}`,
          PORT: String(proxyPort),
        },
      });
      assert.match(health.stdout, /healthy/);

      const features = await fetch(`${proxyUrl}/api/client/features`, {
        headers: { authorization: CLIENT_TOKEN },
      });
      assert.equal(features.status, 200, proxyOutput());
      const body = (await features.json()) as { features: { name: string; enabled: boolean }[] };
      assert.deepEqual(
        body.features.map((feature) => [feature.name, feature.enabled]),
        [[FLAG, true]],
      );
      const frontend = await fetch(`${proxyUrl}/api/frontend?userId=alice`, {
        headers: { authorization: FRONTEND_TOKEN },
      });
      assert.equal(frontend.status, 200, proxyOutput());
      const toggles = ((await frontend.json()) as { toggles: { name: string; enabled: boolean }[] })
        .toggles;
      assert.deepEqual(
        toggles.map((toggle) => [toggle.name, toggle.enabled]),
        [[FLAG, true]],
      );

      const proxyCode = await terminate(proxy);
      assert.equal(proxyCode, 0, `flags-proxy exits 0 on SIGTERM:\n${proxyOutput()}`);
      const serverCode = await terminate(server);
      assert.equal(serverCode, 0, `flags-server exits 0 on SIGTERM:\n${server.output()}`);
    } finally {
      if (proxy) await terminate(proxy);
      await terminate(server);
    }
  });
});
