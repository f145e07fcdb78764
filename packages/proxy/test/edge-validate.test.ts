import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { createProxy, type ProxyApp } from '@flags/proxy';
import { MAX_TOKEN_LENGTH } from '@flags/schemas';
import { EdgeUpstream, onFeature } from './helpers/edge-upstream.js';
import { call, waitFor } from './helpers/proxy.js';

// `POST /edge/validate` on flags-proxy, as on Unleash Edge: a downstream Edge or proxy asks which
// of its callers' tokens it may accept, and this proxy answers from its own validation.

const SECRET = 'c'.repeat(32);
const DEV_CLIENT = `*:development.client-${SECRET}`;
const DEV_FRONTEND = `*:development.frontend-${SECRET}`;
const BILLING_FRONTEND = `billing:development.billing-${SECRET}`;
const ADMIN = `*:*.admin-${SECRET}`;

function edgeUpstream(): EdgeUpstream {
  const upstream = new EdgeUpstream(
    new Map([
      [
        'development',
        { version: 2, features: [onFeature('dev-flag'), onFeature('billing-flag', 'billing')] },
      ],
    ]),
  );
  upstream.tokens.set(DEV_CLIENT, { type: 'client', environment: 'development', projects: ['*'] });
  upstream.tokens.set(DEV_FRONTEND, {
    type: 'frontend',
    environment: 'development',
    projects: ['*'],
  });
  upstream.tokens.set(BILLING_FRONTEND, {
    type: 'frontend',
    environment: 'development',
    projects: ['billing'],
  });
  upstream.tokens.set(ADMIN, { type: 'admin', environment: '*', projects: ['*'] });
  return upstream;
}

async function proxyOf(flagsUrl: string): Promise<{ proxy: ProxyApp; base: string }> {
  const proxy = await createProxy({
    flagsUrl,
    flagsApiToken: [DEV_CLIENT],
    refreshInterval: 50,
    metricsInterval: 0,
  });
  await proxy.app.listen({ port: 0, host: '127.0.0.1' });
  await waitFor(() => proxy.environments.ready);
  return { proxy, base: `http://127.0.0.1:${(proxy.app.server.address() as AddressInfo).port}` };
}

const validate = (base: string, body: unknown) =>
  call(base, 'POST', '/edge/validate', {
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

describe('POST /edge/validate', () => {
  it('confirms the client and frontend tokens its upstream confirms, in the upstream’s shape', async () => {
    const upstream = edgeUpstream();
    await upstream.start();
    const { proxy, base } = await proxyOf(upstream.url);
    try {
      const unknown = `*:development.${'0'.repeat(40)}`;
      const answer = await validate(base, {
        tokens: [DEV_FRONTEND, BILLING_FRONTEND, unknown, ADMIN, 'not-a-token', DEV_FRONTEND],
      });
      assert.equal(answer.status, 200, answer.text);
      assert.deepEqual(answer.json(), {
        tokens: [
          { token: DEV_FRONTEND, type: 'frontend', environment: 'development', projects: ['*'] },
          {
            token: BILLING_FRONTEND,
            type: 'frontend',
            environment: 'development',
            projects: ['billing'],
          },
        ],
      });
      // The answers are the validator's own: asked again, the upstream is not.
      const calls = upstream.validateCalls().length;
      assert.equal((await validate(base, { tokens: [DEV_FRONTEND] })).json().tokens.length, 1);
      assert.equal(upstream.validateCalls().length, calls);
      // A token longer than any issued is left out as an unknown one (as unleash-server does, not a
      // 400 for the whole list), and the upstream is not asked about it (#40).
      const tooLong = `*:development.${'x'.repeat(MAX_TOKEN_LENGTH)}`;
      const withLong = await validate(base, { tokens: [tooLong, DEV_FRONTEND] });
      assert.equal(withLong.status, 200, withLong.text);
      assert.deepEqual(
        withLong.json().tokens.map((entry: { token: string }) => entry.token),
        [DEV_FRONTEND],
      );
      assert.equal(upstream.validateCalls().length, calls);
      // Bad requests change nothing and say why.
      for (const body of [{}, { tokens: [{}] }, { tokens: Array(501).fill('t') }]) {
        const refused = await validate(base, body);
        assert.equal(refused.status, 400, JSON.stringify(body));
        assert.equal(refused.json().name, 'BadDataError');
      }
    } finally {
      await proxy.app.close();
      await upstream.stop();
    }
  });

  it('lets a proxy behind it accept tokens it was not started with', async () => {
    const upstream = edgeUpstream();
    await upstream.start();
    const front = await proxyOf(upstream.url);
    const behind = await proxyOf(`${front.base}/api`);
    try {
      const toggles = async (token: string) => {
        const answer = await call(behind.base, 'GET', '/api/frontend', {
          headers: { authorization: token },
        });
        assert.equal(answer.status, 200, answer.text);
        return answer.json().toggles.map((toggle: { name: string }) => toggle.name);
      };
      assert.deepEqual(await toggles(DEV_FRONTEND), ['billing-flag', 'dev-flag']);
      assert.deepEqual(await toggles(BILLING_FRONTEND), ['billing-flag']);
      const refused = await call(behind.base, 'GET', '/api/frontend', {
        headers: { authorization: `*:development.${'1'.repeat(40)}` },
      });
      assert.equal(refused.status, 403);
    } finally {
      await behind.proxy.app.close();
      await front.proxy.app.close();
      await upstream.stop();
    }
  });
});
