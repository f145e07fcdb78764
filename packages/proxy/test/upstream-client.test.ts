import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, describe, it } from 'node:test';
import { loadConfig } from '@flags/proxy';
import { EnvironmentState } from '@flags/serving';
import { freePort } from '../../../test/helpers/processes.js';
import { createUpstreamClient, type UpstreamClient } from '../src/sync/http-client.js';
import { Poller } from '../src/sync/poller.js';
import { smallPayload } from './fixtures/small.js';
import { FakeUpstream } from './helpers/fake-upstream.js';
import { FaultUpstream, servePayload } from './helpers/fault-upstream.js';
import { ForwardProxy } from './helpers/forward-proxy.js';
import { call, type Running, startProxy, waitFor, withKey } from './helpers/proxy.js';
import { RecordingLogger } from './helpers/recording-logger.js';
import type { TlsMaterial } from './helpers/upstream-server.js';

/**
 * The proxy's upstream HTTP client (node:http/node:https): bodies, errors, timeouts, closing,
 * TLS verification and HTTP(S) forward proxies, all over real connections.
 */

// Throwaway test material: a self-signed certificate for 127.0.0.1/localhost, valid for 100 years,
// made with `openssl req -x509 -newkey rsa:2048 -nodes -days 36500 -subj '/CN=localhost'
// -addext 'subjectAltName=IP:127.0.0.1,DNS:localhost'`. It protects nothing.
const TLS: TlsMaterial = {
  key: readFileSync(new URL('./fixtures/tls-test-key.pem', import.meta.url)),
  cert: readFileSync(new URL('./fixtures/tls-test-cert.pem', import.meta.url)),
};

const GET = { method: 'GET', headers: {}, timeoutMs: 5000 } as const;

function errorOf(promise: Promise<unknown>): Promise<NodeJS.ErrnoException> {
  return promise.then(
    () => assert.fail('expected the request to fail'),
    (error: NodeJS.ErrnoException) => error,
  );
}

