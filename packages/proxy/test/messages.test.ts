// Issue #47, build item 2: every message of the proxy's sync, start and backstage names the fix,
// in the operator's words (STYLE habit 21): a wrong upstream URL is no token problem, an option is
// named as the operator wrote it, a stream that never connected says so, the listen line gives the
// bound address, and `/internal-backstage/tokens` shows a refused token as Unleash Edge does.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import { createProxy, loadConfig, type ProxyOptions } from '@flags/proxy';
import { EnvironmentState } from '@flags/serving';
import { parseCommandLine } from '../src/config/command-line.js';
import type { ProxyConfig } from '../src/config/load.js';
import { listen } from '../src/listen.js';
import { FeedSync } from '../src/sync/feed-sync.js';
import { createUpstreamClient } from '../src/sync/http-client.js';
import { Poller } from '../src/sync/poller.js';
import { smallPayload } from './fixtures/small.js';
import { waitFor } from './helpers/proxy.js';
import { RecordingLogger } from './helpers/recording-logger.js';

const TOKEN = `*:development.${'a'.repeat(32)}`;

/** How the test upstream answers a path: by default the client API under `/api`, 404 elsewhere. */
type Answerer = (path: string, request: IncomingMessage, response: ServerResponse) => void;

const unleashApi: Answerer = (path, _request, response) => {
  if (path === '/api/client/features') {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify(smallPayload));
    return;
  }
  response.writeHead(404, { 'content-type': 'application/json' });
  response.end('{"name":"NotFoundError","message":"not found"}');
};

/** unleash-server serves its web UI's page on paths that are not its API. */
const htmlEverywhere: Answerer = (_path, _request, response) => {
  response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
  response.end('<!doctype html><html><body>Unleash</body></html>');
};

/** A server that refuses every path it does not know with 403 (what the upstream did). */
const forbiddenOffApi: Answerer = (path, request, response) => {
  if (path.startsWith('/api/')) return unleashApi(path, request, response);
  response.writeHead(403, { 'content-type': 'application/json' });
  response.end('{"message":"forbidden"}');
};

