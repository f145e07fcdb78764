import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { InMemStorageProvider, Unleash } from 'unleash-client';
import { InMemoryStorageProvider, UnleashClient } from 'unleash-proxy-client';
import {
  freePort,
  type SpawnedEntry,
  spawnCommand,
  waitUntilHealthy,
} from '../../../test/helpers/processes.js';
import { bootstrapFlags } from '../src/offline/bootstrap.js';
import { waitFor } from './helpers/proxy.js';

/**
 * `flags-proxy offline`, Unleash Edge's offline mode: the command as npm links it, serving a
 * bootstrap file with no upstream, to the tokens it was given.
 */

const COMMAND = fileURLToPath(new URL('../../../node_modules/.bin/flags-proxy', import.meta.url));

const PROD_CLIENT = '*:production.offline-client-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
const BILLING_CLIENT = 'billing:production.offline-billing-bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb';
const DEV_FRONTEND = '*:development.offline-frontend-cccccccccccccccccccccccccccccc';
const PLAIN_FRONTEND = 'plain-offline-frontend-key-dddddddddddddddddddddd';

const DOCUMENT = {
  version: 2,
  features: [
    {
      name: 'checkout',
      enabled: true,
      project: 'default',
      strategies: [{ name: 'default', parameters: {}, constraints: [] }],
    },
    {
      name: 'invoices',
      enabled: true,
      project: 'billing',
      strategies: [
        {
          name: 'flexibleRollout',
          parameters: { rollout: '100', stickiness: 'default', groupId: 'invoices' },
          constraints: [{ contextName: 'userId', operator: 'IN', values: ['u1'] }],
        },
      ],
    },
    { name: 'retired', enabled: false, project: 'default', strategies: [] },
  ],
};

interface Offline extends SpawnedEntry {
  readonly base: string;
}

async function offline(args: readonly string[], env: Record<string, string> = {}) {
  const port = await freePort();
  const command = spawnCommand(COMMAND, ['offline', ...args], {
    PORT: String(port),
    PROXY_HOST: '127.0.0.1',
    ...env,
  });
  return { ...command, base: `http://127.0.0.1:${port}` };
}

async function started(args: readonly string[], env: Record<string, string> = {}) {
  const command = await offline(args, env);
  await waitUntilHealthy(`${command.base}/proxy/health`, command.child, {
    output: command.output,
  });
  return command;
}

async function get(base: string, path: string, token: string) {
  const response = await request(`${base}${path}`, { headers: { authorization: token } });
  const text = await response.body.text();
  return { status: response.statusCode, json: () => JSON.parse(text), text };
}

/** An offline proxy reading `file` again every second, with a client and a plain frontend token. */
function reloading(file: string) {
  return started([], {
    BOOTSTRAP_FILE: file,
    CLIENT_TOKENS: PROD_CLIENT,
    FRONTEND_TOKENS: PLAIN_FRONTEND,
    RELOAD_INTERVAL: '1',
  });
}

const names = (list: { name: string }[]) => list.map((item) => item.name).sort();

async function stop(command: Offline): Promise<void> {
  command.child.kill('SIGTERM');
  assert.equal(await command.exited, 0, command.output());
}

