import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { smallPayload } from './fixtures/small.js';
import {
  type Answer,
  API_TOKEN,
  CLIENT_KEY,
  call,
  type Running,
  startProxy,
  waitFor,
  withKey,
} from './helpers/proxy.js';
import { add, type Expected, plain, received } from './helpers/usage-counts.js';

/** Records, from `POST /proxy/all` answers (every flag), what the proxy must have counted. */
function countAll(expected: Expected, app: string, answer: Answer) {
  for (const toggle of answer.json().toggles) {
    add(
      expected,
      app,
      toggle.name,
      toggle.enabled,
      toggle.variant.enabled ? toggle.variant.name : undefined,
    );
  }
}

const ALL = (userId: string) => ({
  headers: withKey({ 'content-type': 'application/json' }),
  body: JSON.stringify({ context: { userId } }),
});

async function evaluateSome(run: Running, expected: Expected, app: string) {
  const names = run.proxy.state.current?.snapshot.names ?? [];
  // GET /proxy lists the enabled flags; every other flag was evaluated as disabled.
  for (const userId of ['123', '7']) {
    const answer = await call(run, 'GET', `/proxy?userId=${userId}`, { headers: withKey() });
    const enabled = new Map<string, string | undefined>(
      answer
        .json()
        .toggles.map((t: { name: string; variant: { enabled: boolean; name: string } }) => [
          t.name,
          t.variant.enabled ? t.variant.name : undefined,
        ]),
    );
    for (const name of names) add(expected, app, name, enabled.has(name), enabled.get(name));
  }
  countAll(expected, app, await call(run, 'POST', '/proxy/all', ALL('456')));
  const named = await call(run, 'POST', '/proxy', {
    headers: withKey({ 'content-type': 'application/json' }),
    body: JSON.stringify({ context: {}, toggles: ['simple-on', 'not-a-flag', 'with-variants'] }),
  });
  for (const toggle of named.json().toggles) {
    add(
      expected,
      app,
      toggle.name,
      toggle.enabled,
      toggle.variant.enabled ? toggle.variant.name : undefined,
    );
  }
  const ofrep = await call(run, 'POST', '/ofrep/v1/evaluate/flags/with-variants', {
    headers: withKey({ 'content-type': 'application/json' }),
    body: '{"context":{"targetingKey":"9"}}',
  });
  assert.equal(ofrep.status, 200);
  add(expected, app, 'with-variants', true, ofrep.json().variant);
}

