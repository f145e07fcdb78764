import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '@flags/proxy';
import type { ClientFeature, ClientFeatures } from '@flags/schemas';
import { smallPayload } from './fixtures/small.js';
import { type Answer, call, startProxy, waitFor, withKey } from './helpers/proxy.js';

const payload = (features: ClientFeature[]): ClientFeatures => ({ version: 2, features });

const json = { 'content-type': 'application/json' };

function toggleNames(answer: Answer): string[] {
  return answer.json().toggles.map((toggle: { name: string }) => toggle.name);
}

describe('answer cache', () => {
  it('sends the kept answer again for the same context and still counts every evaluation', async () => {
    const run = await startProxy(smallPayload, {
      metricsInterval: 3_600_000,
      enableAllEndpoint: true,
    });
    try {
      await run.proxy.poller.ready;
      const answers: Answer[] = [];
      for (let i = 0; i < 3; i++) {
        answers.push(await call(run, 'GET', '/proxy?userId=123', { headers: withKey() }));
        answers.push(
          await call(run, 'POST', '/proxy', {
            headers: withKey(json),
            body: JSON.stringify({ context: { userId: '123' } }),
          }),
        );
      }
      const first = answers[0] as Answer;
      assert.equal(first.status, 200);
      for (const answer of answers) {
        assert.equal(answer.text, first.text);
        assert.equal(answer.headers.etag, first.headers.etag);
      }
      // Kept by the request as sent: one answer for the query, one for the body, one body for both.
      assert.equal(run.proxy.state.current?.answers?.size, 2);
      assert.equal(run.proxy.state.current?.answers?.bodyCount, 1);
      const notModified = await call(run, 'GET', '/proxy?userId=123', {
        headers: withKey({ 'if-none-match': String(first.headers.etag) }),
      });
      assert.equal(notModified.status, 304);
      // Another context gets its own answer, kept only once it is asked for a second time.
      const other = await call(run, 'GET', '/proxy?userId=7', { headers: withKey() });
      assert.ok(toggleNames(first).includes('user-123'));
      assert.ok(!toggleNames(other).includes('user-123'));
      assert.equal(run.proxy.state.current?.answers?.size, 2);
      // /proxy/all lists every flag: an answer of its own for the same context.
      const all = await call(run, 'GET', '/proxy/all?userId=7', { headers: withKey() });
      const allAgain = await call(run, 'GET', '/proxy/all?userId=7', { headers: withKey() });
      assert.equal(allAgain.text, all.text);
      assert.deepEqual(toggleNames(all), run.proxy.state.current?.snapshot.names);
      assert.equal(run.proxy.state.current?.answers?.size, 3);

      await run.proxy.reporter.flush();
      const toggles = run.upstream
        .acceptedMetrics()
        .map((report) => report.bucket.toggles)
        .reduce((all, bucket) => Object.assign(all, bucket), {});
      const enabled = new Set(toggleNames(first));
      const others = new Set(toggleNames(other));
      for (const name of run.proxy.state.current?.snapshot.names ?? []) {
        // 7 answers for userId 123 (the 304 evaluated too), 3 for userId 7.
        const yes = (enabled.has(name) ? 7 : 0) + (others.has(name) ? 3 : 0);
        assert.equal(toggles[name]?.yes ?? 0, yes, `${name} yes`);
        assert.equal(toggles[name]?.no ?? 0, 10 - yes, `${name} no`);
      }
      assert.deepEqual(toggles['with-variants'].variants, { blue: 10 });
    } finally {
      await run.close();
    }
  });

  it('keeps answers by request and client address, and only answers that were sent', async () => {
    // The caller's own remoteAddress counts (as in Unleash Proxy) to test the cache with it too.
    const run = await startProxy(smallPayload, {
      trustProxy: true,
      ignoreCallerRemoteAddress: false,
    });
    const from = (ip: string, headers: Record<string, string> = {}) =>
      withKey({ 'x-forwarded-for': ip, ...headers });
    try {
      await run.proxy.poller.ready;
      // from-10 is on for 10.1.2.3 only: the same request from two addresses differs.
      for (let i = 0; i < 2; i++) {
        for (const [ip, on] of [
          ['10.1.2.3', true],
          ['10.9.9.9', false],
        ] as const) {
          const query = await call(run, 'GET', '/proxy?userId=u', { headers: from(ip) });
          const body = await call(run, 'POST', '/proxy', {
            headers: from(ip, json),
            body: '{"context":{"userId":"u"}}',
          });
          const empty = await call(run, 'POST', '/proxy', { headers: from(ip) });
          for (const answer of [query, body, empty])
            assert.equal(toggleNames(answer).includes('from-10'), on, `${ip} ${answer.text}`);
          assert.equal(query.text, body.text);
        }
      }
      assert.equal(run.proxy.state.current?.answers?.size, 6);
      // A caller's own remoteAddress wins over the client's, from the cache too (with
      // ignoreCallerRemoteAddress off; headers.test.ts and http.test.ts test it on).
      for (const ip of ['10.9.9.9', '10.1.2.3', '10.9.9.9']) {
        const own = await call(run, 'GET', '/proxy?remoteAddress=10.1.2.3', {
          headers: from(ip),
        });
        assert.ok(toggleNames(own).includes('from-10'));
      }
      // Another spelling of one context is another entry with the same answer.
      const first = await call(run, 'GET', '/proxy?userId=123&sessionId=s', {
        headers: from('10.9.9.9'),
      });
      const second = await call(run, 'GET', '/proxy?sessionId=s&userId=123', {
        headers: from('10.9.9.9'),
      });
      assert.equal(second.text, first.text);
      assert.equal(second.headers.etag, first.headers.etag);
      const kept = run.proxy.state.current?.answers?.size ?? 0;
      // Named toggles, refused bodies and errors are never kept, so they are checked every time.
      for (let i = 0; i < 2; i++) {
        const named = await call(run, 'POST', '/proxy', {
          headers: from('10.9.9.9', json),
          body: '{"toggles":["simple-on","nope"]}',
        });
        assert.deepEqual(toggleNames(named), ['simple-on', 'nope']);
        for (const [body, status] of [
          ['{"context":', 400],
          ['{"__proto__":{"x":1}}', 400],
          ['{"context":"u"}', 400],
        ] as const) {
          const refused = await call(run, 'POST', '/proxy', {
            headers: from('10.9.9.9', json),
            body,
          });
          assert.equal(refused.status, status, body);
          assert.equal(refused.json().name, 'BadDataError');
        }
        const repeated = await call(run, 'GET', '/proxy?userId=a&userId=b', {
          headers: from('10.9.9.9'),
        });
        assert.equal(repeated.status, 400);
      }
      assert.equal(run.proxy.state.current?.answers?.size, kept);
    } finally {
      await run.close();
    }
  });

  it('keeps no answer that drew a random number, and none past the date a constraint flips', async () => {
    // Set again with the second payload: the date must lie after the coin's hundred requests.
    let soon = new Date(Date.now() + 60_000).toISOString();
    const run = await startProxy(
      payload([
        {
          name: 'coin',
          enabled: true,
          strategies: [
            {
              name: 'flexibleRollout',
              parameters: { rollout: '50', stickiness: 'random', groupId: 'coin' },
            },
          ],
        },
        {
          name: 'until-soon',
          enabled: true,
          strategies: [
            {
              name: 'default',
              constraints: [{ contextName: 'currentTime', operator: 'DATE_BEFORE', value: soon }],
            },
          ],
        },
      ]),
    );
    try {
      await run.proxy.poller.ready;
      const seen = new Set<boolean>();
      for (let i = 0; i < 100; i++) {
        const answer = await call(run, 'GET', '/proxy?userId=u', { headers: withKey() });
        seen.add(toggleNames(answer).includes('coin'));
      }
      assert.deepEqual([...seen].sort(), [false, true], 'the coin lands both ways');
      assert.equal(run.proxy.state.current?.answers?.size, 0);

      // Without the coin, the answer holds until the date passes.
      soon = new Date(Date.now() + 4000).toISOString();
      run.upstream.setPayload(
        payload([
          {
            name: 'until-soon',
            enabled: true,
            strategies: [
              {
                name: 'default',
                constraints: [{ contextName: 'currentTime', operator: 'DATE_BEFORE', value: soon }],
              },
            ],
          },
        ]),
      );
      await waitFor(() => run.proxy.state.current?.snapshot.names.length === 1);
      for (let i = 0; i < 3; i++) {
        const before = await call(run, 'GET', '/proxy?userId=u', { headers: withKey() });
        assert.deepEqual(toggleNames(before), ['until-soon']);
      }
      assert.equal(run.proxy.state.current?.answers?.size, 1);
      await waitFor(() => Date.now() > Date.parse(soon) + 10, 8000);
      const after = await call(run, 'GET', '/proxy?userId=u', { headers: withKey() });
      assert.deepEqual(toggleNames(after), []);
      assert.equal(run.proxy.state.current?.answers?.size, 1);
      // A context that names its own time: kept (from its second request), with its own answer.
      for (let i = 0; i < 2; i++) {
        const at = await call(run, 'GET', `/proxy?userId=u&currentTime=2020-01-01T00:00:00Z`, {
          headers: withKey(),
        });
        assert.deepEqual(toggleNames(at), ['until-soon']);
      }
      assert.equal(run.proxy.state.current?.answers?.size, 2);
    } finally {
      await run.close();
    }
  });

  it('starts afresh with every new snapshot', async () => {
    const flag = (enabled: boolean): ClientFeature => ({
      name: 'switch',
      enabled,
      strategies: [{ name: 'default' }],
    });
    const run = await startProxy(payload([flag(true)]));
    try {
      await run.proxy.poller.ready;
      for (let i = 0; i < 2; i++) {
        const on = await call(run, 'GET', '/proxy?userId=u', { headers: withKey() });
        assert.deepEqual(toggleNames(on), ['switch']);
      }
      assert.equal(run.proxy.state.current?.answers?.size, 1);
      run.upstream.setPayload({ ...payload([flag(false)]), version: 3 } as ClientFeatures);
      await waitFor(async () => {
        const answer = await call(run, 'GET', '/proxy?userId=u', { headers: withKey() });
        return toggleNames(answer).length === 0;
      });
    } finally {
      await run.close();
    }
  });

  it('is off with answerCacheBytes 0 or with context enrichers, and validates its setting', async () => {
    const off = await startProxy(smallPayload, { answerCacheBytes: 0 });
    try {
      await off.proxy.poller.ready;
      const answer = await call(off, 'GET', '/proxy?userId=123', { headers: withKey() });
      assert.ok(toggleNames(answer).includes('user-123'));
      assert.equal(off.proxy.state.current?.answers, undefined);
    } finally {
      await off.close();
    }
    const enriched = await startProxy(smallPayload, {
      expCustomEnrichers: [(context) => ({ ...context, userId: '123' })],
    });
    try {
      await enriched.proxy.poller.ready;
      const answer = await call(enriched, 'GET', '/proxy', { headers: withKey() });
      assert.ok(toggleNames(answer).includes('user-123'));
      assert.equal(enriched.proxy.state.current?.answers, undefined);
    } finally {
      await enriched.close();
    }
    const required = { FLAGS_URL: 'http://upstream/api', FLAGS_API_TOKEN: 't' };
    const env = { ...required, FLAGS_PROXY_CLIENT_KEYS: 'k' };
    assert.equal(loadConfig(env).answerCacheBytes, 16 * 1024 * 1024);
    assert.equal(loadConfig({ ...env, PROXY_ANSWER_CACHE_BYTES: '0' }).answerCacheBytes, 0);
    assert.throws(
      () => loadConfig({ ...env, PROXY_ANSWER_CACHE_BYTES: '-1' }),
      (error) => error instanceof ConfigError && /PROXY_ANSWER_CACHE_BYTES/.test(error.message),
    );
  });

  it('keeps no answer for contexts seen once, and keeps recurring ones from their second request', async () => {
    const run = await startProxy(smallPayload, { metricsInterval: 3_600_000 });
    try {
      await run.proxy.poller.ready;
      // Browsers each with a session of their own: nothing is kept, however many there are.
      const once = new Map<string, Answer>();
      for (let i = 0; i < 300; i++) {
        const path = `/proxy?userId=${i % 20}&sessionId=session-${i}`;
        once.set(path, await call(run, 'GET', path, { headers: withKey() }));
      }
      assert.equal(run.proxy.state.current?.answers?.size, 0);
      assert.equal(run.proxy.state.current?.answers?.bodyCount, 0);
      // A context asked for again is kept from then on and sent as kept: the same answer.
      const recurring = '/proxy?userId=3&sessionId=session-3';
      for (let i = 0; i < 3; i++) {
        const again = await call(run, 'GET', recurring, { headers: withKey() });
        assert.equal(again.text, once.get(recurring)?.text);
        assert.equal(again.headers.etag, once.get(recurring)?.headers.etag);
      }
      assert.equal(run.proxy.state.current?.answers?.size, 1);
      // POST bodies go through the same door.
      const body = JSON.stringify({ context: { userId: '3', sessionId: 'session-3' } });
      for (let i = 0; i < 2; i++) {
        const posted = await call(run, 'POST', '/proxy', { headers: withKey(json), body });
        assert.equal(posted.text, once.get(recurring)?.text);
        assert.equal(run.proxy.state.current?.answers?.size, 1 + i);
      }
    } finally {
      await run.close();
    }
  });
});