describe('flags-proxy offline', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'flags-offline-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('serves a client-features file to its client and frontend tokens, by environment and project', async () => {
    const file = join(dir, 'features.json');
    await writeFile(file, JSON.stringify(DOCUMENT));
    const command = await started([
      '--bootstrap-file',
      file,
      '--client-tokens',
      `${PROD_CLIENT},${BILLING_CLIENT}`,
      '--frontend-tokens',
      `${DEV_FRONTEND},${PLAIN_FRONTEND}`,
    ]);
    try {
      const all = await get(command.base, '/api/client/features', PROD_CLIENT);
      assert.equal(all.status, 200, all.text);
      assert.deepEqual(names(all.json().features), ['checkout', 'invoices', 'retired']);
      const billing = await get(command.base, '/api/client/features', BILLING_CLIENT);
      assert.deepEqual(names(billing.json().features), ['invoices']);
      // An environment only a frontend token names is served from the same file.
      const frontend = await get(command.base, '/api/frontend?userId=u1', DEV_FRONTEND);
      assert.equal(frontend.status, 200, frontend.text);
      assert.deepEqual(names(frontend.json().toggles), ['checkout', 'invoices']);
      const plain = await get(command.base, '/proxy?userId=u2', PLAIN_FRONTEND);
      assert.deepEqual(names(plain.json().toggles), ['checkout']);
      // Tokens it was not given are refused, as online.
      assert.equal((await get(command.base, '/api/client/features', 'nope')).status, 403);
      const unknown = '*:production.not-given-eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee';
      assert.equal((await get(command.base, '/api/frontend', unknown)).status, 403);
      assert.equal((await get(command.base, '/api/frontend', PROD_CLIENT)).status, 403);
    } finally {
      await stop(command);
    }
  });

  it('is read by the real SDKs: unleash-client with a client token, unleash-proxy-client with a frontend one', async () => {
    const file = join(dir, 'sdk.json');
    await writeFile(file, JSON.stringify(DOCUMENT));
    const command = await started([], {
      BOOTSTRAP_FILE: file,
      CLIENT_TOKENS: PROD_CLIENT,
      FRONTEND_TOKENS: DEV_FRONTEND,
    });
    const server = new Unleash({
      url: `${command.base}/api`,
      appName: 'offline-service',
      customHeaders: { Authorization: PROD_CLIENT },
      refreshInterval: 60_000,
      disableMetrics: true,
      storageProvider: new InMemStorageProvider(),
      skipInstanceCountWarning: true,
    });
    server.on('error', () => {});
    const browser = new UnleashClient({
      url: `${command.base}/api/frontend`,
      clientKey: DEV_FRONTEND,
      appName: 'offline-web',
      refreshInterval: 60,
      disableMetrics: true,
      storageProvider: new InMemoryStorageProvider(),
      context: { userId: 'u1' },
    });
    try {
      await new Promise<void>((resolve) => server.once('synchronized', () => resolve()));
      assert.equal(server.isEnabled('checkout'), true);
      assert.equal(server.isEnabled('invoices', { userId: 'u1' }), true);
      assert.equal(server.isEnabled('invoices', { userId: 'u2' }), false);
      assert.equal(server.isEnabled('retired'), false);
      await browser.start();
      assert.equal(browser.isEnabled('checkout'), true);
      assert.equal(browser.isEnabled('invoices'), true);
      assert.equal(browser.isEnabled('retired'), false);
    } finally {
      server.destroy();
      browser.stop();
      await stop(command);
    }
  });

  it('serves a simple map and reads the file again every RELOAD_INTERVAL', async () => {
    const file = join(dir, 'simple.json');
    await writeFile(
      file,
      JSON.stringify({ banner: { enabled: true, variant: 'blue' }, beta: { enabled: false } }),
    );
    const command = await reloading(file);
    try {
      const first = await get(command.base, '/api/frontend', PLAIN_FRONTEND);
      assert.deepEqual(
        first
          .json()
          .toggles.map((t: { name: string; variant: { name: string } }) => [
            t.name,
            t.variant.name,
          ]),
        [['banner', 'blue']],
      );
      await writeFile(file, JSON.stringify({ banner: { enabled: true }, beta: { enabled: true } }));
      await waitFor(
        async () =>
          names((await get(command.base, '/api/frontend', PLAIN_FRONTEND)).json().toggles)
            .length === 2,
        10_000,
      );
    } finally {
      await stop(command);
    }
  });

  it('keeps serving the last flags when a reload finds the file broken', async () => {
    const file = join(dir, 'broken-later.json');
    await writeFile(file, JSON.stringify({ banner: { enabled: true } }));
    const command = await reloading(file);
    try {
      await writeFile(file, '{ not json');
      await waitFor(() => command.output().includes('could not be read again'), 10_000);
      const answer = await get(command.base, '/api/frontend', PLAIN_FRONTEND);
      assert.deepEqual(names(answer.json().toggles), ['banner']);
    } finally {
      await stop(command);
    }
  });

  it('does not start without a readable file of flags or a client token, naming what is missing', async () => {
    const cases: [readonly string[], Record<string, string>, RegExp][] = [
      [['--client-tokens', PROD_CLIENT], {}, /BOOTSTRAP_FILE/],
      [
        ['--bootstrap-file', join(dir, 'none.json'), '--client-tokens', PROD_CLIENT],
        {},
        /none\.json/,
      ],
      [['--bootstrap-file', join(dir, 'features.json')], {}, /CLIENT_TOKENS/],
      [
        [
          '--bootstrap-file',
          join(dir, 'features.json'),
          '--client-tokens',
          PROD_CLIENT,
          '--tokens',
          PROD_CLIENT,
        ],
        {},
        /--tokens/,
      ],
    ];
    await writeFile(join(dir, 'features.json'), JSON.stringify(DOCUMENT));
    for (const [args, env, message] of cases) {
      const command = await offline(args, env);
      // `--tokens` is a command line offline cannot take (exit 2); the others, a configuration.
      const status = args.includes('--tokens') ? 2 : 1;
      assert.equal(await command.exited, status, command.output());
      assert.match(command.output(), message);
    }
  });

  it('reads a simple entry as a flag on or off for everyone, with its one variant', () => {
    const flags = bootstrapFlags({ a: { enabled: true, variant: 'blue' }, b: { enabled: false } });
    assert.ok(typeof flags === 'object');
    assert.deepEqual(
      flags.features.map((f) => [f.name, f.enabled, f.variants?.map((v) => [v.name, v.weight])]),
      [
        ['a', true, [['blue', 1000]]],
        ['b', false, []],
      ],
    );
    assert.match(String(bootstrapFlags({ a: { variant: 'x' } })), /"a"/);
    assert.match(String(bootstrapFlags([1])), /no JSON object/);
    assert.match(String(bootstrapFlags({ features: [{ enabled: true }] })), /\/features\/0/);
  });
});
