import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createProxy, type ProxyApp, type ProxyOptions } from '@flags/proxy';
import { EdgeUpstream, type EnvironmentPayload, onFeature } from './helpers/edge-upstream.js';
import { type Answer, waitFor } from './helpers/proxy.js';
import { RecordingLogger } from './helpers/recording-logger.js';

const SECRET = 'a'.repeat(32);
const DEV_CLIENT = `*:development.dev-client-${SECRET}`;
const PROD_CLIENT = `*:production.prod-client-${SECRET}`;
const DEV_FRONTEND = `*:development.dev-frontend-${SECRET}`;
const PROD_FRONTEND = `*:production.prod-frontend-${SECRET}`;
const BILLING_FRONTEND = `billing:production.billing-frontend-${SECRET}`;
const BILLING_CLIENT = `billing:production.billing-client-${SECRET}`;
const STAGING_CLIENT = `*:staging.staging-client-${SECRET}`;
const STAGING_FRONTEND = `*:staging.staging-frontend-${SECRET}`;
const OTHER_FRONTEND = `*:qa.qa-frontend-${SECRET}`;
const LEGACY_KEY = `legacy-client-key-${SECRET}`;
const BOUND_KEY = `bound-client-key-${SECRET}`;

function payloads(): Map<string, EnvironmentPayload> {
  return new Map<string, EnvironmentPayload>([
    // Upstream order is not name order: the /api answers sort, /proxy keeps it.
    ['development', { version: 2, features: [onFeature('zeta-dev'), onFeature('alpha-dev')] }],
    [
      'production',
      {
        version: 2,
        features: [
          onFeature('prod-default'),
          onFeature('prod-billing', 'billing'),
          { ...onFeature('prod-off'), enabled: false },
        ],
      },
    ],
    ['staging', { version: 2, features: [onFeature('staging-only')] }],
  ]);
}

function edgeUpstream(): EdgeUpstream {
  const upstream = new EdgeUpstream(payloads());
  const known = [
    [DEV_CLIENT, 'client', 'development', ['*']],
    [PROD_CLIENT, 'client', 'production', ['*']],
    [DEV_FRONTEND, 'frontend', 'development', ['*']],
    [PROD_FRONTEND, 'frontend', 'production', ['*']],
    [BILLING_FRONTEND, 'frontend', 'production', ['billing']],
    [BILLING_CLIENT, 'client', 'production', ['billing']],
    [STAGING_CLIENT, 'client', 'staging', ['*']],
    [STAGING_FRONTEND, 'frontend', 'staging', ['*']],
    [OTHER_FRONTEND, 'frontend', 'qa', ['*']],
  ] as const;
  for (const [token, type, environment, projects] of known)
    upstream.tokens.set(token, { type, environment, projects });
  return upstream;
}

interface Started {
  readonly upstream: EdgeUpstream;
  readonly proxy: ProxyApp;
  readonly log: RecordingLogger;
  close(): Promise<void>;
}

async function start(options: ProxyOptions = {}, upstream = edgeUpstream()): Promise<Started> {
  await upstream.start();
  const log = new RecordingLogger();
  const proxy = await createProxy({
    flagsUrl: upstream.url,
    flagsApiToken: [DEV_CLIENT, PROD_CLIENT],
    refreshInterval: 50,
    metricsInterval: 0,
    logger: log,
    ...options,
  });
  return {
    upstream,
    proxy,
    log,
    async close() {
      await proxy.app.close();
      await upstream.stop();
    },
  };
}