async function report(run: Running, body: unknown, key = CLIENT_KEY): Promise<Answer> {
  return call(run, 'POST', '/proxy/client/metrics', {
    headers: { authorization: key, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

const BUCKET = { start: '2026-11-22T00:00:00.000Z', stop: '2026-11-22T00:01:00.000Z' };

describe('usage metrics', () => {
  it('counts every evaluation and adds frontend reports per app, exactly', async () => {
    const run = await startProxy(smallPayload, {
      metricsInterval: 3_600_000,
      enableAllEndpoint: true,
      flagsAppName: 'edge-proxy',
    });
    try {
      await run.proxy.poller.ready;
      const expected: Expected = new Map();
      await evaluateSome(run, expected, 'edge-proxy');
      const web = {
        appName: 'web-app',
        instanceId: 'browser-1',
        bucket: { ...BUCKET, toggles: { 'simple-on': { yes: 5, no: 2, variants: { blue: 3 } } } },
      };
      assert.equal((await report(run, web)).status, 200);
      assert.equal((await report(run, web)).text, 'OK');
      add(expected, 'web-app', 'simple-on', true, undefined, 10);
      add(expected, 'web-app', 'simple-on', false, undefined, 4);
      add(expected, 'web-app', 'simple-on', true, 'blue', 6);
      add(expected, 'web-app', 'simple-on', true, undefined, -6);
      // A report under the proxy's own name lands in the same bucket as its evaluations.
      const own = await call(run, 'POST', '/proxy/all/client/metrics', {
        headers: withKey({ 'content-type': 'application/json' }),
        body: JSON.stringify({
          appName: 'edge-proxy',
          instanceId: 'x',
          bucket: { ...BUCKET, toggles: { 'simple-off': { yes: 0, no: 4, variants: {} } } },
        }),
      });
      assert.equal(own.status, 200);
      add(expected, 'edge-proxy', 'simple-off', false, undefined, 4);

      await run.proxy.reporter.flush();
      const reports = run.upstream.acceptedMetrics();
      assert.equal(reports.length, 2, 'one report per application');
      assert.deepEqual(plain(received(reports)), plain(expected));
      // The Unleash client metrics body, with the proxy's identity.
      const mine = reports.find((body) => body.appName === 'edge-proxy');
      assert.equal(mine.instanceId, run.proxy.config.flagsInstanceId);
      assert.ok(Date.parse(mine.bucket.start) <= Date.parse(mine.bucket.stop));
      const request = run.upstream.requests.find((r) => r.path === '/api/client/metrics');
      assert.equal(request?.headers.authorization, API_TOKEN);
      assert.equal(request?.headers['content-type'], 'application/json');

      await run.proxy.reporter.flush();
      assert.equal(run.upstream.acceptedMetrics().length, 2, 'nothing left to send');
    } finally {
      await run.close();
    }
  });

  it('keeps the counts of a failed send and sends them once with the next one', async () => {
    const run = await startProxy(smallPayload, {
      metricsInterval: 3_600_000,
      enableAllEndpoint: true,
    });
    try {
      await run.proxy.poller.ready;
      const expected: Expected = new Map();
      await evaluateSome(run, expected, 'flags-proxy');
      run.upstream.reportStatus = 503;
      await run.proxy.reporter.flush();
      const refused = run.upstream.requests.filter((r) => r.path === '/api/client/metrics');
      assert.equal(refused.length, 1);
      assert.equal(refused[0]?.status, 503);
      assert.equal(run.upstream.acceptedMetrics().length, 0);

      // Counts made while the upstream is unreachable join the kept ones.
      await run.upstream.stop();
      countAll(expected, 'flags-proxy', await call(run, 'POST', '/proxy/all', ALL('1')));
      await run.proxy.reporter.flush();
      await run.upstream.restart();

      run.upstream.reportStatus = 202;
      countAll(expected, 'flags-proxy', await call(run, 'POST', '/proxy/all', ALL('2')));
      await run.proxy.reporter.flush();
      const reports = run.upstream.acceptedMetrics();
      assert.equal(reports.length, 1);
      assert.deepEqual(plain(received(reports)), plain(expected));
      const firstStart = Date.parse(JSON.parse(refused[0]?.body ?? '{}').bucket.start);
      assert.equal(
        Date.parse(reports[0].bucket.start),
        firstStart,
        'the kept bucket keeps its start',
      );
      await run.proxy.reporter.flush();
      assert.equal(run.upstream.acceptedMetrics().length, 1, 'nothing is sent twice');
    } finally {
      await run.close();
    }
  });

  it('sends on its own interval with the environment, and flushes on close', async () => {
    const run = await startProxy(smallPayload, {
      metricsInterval: 100,
      metricsJitter: 50,
      environment: 'production',
      enableAllEndpoint: true,
    });
    let closed = false;
    try {
      await run.proxy.poller.ready;
      const expected: Expected = new Map();
      countAll(expected, 'flags-proxy', await call(run, 'POST', '/proxy/all', ALL('1')));
      await waitFor(() => run.upstream.acceptedMetrics().length === 1);
      const [first] = run.upstream.acceptedMetrics();
      assert.equal(first.environment, 'production');
      assert.equal(first.appName, 'flags-proxy');
      countAll(expected, 'flags-proxy', await call(run, 'POST', '/proxy/all', ALL('2')));
      await run.proxy.app.close();
      closed = true;
      assert.deepEqual(plain(received(run.upstream.acceptedMetrics())), plain(expected));
    } finally {
      if (closed) await run.upstream.stop();
      else await run.close();
    }
  });

  it('validates reports, accepts server-side tokens, and forwards registrations under the SDK name', async () => {
    const run = await startProxy(smallPayload, {
      metricsInterval: 0,
      expServerSideSdkConfig: { tokens: ['server-token'] },
    });
    try {
      await run.proxy.poller.ready;
      const bad = await report(run, { some: 'blob' });
      assert.equal(bad.status, 400);
      assert.equal(bad.json().name, 'BadDataError');
      const negative = await report(run, {
        appName: 'a',
        bucket: { ...BUCKET, toggles: { x: { yes: -1, no: 0 } } },
      });
      assert.equal(negative.status, 400);
      const missingBucket = await report(run, { appName: 'a' });
      assert.equal(missingBucket.status, 400);
      const good = { appName: 'svc', bucket: { ...BUCKET, toggles: { x: { yes: 1, no: 0 } } } };
      assert.equal((await report(run, good, 'wrong')).status, 401);
      assert.equal((await report(run, good, 'server-token')).status, 200);

      const registered = await call(run, 'POST', '/proxy/client/register', {
        headers: { authorization: 'server-token', 'content-type': 'application/json' },
        body: JSON.stringify({
          appName: 'checkout-service',
          instanceId: 'pod-7',
          sdkVersion: 'unleash-node-sdk:6.12.1',
          strategies: ['default'],
          started: new Date().toISOString(),
          interval: 10000,
        }),
      });
      assert.equal(registered.status, 200);
      await waitFor(() =>
        run.upstream.registrations().some((body) => body.appName === 'checkout-service'),
      );
      const forwarded = run.upstream
        .registrations()
        .find((body) => body.appName === 'checkout-service');
      assert.equal(forwarded.instanceId, 'pod-7');
      assert.equal(forwarded.sdkVersion, 'unleash-node-sdk:6.12.1');
      assert.equal(
        (
          await call(run, 'POST', '/proxy/client/register', {
            headers: withKey({ 'content-type': 'application/json' }),
            body: '{"instanceId":"no-app"}',
          })
        ).status,
        400,
      );

      // metricsInterval 0: nothing is ever sent upstream.
      await run.proxy.reporter.flush();
      await new Promise((resolve) => setTimeout(resolve, 100));
      assert.equal(run.upstream.requests.filter((r) => r.path === '/api/client/metrics').length, 0);
    } finally {
      await run.close();
    }
  });
});

describe('registrations and reports with the public client key', () => {
  const registration = (appName: string, instanceId: string) =>
    JSON.stringify({
      appName,
      instanceId,
      sdkVersion: 'unleash-client-js:3.8.2',
      strategies: ['default'],
      started: new Date().toISOString(),
      interval: 30000,
    });

  it('never forwards a client-key registration as a client instance; its app is reported in the proxy’s aggregated data', async () => {
    const run = await startProxy(smallPayload, {
      metricsInterval: 3_600_000,
      expServerSideSdkConfig: { tokens: ['server-token'] },
    });
    try {
      await run.proxy.poller.ready;
      const browser = await call(run, 'POST', '/proxy/client/register', {
        headers: withKey({ 'content-type': 'application/json' }),
        body: registration('browser-app', 'browser-1'),
      });
      assert.equal(browser.status, 200);
      assert.equal(browser.text, 'OK');
      // A server-side token is a secret of the operator's: its SDK is registered as itself.
      const server = await call(run, 'POST', '/proxy/client/register', {
        headers: { authorization: 'server-token', 'content-type': 'application/json' },
        body: registration('checkout-service', 'pod-7'),
      });
      assert.equal(server.status, 200);
      await waitFor(() =>
        run.upstream.registrations().some((body) => body.appName === 'checkout-service'),
      );
      await new Promise((resolve) => setTimeout(resolve, 100));
      assert.deepEqual(
        run.upstream
          .registrations()
          .map((body) => body.appName)
          .sort(),
        ['checkout-service', 'flags-proxy'],
        'only the proxy itself and the server-side SDK are registered upstream',
      );

      await run.proxy.reporter.flush();
      const reports = run.upstream.acceptedMetrics();
      const folded = reports.find((body) => body.appName === 'browser-app');
      assert.ok(folded, 'the browser app is reported with the proxy’s next metrics');
      assert.equal(folded.instanceId, run.proxy.config.flagsInstanceId);
      assert.match(folded.sdkVersion, /^flags-proxy:/);
      assert.deepEqual(folded.bucket.toggles, {});
      assert.ok(!JSON.stringify(reports).includes('browser-1'), 'no browser instance upstream');
      await run.proxy.reporter.flush();
      assert.equal(
        run.upstream.acceptedMetrics().filter((body) => body.appName === 'browser-app').length,
        1,
        'announced once, not on every send',
      );
    } finally {
      await run.close();
    }
  });

  it('limits registrations and reports per client address (429 JSON error), after the key check', async () => {
    const run = await startProxy(smallPayload, {
      reportsPerMinute: 3,
      trustProxy: true,
      metricsInterval: 3_600_000,
    });
    const from = (ip: string, key = CLIENT_KEY) => ({
      authorization: key,
      'content-type': 'application/json',
      'x-forwarded-for': ip,
    });
    const metrics = JSON.stringify({ appName: 'web', bucket: { ...BUCKET, toggles: {} } });
    try {
      await run.proxy.poller.ready;
      // One budget for the three routes.
      const accepted = [
        await call(run, 'POST', '/proxy/client/metrics', {
          headers: from('10.0.0.1'),
          body: metrics,
        }),
        await call(run, 'POST', '/proxy/all/client/metrics', {
          headers: from('10.0.0.1'),
          body: metrics,
        }),
        await call(run, 'POST', '/proxy/client/register', {
          headers: from('10.0.0.1'),
          body: registration('web', 'b-1'),
        }),
      ];
      assert.deepEqual(
        accepted.map((answer) => answer.status),
        [200, 200, 200],
      );
      for (const [path, body] of [
        ['/proxy/client/metrics', metrics],
        ['/proxy/all/client/metrics', metrics],
        ['/proxy/client/register', registration('web', 'b-1')],
      ] as const) {
        const limited = await call(run, 'POST', path, { headers: from('10.0.0.1'), body });
        assert.equal(limited.status, 429, path);
        assert.equal(limited.headers['content-type'], 'application/json; charset=utf-8');
        const error = limited.json();
        assert.equal(error.name, 'RateLimitError');
        assert.equal(typeof error.message, 'string');
        assert.match(error.details[0].message, /retry in/);
        assert.ok(Number(limited.headers['retry-after']) > 0);
      }
      // The key is checked first; other addresses and the evaluation routes are not limited.
      const wrongKey = await call(run, 'POST', '/proxy/client/metrics', {
        headers: from('10.0.0.1', 'wrong'),
        body: metrics,
      });
      assert.equal(wrongKey.status, 401);
      const other = await call(run, 'POST', '/proxy/client/metrics', {
        headers: from('10.0.0.2'),
        body: metrics,
      });
      assert.equal(other.status, 200);
      for (let i = 0; i < 5; i++) {
        const evaluation = await call(run, 'GET', '/proxy', {
          headers: from('10.0.0.1'),
        });
        assert.equal(evaluation.status, 200);
      }
    } finally {
      await run.close();
    }
  });

  it('says once, when the limit is reached through a load balancer trustProxy does not name, how to fix it', async () => {
    const run = await startProxy(smallPayload, { reportsPerMinute: 1, metricsInterval: 3_600_000 });
    const metrics = JSON.stringify({ appName: 'web', bucket: { ...BUCKET, toggles: {} } });
    const send = (headers: Record<string, string> = {}) =>
      call(run, 'POST', '/proxy/client/metrics', {
        headers: { authorization: CLIENT_KEY, 'content-type': 'application/json', ...headers },
        body: metrics,
      });
    const warnings = () =>
      run.log.lines.filter((line) => line.level === 'warn' && /TRUST_PROXY/.test(line.message));
    try {
      await run.proxy.poller.ready;
      assert.equal((await send()).status, 200);
      assert.equal((await send()).status, 429);
      assert.equal(warnings().length, 0, 'a caller of its own: nothing to say');
      for (let i = 0; i < 3; i++)
        assert.equal((await send({ 'x-forwarded-for': `203.0.113.${i}` })).status, 429);
      assert.equal(warnings().length, 1);
    } finally {
      await run.close();
    }
  });

  it('has no limit with reportsPerMinute 0', async () => {
    const run = await startProxy(smallPayload, { reportsPerMinute: 0, metricsInterval: 0 });
    try {
      await run.proxy.poller.ready;
      for (let i = 0; i < 5; i++) {
        const answer = await report(run, { appName: 'web', bucket: { ...BUCKET, toggles: {} } });
        assert.equal(answer.status, 200);
      }
    } finally {
      await run.close();
    }
  });
});