describe('upstream client', () => {
  const clients: UpstreamClient[] = [];
  const client = (rejectUnauthorized = true) => {
    const made = createUpstreamClient({ rejectUnauthorized });
    clients.push(made);
    return made;
  };
  after(() => Promise.all(clients.map((made) => made.close())));

  it('sends bodies with content-length and no accept-encoding, and reads UTF-8 split across chunks', async () => {
    const text = 'grüße 🎉 ñ';
    const bytes = Buffer.from(`{"name":"${text}"}`);
    const upstream = await new FaultUpstream((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      // The emoji's four bytes arrive in two chunks.
      const cut = bytes.indexOf(Buffer.from('🎉')) + 2;
      response.write(bytes.subarray(0, cut));
      setTimeout(() => response.end(bytes.subarray(cut)), 20);
    }).start();
    const recorder = await new FakeUpstream(smallPayload).start();
    try {
      const http = client();
      const answer = await http.request(`${upstream.url}/client/features`, GET);
      assert.equal(answer.status, 200);
      assert.equal(answer.headers['content-type'], 'application/json');
      assert.deepEqual(JSON.parse(await answer.text()), { name: text });

      const body = JSON.stringify({ appName: text });
      const posted = await http.request(`${recorder.url}/client/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
        timeoutMs: 5000,
      });
      assert.equal(posted.status, 202);
      await posted.dump();
      const received = recorder.requests.at(-1)!;
      assert.equal(received.method, 'POST');
      assert.equal(received.body, body);
      assert.equal(received.headers['content-length'], String(Buffer.byteLength(body)));
      assert.equal(received.headers['accept-encoding'], undefined);
    } finally {
      await upstream.stop();
      await recorder.stop();
    }
  });

  it('keeps the error code of a failed connection', async () => {
    const port = await freePort();
    const error = await errorOf(client().request(`http://127.0.0.1:${port}/api`, GET));
    assert.equal(error.code, 'ECONNREFUSED');
  });

  it('fails with ETIMEDOUT when no headers come in time, and drops the connection', async () => {
    const upstream = await new FaultUpstream(() => {}).start();
    try {
      const started = Date.now();
      const error = await errorOf(
        client().request(`${upstream.url}/client/features`, { ...GET, timeoutMs: 300 }),
      );
      const elapsed = Date.now() - started;
      assert.equal(error.code, 'ETIMEDOUT');
      assert.ok(elapsed >= 290, `failed after ${elapsed} ms`);
      await waitFor(() => upstream.openConnections === 0 && upstream.inFlight === 0);
    } finally {
      await upstream.stop();
    }
  });

  it('fails with ETIMEDOUT when the body stalls, and drops the connection', async () => {
    const upstream = await new FaultUpstream((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
      response.write('{"version":2,');
    }).start();
    try {
      const answer = await client().request(`${upstream.url}/client/features`, {
        ...GET,
        timeoutMs: 300,
      });
      assert.equal(answer.status, 200);
      const error = await errorOf(answer.text());
      assert.equal(error.code, 'ETIMEDOUT');
      await waitFor(() => upstream.openConnections === 0);
    } finally {
      await upstream.stop();
    }
  });

  it('reuses a kept-alive connection, and close() ends it and refuses later requests', async () => {
    const upstream = await new FakeUpstream(smallPayload).start();
    const http = createUpstreamClient({ rejectUnauthorized: true });
    try {
      for (let i = 0; i < 3; i++) {
        const answer = await http.request(`${upstream.url}/client/features`, GET);
        await answer.text();
      }
      assert.equal(upstream.openConnections, 1, 'one connection for three requests');
      await http.close();
      await waitFor(() => upstream.openConnections === 0);
      const error = await errorOf(http.request(`${upstream.url}/client/features`, GET));
      assert.equal(error.code, 'ERR_UPSTREAM_CLOSED');
    } finally {
      await http.close();
      await upstream.stop();
    }
  });

  it(
    'times out, and close() drops the connection, when a forward proxy never answers CONNECT',
    { timeout: 10_000 },
    async () => {
      const forward = await new ForwardProxy({ answerConnect: false }).start();
      try {
        const made = createUpstreamClient({
          rejectUnauthorized: true,
          httpsProxy: new URL(forward.url),
        });
        clients.push(made);
        const error = await errorOf(
          made.request('https://127.0.0.1:9/api/client/features', { ...GET, timeoutMs: 200 }),
        );
        assert.equal(error.code, 'ETIMEDOUT');
        assert.deepEqual(forward.tunnels, ['127.0.0.1:9']);
        await made.close();
        await waitFor(() => forward.openConnections === 0, 2000);
      } finally {
        await forward.stop();
      }
    },
  );

  it('checks the upstream certificate unless rejectUnauthorized is false', async () => {
    const upstream = await new FakeUpstream(smallPayload).useTls(TLS).start();
    try {
      assert.match(upstream.url, /^https:/);
      const error = await errorOf(client().request(`${upstream.url}/client/features`, GET));
      assert.equal(error.code, 'DEPTH_ZERO_SELF_SIGNED_CERT');
      const answer = await client(false).request(`${upstream.url}/client/features`, GET);
      assert.equal(answer.status, 200);
      assert.equal(JSON.parse(await answer.text()).features.length, smallPayload.features.length);
    } finally {
      await upstream.stop();
    }
  });
});

describe('poll timeout', () => {
  it('fails a poll after upstreamTimeoutMs (300 ms) when the upstream never answers, leaving no socket', async () => {
    const upstream = await new FaultUpstream(() => {}).start();
    const config = loadConfig(
      {},
      {
        flagsUrl: upstream.url,
        flagsApiToken: 't',
        clientKeys: ['k'],
        upstreamTimeoutMs: 300,
      },
    );
    const log = new RecordingLogger();
    const http = createUpstreamClient(config);
    const poller = new Poller(config, new EnvironmentState(), log, http);
    try {
      const started = Date.now();
      assert.equal(await poller.poll(), 'failed');
      const elapsed = Date.now() - started;
      // At least the timeout; far less than the ~1 s granularity undici's timers had.
      assert.ok(elapsed >= 290 && elapsed < 2000, `failed after ${elapsed} ms`);
      assert.equal(upstream.polls.length, 1);
      const failure = log.lines.find((line) => line.message === 'upstream features request failed');
      assert.match(JSON.stringify(failure?.data), /ETIMEDOUT/);
      await waitFor(() => upstream.openConnections === 0 && upstream.inFlight === 0);
      // A later poll works on a fresh connection.
      upstream.answer = servePayload(smallPayload, '"v1"');
      assert.equal(await poller.poll(), 'updated');
    } finally {
      await http.close();
      await upstream.stop();
    }
  });
});

describe('proxy over TLS and through forward proxies', () => {
  const running: Running[] = [];
  const proxies: ForwardProxy[] = [];
  after(async () => {
    await Promise.all(running.map((r) => r.close()));
    await Promise.all(proxies.map((p) => p.stop()));
  });

  async function forwardProxy(): Promise<ForwardProxy> {
    const proxy = await new ForwardProxy().start();
    proxies.push(proxy);
    return proxy;
  }

  async function serving(r: Running): Promise<void> {
    await r.proxy.poller.ready;
    const answer = await call(r, 'GET', '/proxy', { headers: withKey() });
    assert.equal(answer.status, 200);
    assert.ok(answer.json().toggles.length > 0);
  }

  /** Waits for the first failed sync and returns what was logged about it. */
  async function firstFailure(r: Running): Promise<string> {
    await waitFor(() =>
      r.log.lines.some((line) => line.message === 'upstream features request failed'),
    );
    const line = r.log.lines.find((l) => l.message === 'upstream features request failed');
    return JSON.stringify(line?.data);
  }

  it('syncs from an https upstream with a self-signed certificate when rejectUnauthorized is false', async () => {
    const r = await startProxy(
      smallPayload,
      { httpOptions: { rejectUnauthorized: false } },
      { upstream: (u) => u.useTls(TLS) },
    );
    running.push(r);
    assert.match(r.upstream.url, /^https:/);
    await serving(r);
  });

  it('does not become ready, and logs why, when the upstream certificate does not verify', async () => {
    const r = await startProxy(smallPayload, {}, { upstream: (u) => u.useTls(TLS) });
    running.push(r);
    assert.match(await firstFailure(r), /DEPTH_ZERO_SELF_SIGNED_CERT: self[- ]signed certificate/);
    assert.equal(r.proxy.state.ready, false);
    assert.equal((await call(r, 'GET', '/proxy/health')).status, 503);
    assert.equal(r.upstream.featureRequests().length, 0, 'no request got past the handshake');
  });

  it('sends http upstream requests through httpProxy as absolute-URI requests', async () => {
    const forward = await forwardProxy();
    const r = await startProxy(smallPayload, { httpOptions: { httpProxy: forward.url } });
    running.push(r);
    await serving(r);
    const features = `${r.upstream.url}/client/features`;
    assert.ok(
      forward.forwarded.some((uri) => uri.startsWith(features)),
      JSON.stringify(forward.forwarded),
    );
    // The forward proxy records a request before the upstream sees it.
    assert.ok(
      forward.forwarded.filter((uri) => uri.startsWith(features)).length >=
        r.upstream.featureRequests().length,
      'every poll went through the forward proxy',
    );
    assert.deepEqual(forward.tunnels, []);
  });

  it('tunnels https upstream requests through httpsProxy with CONNECT', async () => {
    const forward = await forwardProxy();
    const r = await startProxy(
      smallPayload,
      { httpOptions: { httpsProxy: forward.url, rejectUnauthorized: false } },
      { upstream: (u) => u.useTls(TLS) },
    );
    running.push(r);
    await serving(r);
    const authority = new URL(r.upstream.url).host;
    assert.ok(forward.tunnels.includes(authority), JSON.stringify(forward.tunnels));
    assert.deepEqual(forward.forwarded, []);
  });

  it('still verifies the upstream certificate inside a CONNECT tunnel', async () => {
    const forward = await forwardProxy();
    const r = await startProxy(
      smallPayload,
      { httpOptions: { httpsProxy: forward.url } },
      { upstream: (u) => u.useTls(TLS) },
    );
    running.push(r);
    assert.match(await firstFailure(r), /SELF_SIGNED/);
    assert.ok(forward.tunnels.includes(new URL(r.upstream.url).host));
    assert.equal(r.proxy.state.ready, false);
  });

  it('leaves http upstreams direct when only httpsProxy is set', async () => {
    const forward = await forwardProxy();
    const r = await startProxy(smallPayload, { httpOptions: { httpsProxy: forward.url } });
    running.push(r);
    await serving(r);
    assert.deepEqual(forward.forwarded, []);
    assert.deepEqual(forward.tunnels, []);
  });

  it('reaches the hosts NO_PROXY lists directly and the others through the forward proxy', async () => {
    const forward = await forwardProxy();
    const plain = await new FakeUpstream(smallPayload).start();
    const tls = await new FakeUpstream(smallPayload).useTls(TLS).start();
    try {
      const port = new URL(plain.url).port;
      // [NO_PROXY, host in the URL, through the forward proxy?]
      const cases: Array<[string, string, boolean]> = [
        ['127.0.0.1', '127.0.0.1', false],
        ['example.com, 127.0.0.0/8', '127.0.0.1', false],
        [`localhost:${port}`, 'localhost', false],
        ['.LOCALHOST', 'localhost', false],
        ['*', 'localhost', false],
        ['[::1],127.0.0.1', 'localhost', true],
        ['127.0.0.1:1', '127.0.0.1', true],
        ['10.0.0.0/8,example.com', '127.0.0.1', true],
        ['', '127.0.0.1', true],
      ];
      for (const [noProxy, host, proxied] of cases) {
        const config = loadConfig({
          FLAGS_URL: plain.url,
          FLAGS_API_TOKEN: 't',
          FLAGS_PROXY_CLIENT_KEYS: 'k',
          http_proxy: forward.url,
          NO_PROXY: noProxy,
        });
        const upstream = createUpstreamClient(config);
        try {
          const before = forward.forwarded.length;
          const answer = await upstream.request(`http://${host}:${port}/api/client/features`, GET);
          await answer.dump();
          assert.equal(forward.forwarded.length - before, proxied ? 1 : 0, `${noProxy} ${host}`);
        } finally {
          await upstream.close();
        }
      }
      // https: a listed host gets no CONNECT tunnel, the same request without NO_PROXY does.
      for (const [noProxy, tunnelled] of [
        ['127.0.0.1', false],
        ['', true],
      ] as const) {
        const upstream = createUpstreamClient({
          rejectUnauthorized: false,
          httpsProxy: new URL(forward.url),
          noProxy: noProxy === '' ? [] : [noProxy],
        });
        try {
          const before = forward.tunnels.length;
          const answer = await upstream.request(`${tls.url}/client/features`, GET);
          await answer.dump();
          assert.equal(forward.tunnels.length - before, tunnelled ? 1 : 0, `https ${noProxy}`);
        } finally {
          await upstream.close();
        }
      }
    } finally {
      await plain.stop();
      await tls.stop();
    }
  });
});