const servers: Server[] = [];
after(async () => {
  for (const server of servers) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** A local upstream; `answer` may be replaced while it runs. */
async function upstream(answer: Answerer): Promise<{ root: string; set(a: Answerer): void }> {
  let current = answer;
  const server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://x').pathname;
    request.resume();
    current(path, request, response);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    root: `http://127.0.0.1:${port}`,
    set: (next) => {
      current = next;
    },
  };
}

/** One poll of a poller made from `config` (into `state`); the lines it logged. */
async function pollOnce(
  config: ProxyConfig,
  state = new EnvironmentState(),
): Promise<RecordingLogger> {
  const log = new RecordingLogger();
  const client = createUpstreamClient(config);
  try {
    const poller = new Poller(config, state, log, client);
    await poller.poll();
  } finally {
    await client.close();
  }
  return log;
}

const base = { FLAGS_PROXY_CLIENT_KEYS: 'k' };

/** The warnings and errors logged, as text. */
function problems(log: RecordingLogger): string {
  return log.lines
    .filter((line) => line.level === 'warn' || line.level === 'error')
    .map((line) => line.message)
    .join('\n');
}

describe('a wrong upstream URL is diagnosed apart from a refused token', () => {
  it('FLAGS_URL without /api, answered 404: says to add /api', async () => {
    const { root } = await upstream(unleashApi);
    const log = await pollOnce(loadConfig({ ...base, FLAGS_URL: root, FLAGS_API_TOKEN: TOKEN }));
    const text = problems(log);
    assert.doesNotMatch(text, /API token/);
    assert.match(text, /FLAGS_URL has no \/api/);
    assert.ok(text.includes(`set FLAGS_URL to ${root}/api`), text);
  });

  it('UNLEASH_URL without /api, answered 403 off the API: a URL problem, not the token', async () => {
    const { root } = await upstream(forbiddenOffApi);
    const log = await pollOnce(
      loadConfig({ ...base, UNLEASH_URL: `${root}/`, UNLEASH_API_TOKEN: TOKEN }),
    );
    const text = problems(log);
    assert.doesNotMatch(text, /API token/);
    assert.doesNotMatch(text, /FLAGS_URL/);
    assert.ok(text.includes(`set UNLEASH_URL to ${root}/api`), text);
  });

  it('UPSTREAM_URL with /api (Edge adds it): says to give the root URL', async () => {
    const { root } = await upstream(unleashApi);
    const log = await pollOnce(
      loadConfig({ UPSTREAM_URL: `${root}/api`, TOKENS: TOKEN }, {}, 'edge'),
    );
    const text = problems(log);
    assert.match(text, /UPSTREAM_URL ends in \/api/);
    assert.ok(text.includes(`set UPSTREAM_URL to ${root} `), text);
  });

  it('-u with /api on the command line: names -u', async () => {
    const { root } = await upstream(unleashApi);
    const line = parseCommandLine(['edge', '-u', `${root}/api`, '-t', TOKEN]);
    const log = await pollOnce(loadConfig(line.variables, {}, 'edge', line.written));
    const text = problems(log);
    assert.match(text, /-u \(--upstream-url\) ends in \/api/);
    assert.doesNotMatch(text, /UPSTREAM_URL|FLAGS_URL/);
  });

  it('FLAGS_URL with /api twice: says to keep one', async () => {
    const { root } = await upstream(unleashApi);
    const log = await pollOnce(
      loadConfig({ ...base, FLAGS_URL: `${root}/api/api`, FLAGS_API_TOKEN: TOKEN }),
    );
    assert.ok(problems(log).includes(`set FLAGS_URL to ${root}/api`), problems(log));
  });

  it('an HTML page at a URL ending in /api: not an Unleash API', async () => {
    const { root } = await upstream(htmlEverywhere);
    const log = await pollOnce(
      loadConfig({ ...base, FLAGS_URL: `${root}/api`, FLAGS_API_TOKEN: TOKEN }),
    );
    const text = problems(log);
    assert.match(text, /is not an Unleash API/);
    assert.match(text, /an HTML page/);
    assert.match(text, /FLAGS_URL/);
    assert.doesNotMatch(text, /invalid JSON/);
  });

  it('404 for the client API at a URL ending in /api: not an Unleash API', async () => {
    const { root } = await upstream(unleashApi);
    const log = await pollOnce(
      loadConfig({ ...base, FLAGS_URL: `${root}/nothing/api`, FLAGS_API_TOKEN: TOKEN }),
    );
    const text = problems(log);
    assert.match(text, /is not an Unleash API \(GET .*\/client\/features answered 404\)/);
    assert.match(text, /FLAGS_URL/);
  });
});

describe('an upstream whose API has another layout', () => {
  it('GitLab-like /api/v4/…/unleash/<id> refusing the token: a token problem, not a missing /api', async () => {
    const { root } = await upstream((_path, _request, response) => {
      response.writeHead(401, { 'content-type': 'application/json' });
      response.end('{"message":"401 Unauthorized"}');
    });
    const log = await pollOnce(
      loadConfig({
        ...base,
        FLAGS_URL: `${root}/api/v4/feature_flags/unleash/42`,
        FLAGS_API_TOKEN: TOKEN,
      }),
    );
    const text = problems(log);
    assert.match(text, /rejected the API token \(401\): check FLAGS_API_TOKEN/);
    assert.doesNotMatch(text, /has no \/api/);
  });
});

describe('a refused token is named as the operator wrote it', () => {
  const refusing: Answerer = (_path, _request, response) => {
    response.writeHead(401, { 'content-type': 'application/json' });
    response.end('{"message":"unauthorized"}');
  };
  for (const [label, env, mode, expected] of [
    ['TOKENS', { UPSTREAM_URL: 'ROOT', TOKENS: TOKEN }, 'edge', 'TOKENS'],
    [
      'UNLEASH_API_TOKEN',
      { UNLEASH_URL: 'ROOT/api', UNLEASH_API_TOKEN: TOKEN },
      'proxy',
      'UNLEASH_API_TOKEN',
    ],
    [
      'FLAGS_API_TOKEN',
      { FLAGS_URL: 'ROOT/api', FLAGS_API_TOKEN: TOKEN },
      'proxy',
      'FLAGS_API_TOKEN',
    ],
  ] as const)
    it(`${label}`, async () => {
      const { root } = await upstream(refusing);
      const filled = Object.fromEntries(
        Object.entries(env).map(([name, value]) => [name, value.replace('ROOT', root)]),
      );
      const log = await pollOnce(loadConfig({ ...base, ...filled }, {}, mode));
      const text = problems(log);
      assert.match(text, /upstream rejected the API token \(401\)/);
      assert.ok(text.includes(`check ${expected} `), text);
      for (const other of ['FLAGS_API_TOKEN', 'UNLEASH_API_TOKEN', 'TOKENS'])
        if (other !== expected) assert.ok(!text.includes(other), `${other} in: ${text}`);
    });

  it('-t on the command line', async () => {
    const { root } = await upstream(refusing);
    const line = parseCommandLine(['edge', '-u', root, '-t', TOKEN]);
    const log = await pollOnce(loadConfig(line.variables, {}, 'edge', line.written));
    assert.ok(problems(log).includes('check -t (--tokens) '), problems(log));
  });

  it('says that nothing is served yet when there is no snapshot, and that the last one is when there is', async () => {
    const { root } = await upstream(refusing);
    const config = loadConfig({ ...base, FLAGS_URL: `${root}/api`, FLAGS_API_TOKEN: TOKEN });
    const first = problems(await pollOnce(config));
    assert.match(
      first,
      /Not ready \(the flag routes answer 503\) until the upstream accepts it; retrying slowly\./,
    );
    assert.doesNotMatch(first, /last good snapshot/);
    const held = new EnvironmentState();
    held.update(smallPayload);
    const later = problems(await pollOnce(config, held));
    assert.match(later, /Serving the last good snapshot/);
    assert.doesNotMatch(later, /Not ready/);
  });

  it('flagsApiToken in code', async () => {
    const { root } = await upstream(refusing);
    const log = await pollOnce(
      loadConfig({}, { flagsUrl: `${root}/api`, flagsApiToken: [TOKEN], clientKeys: ['k'] }),
    );
    assert.ok(problems(log).includes('check flagsApiToken '), problems(log));
  });

  it('an invalid -u is refused by its name at start', () => {
    const line = parseCommandLine(['edge', '-u', 'not-a-url', '-t', TOKEN]);
    assert.throws(
      () => loadConfig(line.variables, {}, 'edge', line.written),
      (error: Error) =>
        error.message.includes('-u (--upstream-url) must be a URL') &&
        !error.message.includes('UPSTREAM_URL must'),
    );
  });
});

describe('a refused token or a wrong URL is said once, by the features request', () => {
  /** Starts a streaming feed against `answer` and waits for the features request's problem. */
  async function feedProblems(answer: Answerer, url: (root: string) => string, said: RegExp) {
    const { root } = await upstream(answer);
    const config = loadConfig({ ...base, FLAGS_URL: url(root), FLAGS_API_TOKEN: TOKEN });
    assert.equal(config.upstreamStreaming, 'auto', 'the feed asks for a stream first');
    const log = new RecordingLogger();
    const client = createUpstreamClient(config);
    const feed = new FeedSync(config, new EnvironmentState(), log, client, { random: () => 0 });
    try {
      feed.start();
      await waitFor(() => said.test(problems(log)));
      // The stream's refusal was answered before the poll's; it must not have added a warning.
      assert.ok(
        log.lines.some((line) => /\/client\/streaming/.test(JSON.stringify(line.data))),
        log.text(),
      );
      return problems(log);
    } finally {
      feed.stop();
      await feed.idle();
      await client.close();
    }
  }

  it('a stream refused with 401 adds no warning about streaming to the token problem', async () => {
    const text = await feedProblems(
      (_path, _request, response) => {
        response.writeHead(401, { 'content-type': 'application/json' });
        response.end('{"message":"unauthorized"}');
      },
      (root) => `${root}/api`,
      /rejected the API token/,
    );
    assert.doesNotMatch(text, /\bstream/);
    assert.match(text, /check FLAGS_API_TOKEN/);
  });

  it('a stream refused with 403 off the API adds no warning about streaming to the missing /api', async () => {
    const text = await feedProblems(forbiddenOffApi, (root) => root, /has no \/api/);
    assert.doesNotMatch(text, /\bstream/);
  });
});

describe('a stream that never connected', () => {
  it('says it could not connect, never that it dropped', async () => {
    // A port nothing listens on: take one and close it.
    const { root } = await upstream(unleashApi);
    const server = servers.pop() as Server;
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    const config = loadConfig({ ...base, FLAGS_URL: `${root}/api`, FLAGS_API_TOKEN: TOKEN });
    const log = new RecordingLogger();
    const client = createUpstreamClient(config);
    const feed = new FeedSync(config, new EnvironmentState(), log, client, { random: () => 0 });
    try {
      feed.start();
      await waitFor(() => log.lines.some((line) => /stream/.test(line.message)));
      const first = log.lines.find((line) => /stream/.test(line.message));
      assert.ok(first);
      assert.doesNotMatch(first.message, /dropped/);
      assert.match(first.message, /could not connect to the upstream/);
    } finally {
      feed.stop();
      await feed.idle();
      await client.close();
    }
  });
});

describe('the listen line', () => {
  const proxies: Array<{ close(): Promise<unknown> }> = [];
  after(async () => {
    for (const proxy of proxies) await proxy.close();
  });

  for (const host of ['0.0.0.0', '::'])
    it(`gives the address bound (${host})`, async () => {
      const { root } = await upstream(unleashApi);
      const options: ProxyOptions = {
        flagsUrl: `${root}/api`,
        flagsApiToken: [TOKEN],
        clientKeys: ['k'],
        port: 0,
        host,
        metricsInterval: 0,
        logger: new RecordingLogger(),
      };
      const proxy = await createProxy(options);
      proxies.push(proxy.app);
      const [address] = await listen(proxy.app, proxy.config);
      const { port } = proxy.app.server.address() as AddressInfo;
      assert.equal(address, host === '::' ? `http://[::]:${port}` : `http://0.0.0.0:${port}`);
    });
});

describe('/internal-backstage/tokens and a refused token', () => {
  it('leaves a refused token out of tokenRefreshes and counts it, counts failures, and logs recovery once', async () => {
    const up = await upstream(unleashApi);
    const log = new RecordingLogger();
    const proxy = await createProxy({
      flagsUrl: `${up.root}/api`,
      flagsApiToken: [TOKEN],
      clientKeys: ['k'],
      upstreamStreaming: 'polling',
      metricsInterval: 0,
      refreshInterval: 60_000,
      logger: log,
    } as ProxyOptions);
    try {
      await waitFor(() => proxy.environments.ready);
      const tokens = async () =>
        (await proxy.app.inject({ method: 'GET', url: '/internal-backstage/tokens' })).json();
      assert.equal((await tokens()).tokenRefreshes.length, 1);

      up.set((_path, _request, response) => {
        response.writeHead(503);
        response.end();
      });
      await proxy.poller.poll();
      await proxy.poller.poll();
      assert.equal((await tokens()).tokenRefreshes[0].failure_count, 2, 'as Edge backs off');

      up.set((_path, _request, response) => {
        response.writeHead(401);
        response.end();
      });
      await proxy.poller.poll();
      await proxy.poller.poll();
      const refused = await tokens();
      assert.deepEqual(refused.tokenRefreshes, [], 'as Edge drops a refused token');
      assert.equal(refused.invalidTokenCount, 1);
      assert.ok(
        !JSON.stringify(refused).includes('Validated'),
        'no refused token is shown as validated',
      );
      const refusals = log.lines.filter(
        (line) => line.level === 'error' && /API token/.test(line.message),
      );
      assert.equal(refusals.length, 1, 'a refusal is logged once per streak');

      up.set(unleashApi);
      await proxy.poller.poll();
      await proxy.poller.poll();
      const recovered = await tokens();
      assert.equal(recovered.tokenRefreshes.length, 1);
      assert.equal(recovered.tokenRefreshes[0].token.status, 'Validated');
      assert.equal(recovered.invalidTokenCount, 0);
      const recoveries = log.lines.filter(
        (line) => line.level === 'info' && /accepts the API token again/.test(line.message),
      );
      assert.equal(recoveries.length, 1, log.text());
    } finally {
      await proxy.app.close();
    }
  });
});
