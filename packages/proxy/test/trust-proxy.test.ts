// Issue #40 (LOW): `TRUST_PROXY=true` believes any sender's `X-Forwarded-For`, so a spoofed
// header passed `DENY_LIST` and the report rate limit, without a word. A hop count trusts the
// load balancer in front and nothing a caller writes further left; `true` gets a warning at start.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createProxy, loadConfig, type ProxyApp } from '@flags/proxy';
import { smallPayload } from './fixtures/small.js';
import { FakeUpstream } from './helpers/fake-upstream.js';
import { API_TOKEN, CLIENT_KEY, waitFor } from './helpers/proxy.js';
import { RecordingLogger } from './helpers/recording-logger.js';

const REQUIRED = {
  FLAGS_URL: 'http://upstream.test/api',
  FLAGS_API_TOKEN: 'token',
  FLAGS_PROXY_CLIENT_KEYS: 'key',
};

async function withProxy(
  env: Record<string, string>,
  use: (proxy: ProxyApp, log: RecordingLogger) => Promise<void>,
): Promise<void> {
  const upstream = new FakeUpstream(smallPayload);
  await upstream.start();
  const log = new RecordingLogger();
  const proxy = await createProxy(
    {
      flagsUrl: upstream.url,
      flagsApiToken: API_TOKEN,
      clientKeys: [CLIENT_KEY],
      refreshInterval: 50,
      logger: log,
    },
    env,
  );
  try {
    await waitFor(() => proxy.environments.ready);
    await use(proxy, log);
  } finally {
    await proxy.app.close();
    await upstream.stop();
  }
}

const trustWarnings = (log: RecordingLogger) =>
  log.lines.filter((line) => line.level === 'warn' && /TRUST_PROXY/.test(line.message));

describe('trustProxy', () => {
  it('reads a hop count from TRUST_PROXY', () => {
    assert.equal(loadConfig({ ...REQUIRED, TRUST_PROXY: '1' }).trustProxy, 1);
    assert.equal(loadConfig({ ...REQUIRED, TRUST_PROXY: ' 2 ' }).trustProxy, 2);
    assert.deepEqual(loadConfig({ ...REQUIRED, TRUST_PROXY: '10.0.0.0/8' }).trustProxy, [
      '10.0.0.0/8',
    ]);
  });

  it('trusts one hop: a spoofed address further left passes neither DENY_LIST nor the report limit', async () => {
    // The caller really is 203.0.113.7 (denied); the load balancer at 10.0.0.1 appends it.
    const env = {
      TRUST_PROXY: '1',
      DENY_LIST: '203.0.113.7',
      PROXY_REPORT_RATE_LIMIT_PER_MINUTE: '2',
    };
    await withProxy(env, async (proxy) => {
      const through = (forwardedFor: string, method: 'GET' | 'POST' = 'GET', url = '/proxy') =>
        proxy.app.inject({
          method,
          url,
          remoteAddress: '10.0.0.1',
          headers: {
            authorization: CLIENT_KEY,
            'content-type': 'application/json',
            'x-forwarded-for': forwardedFor,
          },
          ...(method === 'POST' ? { payload: { appName: 'a', instanceId: 'i', bucket } } : {}),
        });
      assert.equal((await through('198.51.100.1, 203.0.113.7')).statusCode, 403);
      assert.equal((await through('203.0.113.8')).statusCode, 200);
      // Three reports from 203.0.113.8, each claiming another address further left: one budget.
      const statuses = [];
      for (const spoofed of ['198.51.100.1', '198.51.100.2', '198.51.100.3']) {
        const answer = await through(`${spoofed}, 203.0.113.8`, 'POST', '/proxy/client/metrics');
        statuses.push(answer.statusCode);
      }
      assert.deepEqual(statuses, [200, 200, 429]);
    });
  });

  it('warns once at start when it trusts every sender, saying what to set instead', async () => {
    await withProxy({ TRUST_PROXY: 'true' }, async (_proxy, log) => {
      const warnings = trustWarnings(log);
      assert.equal(warnings.length, 1, log.text());
      assert.match(warnings[0]?.message ?? '', /every sender/);
      assert.match(warnings[0]?.message ?? '', /addresses|CIDR/);
      assert.match(warnings[0]?.message ?? '', /hop|number of proxies/);
    });
    const trustingSome: Record<string, string>[] = [
      { TRUST_PROXY: '1' },
      { TRUST_PROXY: '10.0.0.1' },
      {},
    ];
    for (const trusted of trustingSome) {
      await withProxy(trusted, async (_proxy, log) => {
        assert.deepEqual(trustWarnings(log), [], JSON.stringify(trusted));
      });
    }
  });
});

const bucket = {
  start: '2026-11-22T00:00:00.000Z',
  stop: '2026-11-22T00:01:00.000Z',
  toggles: {},
};
