// The container image (Dockerfile), built and run with Podman: flags-server and flags-proxy from
// their containers, as the `node` user, healthy by the image's own HEALTHCHECK, and exit 0 on
// `podman stop`. It builds the image (about 6 minutes), so it is not one of the `*.test.ts` files
// `npm test` runs: CI (.ci/run) runs it once, and so does
//   node --conditions=source --import tsx --test test/image/image.podman.ts
// It needs root, podman, runc and debootstrap (apt-get install -y podman runc debootstrap), and
// fails, naming what is missing, without them.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { freePort } from '../helpers/processes.js';
import { baseImage, missingTools, podman, podmanOk, ROOT } from './podman.js';

const ADMIN_TOKEN = '*:*.image-test-admin-secret-0123456789abcdef';
const CLIENT_TOKEN = 'default:development.image-test-client-secret-0123456789';
const FLAG = 'image-test-flag';
const NODE_UID = '1000';
/** The image this run builds; removed at the end (the base image is kept for the next run). */
const IMAGE = `localhost/flags-image-test:${process.pid}`;
const SERVER = `flags-image-test-server-${process.pid}`;
const PROXY = `flags-image-test-proxy-${process.pid}`;
const BUILD_TIMEOUT_MS = 30 * 60_000;

const log = (line: string) => process.stderr.write(`${line}\n`);

/** `podman run -d` of the image on the machine's network (ports picked free), as its USER. */
async function start(name: string, env: Record<string, string>, args: string[]): Promise<void> {
  await podmanOk([
    'run',
    '--detach',
    '--name',
    name,
    '--network',
    'host',
    ...Object.entries(env).flatMap(([key, value]) => ['--env', `${key}=${value}`]),
    IMAGE,
    ...args,
  ]);
}

async function logs(name: string): Promise<string> {
  const result = await podman(['logs', name]);
  return `${result.stdout}${result.stderr}`;
}

/** The container's state, as `podman inspect` gives it. */
async function state(name: string): Promise<{
  Status: string;
  ExitCode: number;
  Pid: number;
  Health?: { Status: string };
  Healthcheck?: { Status: string };
}> {
  return JSON.parse(await podmanOk(['inspect', '--format', '{{json .State}}', name]));
}

