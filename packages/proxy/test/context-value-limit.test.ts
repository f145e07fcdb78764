// A context value longer than `maxContextValueLength` (PROXY_MAX_CONTEXT_VALUE_LENGTH) is not
// compared: anyone holding the public client key can send one, and gets the flags that do not look
// at it, a 200, never a 5xx.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ConfigError, createProxy, loadConfig, type ProxyApp } from '@flags/proxy';
import type { ClientFeatures } from '@flags/schemas';
import { FakeUpstream } from './helpers/fake-upstream.js';
import { API_TOKEN, CLIENT_KEY, waitFor } from './helpers/proxy.js';
import { RecordingLogger } from './helpers/recording-logger.js';

const payload: ClientFeatures = {
  version: 2,
  features: [
    { name: 'everyone', enabled: true, strategies: [{ name: 'default' }] },
    {
      name: 'example-users',
      enabled: true,
      strategies: [
        {
          name: 'default',
          constraints: [
            { contextName: 'email', operator: 'REGEX', value: '^[a-z.]+@example\\.com$' },
          ],
        },
      ],
    },
    {
      name: 'not-blocked',
      enabled: true,
      strategies: [
        {
          name: 'default',
          constraints: [{ contextName: 'email', operator: 'NOT_IN', values: ['blocked@x.org'] }],
        },
      ],
    },
  ],
};

const REQUIRED = {
  FLAGS_URL: 'http://127.0.0.1:4242/api',
  FLAGS_API_TOKEN: 'token',
  FLAGS_PROXY_CLIENT_KEYS: 'key',
};

const email = (length: number): string =>
  `${'a'.repeat(length - '@example.com'.length)}@example.com`;

describe('context values over the length limit', () => {
  let upstream: FakeUpstream;
  const proxies: ProxyApp[] = [];

  before(async () => {
    upstream = await new FakeUpstream(payload).start();
  });

  after(async () => {
    for (const proxy of proxies) await proxy.app.close();
    await upstream.stop();
  });

  async function proxy(env: Record<string, string> = {}): Promise<ProxyApp> {
    const created = await createProxy(
      {
        flagsUrl: upstream.url,
        flagsApiToken: API_TOKEN,
        clientKeys: [CLIENT_KEY],
        refreshInterval: 60_000,
        metricsInterval: 0,
        logger: new RecordingLogger(),
      },
      env,
    );
    proxies.push(created);
    await waitFor(() => created.state.ready);
    return created;
  }

  async function enabledFor(app: ProxyApp, value: string): Promise<string[]> {
    const response = await app.app.inject({
      url: `/proxy?properties[email]=${encodeURIComponent(value)}`,
      headers: { authorization: CLIENT_KEY },
    });
    assert.equal(response.statusCode, 200, response.body);
    return response.json().toggles.map((toggle: { name: string }) => toggle.name);
  }

  it('GET /proxy with an oversized property: 200, the flags comparing it off, the others on', async () => {
    const app = await proxy();
    assert.deepEqual(await enabledFor(app, email(4096)), [
      'everyone',
      'example-users',
      'not-blocked',
    ]);
    assert.deepEqual(await enabledFor(app, email(4097)), ['everyone']);
    assert.deepEqual(await enabledFor(app, email(12_000)), ['everyone']);
  });

  it('PROXY_MAX_CONTEXT_VALUE_LENGTH sets the limit', async () => {
    const app = await proxy({ PROXY_MAX_CONTEXT_VALUE_LENGTH: '100' });
    assert.equal(app.config.maxContextValueLength, 100);
    assert.deepEqual(await enabledFor(app, email(100)), [
      'everyone',
      'example-users',
      'not-blocked',
    ]);
    assert.deepEqual(await enabledFor(app, email(101)), ['everyone']);
  });

  it('defaults to 4096; a value that is not a positive whole number is a configuration error', () => {
    assert.equal(loadConfig(REQUIRED).maxContextValueLength, 4096);
    for (const bad of ['0', '-1', 'lots', '1.5']) {
      assert.throws(
        () => loadConfig({ ...REQUIRED, PROXY_MAX_CONTEXT_VALUE_LENGTH: bad }),
        (error) =>
          error instanceof ConfigError && /PROXY_MAX_CONTEXT_VALUE_LENGTH/.test(error.message),
        bad,
      );
    }
  });
});