async function call(
  started: Started,
  method: 'GET' | 'POST',
  url: string,
  token?: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const response = await started.proxy.app.inject({
    method,
    url,
    headers: {
      ...(token === undefined ? {} : { authorization: token }),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
    payload: body === undefined ? undefined : JSON.stringify(body),
  });
  return {
    status: response.statusCode,
    headers: response.headers as Answer['headers'],
    text: response.payload,
    json: () => JSON.parse(response.payload),
  };
}

const names = (answer: Answer): string[] =>
  answer.json().toggles.map((toggle: { name: string }) => toggle.name);

describe('many environments with Unleash-format tokens', () => {
  let run: Started;
  before(async () => {
    run = await start({ clientKeys: [LEGACY_KEY], pretrustedTokens: [`${BOUND_KEY}@production`] });
    await waitFor(() => run.proxy.environments.ready);
  });
  after(() => run.close());

  it('syncs one snapshot per startup environment, each with its own client token', () => {
    assert.deepEqual(
      run.proxy.environments.all().map((environment) => environment.name),
      ['development', 'production'],
    );
    const tokens = new Set(run.upstream.featureRequests().map((r) => r.headers.authorization));
    assert.deepEqual([...tokens].sort(), [DEV_CLIENT, PROD_CLIENT].sort());
  });

  it('answers a frontend token from its environment, toggles by name, GET and POST (bare or wrapped)', async () => {
    const dev = await call(run, 'GET', '/api/frontend?userId=1', DEV_FRONTEND);
    assert.equal(dev.status, 200);
    assert.deepEqual(names(dev), ['alpha-dev', 'zeta-dev']);
    const prod = await call(run, 'POST', '/api/frontend', PROD_FRONTEND, { userId: '1' });
    assert.equal(prod.status, 200);
    assert.deepEqual(names(prod), ['prod-billing', 'prod-default']);
    const wrapped = await call(run, 'POST', '/api/proxy', PROD_FRONTEND, {
      context: { userId: '1' },
    });
    assert.deepEqual(names(wrapped), ['prod-billing', 'prod-default']);
    const plainOrder = await call(run, 'GET', '/proxy', LEGACY_KEY);
    assert.deepEqual(names(plainOrder), ['zeta-dev', 'alpha-dev'], '/proxy keeps upstream order');
    // /proxy takes a frontend token too (Unleash Proxy answers it 401), from its environment.
    const proxyRoute = await call(run, 'GET', '/proxy?userId=1', PROD_FRONTEND);
    assert.equal(proxyRoute.status, 200);
    assert.deepEqual(names(proxyRoute), ['prod-default', 'prod-billing']);
  });

  it('narrows a project token to its projects', async () => {
    const billing = await call(run, 'GET', '/api/frontend', BILLING_FRONTEND);
    assert.equal(billing.status, 200);
    assert.deepEqual(names(billing), ['prod-billing']);
    const one = await call(run, 'GET', '/api/frontend/features/prod-default', BILLING_FRONTEND);
    assert.equal(one.status, 404, 'a toggle outside the token’s projects is not found');
  });

  it('serves plain client keys from the first environment, secret@environment from its own', async () => {
    assert.deepEqual(names(await call(run, 'GET', '/api/frontend', LEGACY_KEY)), [
      'alpha-dev',
      'zeta-dev',
    ]);
    assert.deepEqual(names(await call(run, 'GET', '/api/frontend', BOUND_KEY)), [
      'prod-billing',
      'prod-default',
    ]);
    assert.deepEqual(names(await call(run, 'GET', '/proxy', BOUND_KEY)), [
      'prod-default',
      'prod-billing',
    ]);
  });

  it('refuses as Edge does: no key 401, unknown token 403, wrong type 403, JSON bodies', async () => {
    const none = await call(run, 'GET', '/api/frontend');
    assert.equal(none.status, 401);
    assert.equal(none.json().name, 'AuthenticationRequired');
    const made = await call(run, 'GET', '/api/frontend', `*:development.${'f'.repeat(40)}`);
    assert.equal(made.status, 403);
    assert.equal(made.json().name, 'InvalidTokenError');
    assert.equal((await call(run, 'GET', '/api/frontend', 'not-a-token')).status, 403);
    assert.equal((await call(run, 'GET', '/api/client/features', DEV_FRONTEND)).status, 403);
    assert.equal((await call(run, 'GET', '/api/frontend', DEV_CLIENT)).status, 403);
    assert.equal((await call(run, 'GET', '/api/client/features', LEGACY_KEY)).status, 403);
    // /proxy keeps Unleash Proxy's plain-text 401 for every key problem.
    const legacy = await call(run, 'GET', '/proxy', `*:development.${'f'.repeat(40)}`);
    assert.equal(legacy.status, 401);
    assert.equal(legacy.text, 'Unauthorized');
  });

  it('answers a frontend token of an environment it does not sync with 403 naming it', async () => {
    const answer = await call(run, 'GET', '/api/frontend', OTHER_FRONTEND);
    assert.equal(answer.status, 403);
    assert.equal(answer.json().name, 'InvalidTokenError');
    assert.match(answer.json().details[0].message, /"qa"/);
  });

  it('serves a client token its environment’s configuration, and one feature by name', async () => {
    const all = await call(run, 'GET', '/api/client/features', PROD_CLIENT);
    assert.equal(all.status, 200);
    assert.deepEqual(
      all
        .json()
        .features.map((f: { name: string }) => f.name)
        .sort(),
      ['prod-billing', 'prod-default', 'prod-off'],
    );
    const prefixed = await call(run, 'GET', '/api/client/features?namePrefix=prod-b', PROD_CLIENT);
    assert.deepEqual(
      prefixed.json().features.map((f: { name: string }) => f.name),
      ['prod-billing'],
    );
    const one = await call(run, 'GET', '/api/client/features/prod-off', PROD_CLIENT);
    assert.equal(one.status, 200);
    assert.equal(one.json().name, 'prod-off');
    assert.equal((await call(run, 'GET', '/api/client/features/nope', PROD_CLIENT)).status, 404);
  });

  it('answers 304 to GET and POST on /api when If-None-Match matches, never to POST /proxy', async () => {
    const first = await call(run, 'POST', '/api/frontend', DEV_FRONTEND, { userId: '7' });
    const etag = first.headers.etag as string;
    assert.ok(etag);
    const again = await call(
      run,
      'POST',
      '/api/frontend',
      DEV_FRONTEND,
      { userId: '7' },
      {
        'if-none-match': etag,
      },
    );
    assert.equal(again.status, 304);
    const get = await call(run, 'GET', '/api/frontend?userId=7', DEV_FRONTEND, undefined, {
      'if-none-match': etag,
    });
    assert.equal(get.status, 304);
    const proxyFirst = await call(run, 'POST', '/proxy', LEGACY_KEY, { context: { userId: '7' } });
    const proxyAgain = await call(
      run,
      'POST',
      '/proxy',
      LEGACY_KEY,
      { context: { userId: '7' } },
      {
        'if-none-match': proxyFirst.headers.etag as string,
      },
    );
    assert.equal(proxyAgain.status, 200);
  });

  it('collapses repeated and trailing slashes', async () => {
    assert.equal((await call(run, 'GET', '//api//frontend/', DEV_FRONTEND)).status, 200);
    assert.equal(
      (await call(run, 'GET', '/api/frontend//features/alpha-dev', DEV_FRONTEND)).status,
      200,
    );
  });

  it('answers one enabled toggle by name, 404 for a disabled or unknown one', async () => {
    const one = await call(run, 'GET', '/api/frontend/features/prod-default', PROD_FRONTEND);
    assert.equal(one.status, 200);
    assert.equal(one.json().name, 'prod-default');
    assert.equal(one.json().enabled, true);
    const off = await call(run, 'POST', '/api/frontend/features/prod-off', PROD_FRONTEND, {});
    assert.equal(off.status, 404);
    assert.equal(
      (await call(run, 'GET', '/api/frontend/features/nope', PROD_FRONTEND)).status,
      404,
    );
  });

  it('takes usage reports and registrations on Edge’s paths with 202', async () => {
    const report = {
      appName: 'web',
      instanceId: 'browser',
      bucket: { start: new Date().toISOString(), stop: new Date().toISOString(), toggles: {} },
    };
    const frontend = await call(run, 'POST', '/api/frontend/client/metrics', DEV_FRONTEND, report);
    assert.equal(frontend.status, 202);
    const client = await call(run, 'POST', '/api/client/metrics', DEV_CLIENT, report);
    assert.equal(client.status, 202);
    assert.equal(
      (await call(run, 'POST', '/api/client/metrics', DEV_FRONTEND, report)).status,
      403,
    );
    const register = await call(run, 'POST', '/api/client/register', DEV_CLIENT, {
      appName: 'server-app',
      instanceId: 'i-1',
      strategies: ['default'],
      started: new Date().toISOString(),
      interval: 10000,
    });
    assert.equal(register.status, 202);
  });
});

describe('token validation', () => {
  it('makes one upstream call for concurrent first requests with one token', async () => {
    const run = await start();
    try {
      await waitFor(() => run.proxy.environments.ready);
      const answers = await Promise.all(
        Array.from({ length: 20 }, () => call(run, 'GET', '/api/frontend', DEV_FRONTEND)),
      );
      assert.ok(answers.every((answer) => answer.status === 200));
      assert.equal(run.upstream.validateCalls().length, 1);
      assert.equal((await call(run, 'GET', '/api/frontend', DEV_FRONTEND)).status, 200);
      assert.equal(
        run.upstream.validateCalls().length,
        1,
        'a known token is not asked about again',
      );
      const refused = `*:development.${'e'.repeat(40)}`;
      assert.equal((await call(run, 'GET', '/api/frontend', refused)).status, 403);
      assert.equal((await call(run, 'GET', '/api/frontend', refused)).status, 403);
      assert.equal(run.upstream.validateCalls().length, 2, 'a refused token is remembered');
      assert.deepEqual(JSON.parse(run.upstream.validateCalls()[0]?.body ?? '').tokens, [
        DEV_FRONTEND,
      ]);
      assert.equal(run.upstream.validateCalls()[0]?.headers.authorization, undefined);
    } finally {
      await run.close();
    }
  });

  it('stops accepting a token revoked upstream at the next revalidation', async () => {
    const run = await start({ tokenRevalidationInterval: 200 });
    try {
      await waitFor(() => run.proxy.environments.ready);
      assert.equal((await call(run, 'GET', '/api/frontend', PROD_FRONTEND)).status, 200);
      run.upstream.tokens.delete(PROD_FRONTEND);
      await waitFor(
        async () => (await call(run, 'GET', '/api/frontend', PROD_FRONTEND)).status === 403,
      );
    } finally {
      await run.close();
    }
  });

  it('answers 401 while the upstream cannot validate, and serves once it can', async () => {
    const run = await start();
    try {
      await waitFor(() => run.proxy.environments.ready);
      run.upstream.failing = true;
      const down = await call(run, 'GET', '/api/frontend', DEV_FRONTEND);
      assert.equal(down.status, 401);
      assert.equal(down.json().name, 'AuthenticationRequired');
      run.upstream.failing = false;
      assert.equal((await call(run, 'GET', '/api/frontend', DEV_FRONTEND)).status, 200);
    } finally {
      await run.close();
    }
  });
});

describe('environments brought in by client tokens', () => {
  it('starts syncing the environment of a validated client token, unless strictTokens', async () => {
    const dynamic = await start();
    try {
      await waitFor(() => dynamic.proxy.environments.ready);
      // Without strictTokens too, a frontend token of an environment not synced is refused
      // (troubleshooting: a client token of that environment brings it in).
      const notSynced = await call(dynamic, 'GET', '/api/frontend', STAGING_FRONTEND);
      assert.equal(notSynced.status, 403);
      assert.equal(notSynced.json().code, 'ENVIRONMENT_NOT_SERVED');
      assert.match(notSynced.json().details[0].message, /"staging"/);
      const features = await call(dynamic, 'GET', '/api/client/features', STAGING_CLIENT);
      assert.equal(features.status, 200);
      assert.deepEqual(
        features.json().features.map((f: { name: string }) => f.name),
        ['staging-only'],
      );
      assert.deepEqual(names(await call(dynamic, 'GET', '/api/frontend', STAGING_FRONTEND)), [
        'staging-only',
      ]);
    } finally {
      await dynamic.close();
    }
    const strict = await start({ strictTokens: true });
    try {
      await waitFor(() => strict.proxy.environments.ready);
      const refused = await call(strict, 'GET', '/api/client/features', STAGING_CLIENT);
      assert.equal(refused.status, 403);
      assert.match(refused.json().details[0].message, /"staging"/);
      assert.equal(strict.proxy.environments.get('staging'), undefined);
    } finally {
      await strict.close();
    }
  });

  it('stops syncing an environment once the client token that brought it in is revoked', async () => {
    const run = await start({ tokenRevalidationInterval: 200 });
    try {
      await waitFor(() => run.proxy.environments.ready);
      assert.equal((await call(run, 'GET', '/api/client/features', STAGING_CLIENT)).status, 200);
      assert.ok(run.proxy.environments.get('staging'));
      run.upstream.tokens.delete(STAGING_CLIENT);
      await waitFor(() => run.proxy.environments.get('staging') === undefined);
      assert.equal((await call(run, 'GET', '/api/client/features', STAGING_CLIENT)).status, 403);
      const polls = run.upstream.featureRequests().length;
      await new Promise((resolve) => setTimeout(resolve, 300));
      const staging = run.upstream
        .featureRequests()
        .slice(polls)
        .filter((request) => request.headers.authorization === STAGING_CLIENT);
      assert.deepEqual(staging, [], 'no more polls with the revoked token');
    } finally {
      await run.close();
    }
  });

  it('keeps serving every environment and token from the backup after a restart with the upstream down', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'flags-environments-'));
    try {
      const first = await start({ backupDir: dir });
      await waitFor(() => first.proxy.environments.ready);
      assert.equal((await call(first, 'GET', '/api/frontend', PROD_FRONTEND)).status, 200);
      assert.equal((await call(first, 'GET', '/api/client/features', STAGING_CLIENT)).status, 200);
      await waitFor(() => first.proxy.environments.get('staging')?.state.ready === true);
      await first.close();

      const down = edgeUpstream();
      down.failing = true;
      const second = await start({ backupDir: dir }, down);
      try {
        await waitFor(() => second.proxy.environments.ready);
        const prod = await call(second, 'GET', '/api/frontend', PROD_FRONTEND);
        assert.equal(prod.status, 200, 'the validated token is known from the backup');
        assert.deepEqual(names(prod), ['prod-billing', 'prod-default']);
        await waitFor(() => second.proxy.environments.get('staging')?.state.ready === true);
        const staging = await call(second, 'GET', '/api/client/features', STAGING_CLIENT);
        assert.equal(staging.status, 200);
      } finally {
        await second.close();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('becomes ready from a backup only once the validated tokens are read back too', async () => {
    const saved = new Map<string, unknown>();
    const memory = {
      get: async (key: string) => saved.get(key),
      set: async (key: string, value: unknown) => {
        saved.set(key, value);
      },
    };
    const first = await start({ storageProvider: memory } as ProxyOptions);
    await waitFor(() => first.proxy.environments.ready);
    assert.equal((await call(first, 'GET', '/api/frontend', PROD_FRONTEND)).status, 200);
    await waitFor(() => [...saved.keys()].some((key) => key.startsWith('flags-proxy-tokens-')));
    await first.close();

    const down = edgeUpstream();
    down.failing = true;
    // A store that gives the token backup back last: a request at readiness must find the token.
    const slow = {
      get: async (key: string) => {
        if (key.startsWith('flags-proxy-tokens-')) await new Promise((r) => setTimeout(r, 300));
        return saved.get(key);
      },
      set: async () => {},
    };
    const second = await start({ storageProvider: slow } as ProxyOptions, down);
    try {
      await waitFor(() => second.proxy.environments.ready);
      const prod = await call(second, 'GET', '/api/frontend', PROD_FRONTEND);
      assert.equal(prod.status, 200, prod.text);
      assert.deepEqual(names(prod), ['prod-billing', 'prod-default']);
    } finally {
      await second.close();
    }
  });

  it('serves a client token broader than the startup token once its own sync is in, never a part', async () => {
    const run = await start({ flagsApiToken: [BILLING_CLIENT] });
    try {
      await waitFor(() => run.proxy.environments.ready);
      const features = await call(run, 'GET', '/api/client/features', PROD_CLIENT);
      assert.equal(features.status, 200);
      assert.deepEqual(
        features
          .json()
          .features.map((f: { name: string }) => f.name)
          .sort(),
        ['prod-billing', 'prod-default', 'prod-off'],
      );
    } finally {
      await run.close();
    }
    const strict = await start({ flagsApiToken: [BILLING_CLIENT], strictTokens: true });
    try {
      await waitFor(() => strict.proxy.environments.ready);
      const refused = await call(strict, 'GET', '/api/client/features', PROD_CLIENT);
      assert.equal(refused.status, 403, refused.text);
      assert.match(refused.json().details[0].message, /projects/);
      const billing = await call(strict, 'GET', '/api/client/features', BILLING_CLIENT);
      assert.equal(billing.status, 200);
    } finally {
      await strict.close();
    }
  });

  it('keeps one environment served while the upstream refuses another’s startup token', async () => {
    const upstream = edgeUpstream();
    upstream.tokens.delete(PROD_CLIENT);
    const run = await start({}, upstream);
    try {
      await waitFor(() => run.proxy.environments.get('development')?.state.ready === true);
      // A token the upstream refuses never syncs: it does not hold up the environments that do.
      await waitFor(
        async () => (await call(run, 'GET', '/api/frontend', DEV_FRONTEND)).status === 200,
      );
      assert.equal((await call(run, 'GET', '/internal-backstage/ready')).status, 200);
      // Answered at once, saying why (not after the wait for a first sync, which says "yet").
      const refused = await call(run, 'GET', '/api/frontend', PROD_FRONTEND);
      assert.equal(refused.status, 503, refused.text);
      assert.match(refused.json().details[0].message, /refuses/);
      upstream.tokens.set(PROD_CLIENT, {
        type: 'client',
        environment: 'production',
        projects: ['*'],
      });
      await waitFor(
        async () => (await call(run, 'GET', '/api/frontend', PROD_FRONTEND)).status === 200,
      );
    } finally {
      await run.close();
    }
  });

  it('waits for every startup environment the upstream has not refused', async () => {
    const upstream = edgeUpstream();
    upstream.failing = true;
    const run = await start({}, upstream);
    try {
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal((await call(run, 'GET', '/internal-backstage/ready')).status, 503);
      assert.equal((await call(run, 'GET', '/api/frontend', DEV_FRONTEND)).status, 503);
      upstream.failing = false;
      await waitFor(
        async () => (await call(run, 'GET', '/internal-backstage/ready')).status === 200,
      );
    } finally {
      await run.close();
    }
  });
});
