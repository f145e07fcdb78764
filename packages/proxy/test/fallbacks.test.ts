import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { StorageProvider } from '@flags/proxy';
import type { ClientFeatures } from '@flags/schemas';
import { smallPayload } from './fixtures/small.js';
import { FakeUpstream } from './helpers/fake-upstream.js';
import { type Answer, call, startProxy, waitFor, withKey } from './helpers/proxy.js';

const names = (answer: Answer): string[] =>
  answer.json().toggles.map((toggle: { name: string }) => toggle.name);

class MemoryStorage implements StorageProvider {
  readonly data = new Map<string, ClientFeatures>();
  async get(key: string) {
    return this.data.get(key);
  }
  async set(key: string, value: ClientFeatures) {
    this.data.set(key, value);
  }
}

async function deadUpstreamUrl(): Promise<string> {
  const upstream = await new FakeUpstream(smallPayload).start();
  await upstream.stop();
  return upstream.url;
}

describe('starting while the upstream is down', () => {
  it('saves every snapshot to the storage provider and serves the saved one on the next start', async () => {
    const storage = new MemoryStorage();
    const first = await startProxy(smallPayload, { storageProvider: storage });
    try {
      await first.proxy.poller.ready;
      await waitFor(() => storage.data.size === 1);
    } finally {
      await first.close();
    }
    const second = await startProxy(smallPayload, {
      storageProvider: storage,
      flagsUrl: await deadUpstreamUrl(),
    });
    try {
      await second.proxy.poller.ready;
      assert.equal((await call(second, 'GET', '/proxy/health')).status, 200);
      assert.ok(
        names(await call(second, 'GET', '/proxy', { headers: withKey() })).includes('simple-on'),
      );
    } finally {
      await second.close();
    }
  });

  it('serves the bootstrap payload (fetched with its Authorization) until the first sync', async () => {
    const bootstrap = await new FakeUpstream({
      version: 2,
      features: [{ name: 'from-bootstrap', enabled: true, strategies: [{ name: 'default' }] }],
    }).start();
    const run = await startProxy(smallPayload, {
      flagsUrl: await deadUpstreamUrl(),
      expBootstrap: {
        url: `${bootstrap.url}/client/features`,
        urlHeaders: { Authorization: 'boot-secret' },
      },
    });
    try {
      await run.proxy.poller.ready;
      assert.deepEqual(names(await call(run, 'GET', '/proxy', { headers: withKey() })), [
        'from-bootstrap',
      ]);
      assert.equal(bootstrap.featureRequests()[0]?.headers.authorization, 'boot-secret');
    } finally {
      await run.close();
      await bootstrap.stop();
    }
  });
});
