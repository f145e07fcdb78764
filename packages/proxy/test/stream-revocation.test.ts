import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { createProxy, type ProxyApp } from '@flags/proxy';
import { EdgeUpstream, onFeature } from './helpers/edge-upstream.js';
import { type OpenedStream, openEventStream } from './helpers/event-stream-client.js';
import { call, waitFor } from './helpers/proxy.js';

// Open streams follow the key that opened them: when the upstream revokes a validated token (or
// narrows it), or the environment a stream reads is no longer served, the stream ends. The SDK
// then reconnects and is refused, as any request with that key is.

const SECRET = 'b'.repeat(32);
/** The proxy's own startup token: never validated, never revoked. */
const PROD_STARTUP = `*:production.startup-${SECRET}`;
/** Client tokens the proxy learns from requests (validated upstream). */
const PROD_CLIENT = `*:production.client-${SECRET}`;
const STAGING_CLIENT = `*:staging.client-${SECRET}`;
const PROD_FRONTEND = `*:production.frontend-${SECRET}`;
const STAGING_FRONTEND = `*:staging.frontend-${SECRET}`;
const CLIENT_KEY = `configured-client-key-${SECRET}`;

interface Run {
  readonly upstream: EdgeUpstream;
  readonly proxy: ProxyApp;
  readonly base: string;
  readonly streams: OpenedStream[];
  close(): Promise<void>;
}

async function start(): Promise<Run> {
  const upstream = new EdgeUpstream(
    new Map([
      ['production', { version: 2, features: [onFeature('prod-flag')] }],
      ['staging', { version: 2, features: [onFeature('staging-flag')] }],
    ]),
  );
  const tokens = [
    [PROD_STARTUP, 'client', 'production'],
    [PROD_CLIENT, 'client', 'production'],
    [STAGING_CLIENT, 'client', 'staging'],
    [PROD_FRONTEND, 'frontend', 'production'],
    [STAGING_FRONTEND, 'frontend', 'staging'],
  ] as const;
  for (const [token, type, environment] of tokens)
    upstream.tokens.set(token, { type, environment, projects: ['*'] });
  await upstream.start();
  const proxy = await createProxy({
    flagsUrl: upstream.url,
    flagsApiToken: [PROD_STARTUP],
    clientKeys: [CLIENT_KEY],
    refreshInterval: 50,
    metricsInterval: 0,
    tokenRevalidationInterval: 100,
    streamingKeepAliveMs: 100,
  });
  await proxy.app.listen({ port: 0, host: '127.0.0.1' });
  await waitFor(() => proxy.environments.ready);
  const streams: OpenedStream[] = [];
  return {
    upstream,
    proxy,
    base: `http://127.0.0.1:${(proxy.app.server.address() as AddressInfo).port}`,
    streams,
    async close() {
      for (const stream of streams) stream.close();
      await proxy.app.close();
      await upstream.stop();
    },
  };
}

async function clientStream(run: Run, token: string): Promise<OpenedStream> {
  const stream = await openEventStream(`${run.base}/api/client/streaming`, {
    authorization: token,
  });
  run.streams.push(stream);
  return stream;
}

/** The OFREP event stream a bulk answer to `key` points at. */
async function ofrepStreamUrl(run: Run, key: string): Promise<string> {
  const answer = await call(run.base, 'POST', '/ofrep/v1/evaluate/flags', {
    headers: { authorization: key, 'content-type': 'application/json' },
    body: JSON.stringify({ context: { userId: 'u1' } }),
  });
  assert.equal(answer.status, 200, answer.text);
  const [sse] = answer.json().eventStreams as Array<{ endpoint: { requestUri: string } }>;
  assert.ok(sse);
  return new URL(sse.endpoint.requestUri, run.base).href;
}

async function ofrepStream(run: Run, url: string): Promise<OpenedStream> {
  const stream = await openEventStream(url);
  run.streams.push(stream);
  return stream;
}

/** A stream still open after a revalidation or two (and still getting its keep-alives). */
async function staysOpen(stream: OpenedStream): Promise<void> {
  const seen = stream.comments.length;
  await waitFor(() => stream.comments.length >= seen + 3);
  assert.equal(stream.ended, false);
}

describe('streams after their key is revoked', () => {
  it('ends the client streams of a revoked token; others stay open; the token is refused', async () => {
    const run = await start();
    try {
      const revoked = await clientStream(run, PROD_CLIENT);
      const startup = await clientStream(run, PROD_STARTUP);
      assert.equal(revoked.status, 200);
      assert.equal(startup.status, 200);
      await waitFor(() => revoked.events.length === 1 && startup.events.length === 1);
      run.upstream.tokens.delete(PROD_CLIENT);
      await waitFor(() => revoked.ended);
      await staysOpen(startup);
      assert.equal((await clientStream(run, PROD_CLIENT)).status, 403);
    } finally {
      await run.close();
    }
  });

  it('ends the client streams of a token the upstream narrows to other projects', async () => {
    const run = await start();
    try {
      const narrowed = await clientStream(run, PROD_CLIENT);
      await waitFor(() => narrowed.events.length === 1);
      run.upstream.tokens.set(PROD_CLIENT, {
        type: 'client',
        environment: 'production',
        projects: ['billing'],
      });
      await waitFor(() => narrowed.ended);
      // Reconnected, it reads its new scope: nothing of project `default`.
      const again = await clientStream(run, PROD_CLIENT);
      assert.equal(again.status, 200);
      await waitFor(() => again.events.length === 1);
      assert.deepEqual(JSON.parse(again.events[0]?.data ?? '').events[0].features, []);
    } finally {
      await run.close();
    }
  });

  it('ends the OFREP streams of a revoked frontend token; its credentials are refused from then on', async () => {
    const run = await start();
    try {
      const revokedUrl = await ofrepStreamUrl(run, PROD_FRONTEND);
      const configuredUrl = await ofrepStreamUrl(run, CLIENT_KEY);
      const revoked = await ofrepStream(run, revokedUrl);
      const configured = await ofrepStream(run, configuredUrl);
      assert.equal(revoked.status, 200);
      assert.equal(configured.status, 200);
      run.upstream.tokens.delete(PROD_FRONTEND);
      await waitFor(() => revoked.ended);
      await staysOpen(configured);
      const refused = await ofrepStream(run, revokedUrl);
      assert.equal(refused.status, 401, refused.text);
    } finally {
      await run.close();
    }
  });

  it('ends the streams of an environment that is no longer served', async () => {
    const run = await start();
    try {
      // The staging client token brings staging in; the frontend token reads it.
      assert.equal(
        (
          await call(run.base, 'GET', '/api/client/features', {
            headers: { authorization: STAGING_CLIENT },
          })
        ).status,
        200,
      );
      await waitFor(async () => {
        const answer = await call(run.base, 'GET', '/api/frontend', {
          headers: { authorization: STAGING_FRONTEND },
        });
        return answer.status === 200;
      });
      const ofrep = await ofrepStream(run, await ofrepStreamUrl(run, STAGING_FRONTEND));
      const production = await ofrepStream(run, await ofrepStreamUrl(run, PROD_FRONTEND));
      assert.equal(ofrep.status, 200);
      // Revoking the only client token of staging stops serving it (the frontend token stays valid).
      run.upstream.tokens.delete(STAGING_CLIENT);
      await waitFor(() => run.proxy.environments.get('staging') === undefined);
      await waitFor(() => ofrep.ended);
      await staysOpen(production);
    } finally {
      await run.close();
    }
  });
});