/** Polls `url` until it answers 200, failing with the container's log if its time runs out. */
async function waitFor(url: string, name: string, headers: Record<string, string> = {}) {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const status = await fetch(url, { headers }).then(
      (answer) => answer.status,
      () => 0,
    );
    if (status === 200) return;
    const { Status } = await state(name);
    if (Status !== 'running') throw new Error(`${name} is ${Status}:\n${await logs(name)}`);
    if (Date.now() > deadline) throw new Error(`${url} never answered 200:\n${await logs(name)}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/**
 * Runs the image's HEALTHCHECK (`podman healthcheck run`: podman runs it only when asked) until
 * it passes; the container is then `healthy`. Fails if it never does.
 */
async function becomesHealthy(name: string): Promise<void> {
  const deadline = Date.now() + 120_000;
  let last = '';
  for (;;) {
    const result = await podman(['healthcheck', 'run', name]);
    if (result.status === 0) return;
    last = `${result.status} ${result.stdout}${result.stderr}`;
    if (Date.now() > deadline)
      throw new Error(`${name} never became healthy: ${last}\n${await logs(name)}`);
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

/** The user id the container's main process runs as (its /proc status, from this machine). */
function uidOf(pid: number): string {
  const uid = /^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  assert.ok(uid !== undefined, `uid of ${pid}`);
  return uid;
}

/** The script the container's main process runs: its first argument that is not an option. */
function scriptOf(pid: number): string | undefined {
  const [, ...args] = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  return args.find((arg) => !arg.startsWith('-'));
}

describe('the container image', () => {
  let serverUrl = '';
  let proxyUrl = '';

  before(
    async () => {
      const missing = missingTools();
      if (missing.length > 0)
        throw new Error(
          `the image test builds and runs the image with Podman, and this machine lacks: ${missing.join(', ')}`,
        );
      const base = await baseImage(log);
      log(`building ${IMAGE} on ${base}`);
      await podmanOk(
        [
          'build',
          // The OCI runtime cannot set up a build container's cgroups on this machine.
          '--isolation',
          'chroot',
          // HEALTHCHECK is part of Docker's image format only.
          '--format',
          'docker',
          '--pull=never',
          '--network',
          'host',
          '--layers=false',
          '--build-arg',
          `NODE_IMAGE=${base}`,
          '--tag',
          IMAGE,
          '--file',
          join(ROOT, 'Dockerfile'),
          ROOT,
        ],
        BUILD_TIMEOUT_MS,
      );
      const serverPort = await freePort();
      const proxyPort = await freePort();
      serverUrl = `http://127.0.0.1:${serverPort}`;
      proxyUrl = `http://127.0.0.1:${proxyPort}`;
      // flags-server on PGlite (no DATABASE_URL: its data in the image's /var/lib/flags).
      await start(
        SERVER,
        {
          PORT: String(serverPort),
          FLAGS_ADMIN_TOKENS: ADMIN_TOKEN,
          FLAGS_CLIENT_TOKENS: CLIENT_TOKEN,
          LOG_LEVEL: 'warn',
        },
        ['flags-server'],
      );
      await waitFor(`${serverUrl}/ready`, SERVER);
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
      // The image's default command: flags-proxy edge, with Unleash Edge's variables.
      await start(
        PROXY,
        {
          PORT: String(proxyPort),
          UPSTREAM_URL: serverUrl,
          TOKENS: CLIENT_TOKEN,
          LOG_LEVEL: 'warn',
        },
        [],
      );
      await waitFor(`${proxyUrl}/internal-backstage/ready`, PROXY);
    },
    { timeout: BUILD_TIMEOUT_MS + 10 * 60_000 },
  );

  after(async () => {
    if (missingTools().length > 0) return; // nothing was started
    await podman(['rm', '--force', '--volumes', SERVER, PROXY], 120_000);
    await podman(['rmi', '--force', IMAGE], 120_000);
  });

  it('declares its health check (flags-healthcheck) and the node user', async () => {
    const [image] = JSON.parse(await podmanOk(['image', 'inspect', IMAGE])) as {
      Config: { User: string };
      Healthcheck?: { Test: string[] };
    }[];
    assert.equal(image?.Config.User, 'node');
    assert.deepEqual(image?.Healthcheck?.Test, ['CMD', 'flags-healthcheck']);
  });

  it('serves a flag created through the server’s Admin API to a client through the proxy', async () => {
    const features = await fetch(`${proxyUrl}/api/client/features`, {
      headers: { authorization: CLIENT_TOKEN },
    });
    assert.equal(features.status, 200, await logs(PROXY));
    const body = (await features.json()) as { features: { name: string; enabled: boolean }[] };
    assert.deepEqual(
      body.features.map((feature) => [feature.name, feature.enabled]),
      [[FLAG, true]],
    );
  });

  it('runs each service as the non-root node user (uid 1000), as the container’s main process', async () => {
    for (const [name, command] of [
      [SERVER, 'flags-server'],
      [PROXY, 'flags-proxy'],
    ] as const) {
      const { Pid } = await state(name);
      assert.equal(uidOf(Pid), NODE_UID, name);
      assert.match(scriptOf(Pid) ?? '', new RegExp(`/${command}$`), name);
      assert.equal((await podmanOk(['exec', name, 'id', '-u'])).trim(), NODE_UID, name);
    }
  });

  it('each container becomes healthy by the image’s HEALTHCHECK, which asks its own service', async () => {
    await becomesHealthy(SERVER);
    await becomesHealthy(PROXY);
    for (const name of [SERVER, PROXY]) {
      const { Health, Healthcheck } = await state(name);
      assert.equal((Health ?? Healthcheck)?.Status, 'healthy', name);
    }
    // What the check ran: flags-server's probe in one, flags-proxy's in the other.
    const server = await podmanOk(['exec', SERVER, 'flags-healthcheck']);
    assert.match(server, /^ready: 200 .* from http:\/\/127\.0\.0\.1:\d+\/ready\n$/);
    const proxy = await podmanOk(['exec', PROXY, 'flags-healthcheck']);
    assert.match(
      proxy,
      /^healthy: 200 .* from http:\/\/localhost:\d+\/internal-backstage\/health\n$/,
    );
  });

  it('a flags-server container is not healthy by the proxy’s probe (the check it once had)', async () => {
    const proxyProbe = await podman(['exec', SERVER, 'flags-proxy', 'health']);
    assert.equal(proxyProbe.status, 1, `${proxyProbe.stdout}${proxyProbe.stderr}`);
    assert.match(proxyProbe.stderr, /^not healthy: /);
  });

  it('both exit 0 on `podman stop` (SIGTERM)', async () => {
    // The proxy first: it sends its pending usage to the server as it stops.
    for (const name of [PROXY, SERVER]) {
      await podmanOk(['stop', '--time', '60', name], 120_000);
      const { Status, ExitCode } = await state(name);
      assert.equal(Status, 'exited', name);
      assert.equal(ExitCode, 0, `${name} exit code:\n${await logs(name)}`);
    }
  });
});
