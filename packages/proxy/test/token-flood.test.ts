import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createProxy } from '@flags/proxy';
import { MAX_TOKEN_LENGTH } from '@flags/schemas';
import { EdgeUpstream, onFeature } from './helpers/edge-upstream.js';
import { waitFor } from './helpers/proxy.js';
import { RecordingLogger } from './helpers/recording-logger.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

function heapAfterGc(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

const CLIENT = `*:development.client-${'c'.repeat(32)}`;
const FLOOD = 10_000;
const CONCURRENCY = 500;

describe('a flood of made-up Unleash-format tokens', () => {
  it('is refused (401/403, never 5xx) with a bounded number of upstream calls and bounded memory', async () => {
    const upstream = new EdgeUpstream(
      new Map([['development', { version: 2, features: [onFeature('a'), onFeature('b')] }]]),
    );
    upstream.tokens.set(CLIENT, { type: 'client', environment: 'development', projects: ['*'] });
    await upstream.start();
    const proxy = await createProxy({
      flagsUrl: upstream.url,
      flagsApiToken: CLIENT,
      refreshInterval: 60_000,
      metricsInterval: 0,
      logger: new RecordingLogger(),
    });
    try {
      await waitFor(() => proxy.environments.ready);
      const flood = async (requests: number) => {
        const statuses = new Map<number, number>();
        for (let sent = 0; sent < requests; sent += CONCURRENCY) {
          const answers = await Promise.all(
            Array.from({ length: CONCURRENCY }, () =>
              proxy.app.inject({
                method: 'GET',
                url: '/api/frontend',
                headers: { authorization: `*:development.${randomBytes(24).toString('hex')}` },
              }),
            ),
          );
          for (const answer of answers)
            statuses.set(answer.statusCode, (statuses.get(answer.statusCode) ?? 0) + 1);
        }
        return statuses;
      };
      // A first, smaller flood warms up what every process keeps once (compiled code, pools).
      await flood(2 * CONCURRENCY);
      upstream.requests.length = 0;
      const before = heapAfterGc();
      const started = performance.now();
      const statuses = await flood(FLOOD);
      const seconds = (performance.now() - started) / 1000;
      const after = heapAfterGc();
      const calls = upstream.validateCalls().length;
      const tokensAsked = upstream
        .validateCalls()
        .reduce(
          (sum, call) => sum + (JSON.parse(call.body) as { tokens: string[] }).tokens.length,
          0,
        );
      console.log(
        `${FLOOD} requests with random tokens in ${seconds.toFixed(1)} s: answers ${JSON.stringify(Object.fromEntries(statuses))}, ` +
          `${calls} validation calls upstream (${tokensAsked} tokens asked about), ` +
          `heap ${(before / 2 ** 20).toFixed(1)} → ${(after / 2 ** 20).toFixed(1)} MiB, ` +
          `validator ${JSON.stringify(proxy.validator?.counts())}`,
      );
      assert.equal(
        [...statuses.values()].reduce((a, b) => a + b, 0),
        FLOOD,
      );
      for (const status of statuses.keys())
        assert.ok(status === 401 || status === 403, `status ${status}`);
      // One call per spacing interval at most, each with a bounded batch.
      assert.ok(calls <= Math.ceil((seconds * 1000) / 100) + 2, `${calls} calls in ${seconds} s`);
      assert.ok(
        upstream
          .validateCalls()
          .every((call) => (JSON.parse(call.body) as { tokens: string[] }).tokens.length <= 200),
      );
      const counts = proxy.validator?.counts();
      assert.ok(counts !== undefined && counts.invalid <= 10_000 && counts.pending === 0);
      // What stays is the bounded memory of refused tokens (≤ 10,000 of them), nothing per request.
      assert.ok(after - before < 8 * 2 ** 20, `heap grew by ${after - before} bytes`);
      // The proxy still serves its real callers.
      const real = await proxy.app.inject({
        method: 'GET',
        url: '/api/client/features',
        headers: { authorization: CLIENT },
      });
      assert.equal(real.statusCode, 200);
    } finally {
      await proxy.app.close();
      await upstream.stop();
    }
  });
});

/** A proxy (inject only) syncing `development` from a fresh `EdgeUpstream` that knows `CLIENT`. */
async function proxyWithUpstream(): Promise<{
  upstream: EdgeUpstream;
  proxy: Awaited<ReturnType<typeof createProxy>>;
  close(): Promise<void>;
}> {
  const upstream = new EdgeUpstream(
    new Map([['development', { version: 2, features: [onFeature('a')] }]]),
  );
  upstream.tokens.set(CLIENT, { type: 'client', environment: 'development', projects: ['*'] });
  await upstream.start();
  const proxy = await createProxy({
    flagsUrl: upstream.url,
    flagsApiToken: CLIENT,
    refreshInterval: 60_000,
    metricsInterval: 0,
    logger: new RecordingLogger(),
  });
  await waitFor(() => proxy.environments.ready);
  return {
    upstream,
    proxy,
    close: async () => {
      await proxy.app.close();
      await upstream.stop();
    },
  };
}

/** A frontend token the upstream knows, of `length` characters. */
function frontendToken(upstream: EdgeUpstream, name: string, length = 60): string {
  const prefix = `*:development.${name}-`;
  const token = prefix + 'f'.repeat(Math.max(length - prefix.length, 1));
  upstream.tokens.set(token, { type: 'frontend', environment: 'development', projects: ['*'] });
  return token;
}

function tokensAsked(upstream: EdgeUpstream): string[] {
  return upstream
    .validateCalls()
    .flatMap((call) => (JSON.parse(call.body) as { tokens: string[] }).tokens);
}

describe('tokens the upstream would refuse as a batch (issue #40)', () => {
  it(`refuses a token over ${MAX_TOKEN_LENGTH} characters at once, asking the upstream nothing about it`, async () => {
    const { upstream, proxy, close } = await proxyWithUpstream();
    try {
      const longest = frontendToken(upstream, 'longest', MAX_TOKEN_LENGTH);
      const tooLong = () => `*:development.${randomBytes(300).toString('hex')}`; // 614 characters
      const answers = await Promise.all([
        ...Array.from({ length: 100 }, () =>
          proxy.app.inject({ url: '/api/frontend', headers: { authorization: tooLong() } }),
        ),
        ...Array.from({ length: 100 }, () =>
          proxy.app.inject({ url: '/proxy', headers: { authorization: tooLong() } }),
        ),
        proxy.app.inject({ url: '/api/frontend', headers: { authorization: longest } }),
      ]);
      const statuses = answers.map((answer) => answer.statusCode);
      // As a token the upstream refused: 403 on Edge's paths, 401 `Unauthorized` on Unleash Proxy's.
      assert.deepEqual(statuses, [...Array(100).fill(403), ...Array(100).fill(401), 200]);
      const asked = tokensAsked(upstream);
      assert.deepEqual(
        asked.filter((token) => token.length > MAX_TOKEN_LENGTH),
        [],
        `${asked.length} tokens asked upstream`,
      );
      assert.deepEqual(asked, [longest]);
      // Not remembered either: a flood of them cannot push real refusals out of the bounded list.
      assert.deepEqual(proxy.validator?.counts(), { valid: 1, invalid: 0, pending: 0 });
    } finally {
      await close();
    }
  });

  it('splits a batch the upstream refuses, so one refused token fails none of its neighbours', async () => {
    const { upstream, proxy, close } = await proxyWithUpstream();
    try {
      upstream.refusesBatchWith = (token) => token.includes('hostile');
      const hostile = '*:development.hostile-0000';
      const valid = Array.from({ length: 30 }, (_, i) => frontendToken(upstream, `valid${i}`));
      const ask = (token: string) =>
        proxy.app.inject({ url: '/api/frontend', headers: { authorization: token } });
      // One call first, so the next waits out the spacing and takes every token below in one batch.
      assert.equal((await ask('*:development.warm-up')).statusCode, 403);
      const before = upstream.validateCalls().length;
      const answers = await Promise.all([hostile, ...valid].map(ask));
      assert.deepEqual(
        answers.map((answer) => answer.statusCode),
        [403, ...valid.map(() => 200)],
      );
      const calls = upstream.validateCalls().slice(before);
      assert.equal(calls[0]?.status, 400, 'the first call holds the hostile token and is refused');
      assert.equal(JSON.parse(calls[0]?.body ?? '{}').tokens.length, 31);
      // Halving finds one refused token among n in 2⌈log2 n⌉ more calls.
      assert.ok(calls.length <= 1 + 2 * Math.ceil(Math.log2(31)), `${calls.length} calls`);
      assert.equal(proxy.validator?.known(hostile), 'invalid');
      for (const token of valid) assert.equal(typeof proxy.validator?.known(token), 'object');
    } finally {
      await close();
    }
  });

  it('spends a bounded number of calls on a batch full of refused tokens, and refuses no valid one for good', async () => {
    const { upstream, proxy, close } = await proxyWithUpstream();
    try {
      upstream.refusesBatchWith = (token) => token.includes('hostile');
      const hostile = Array.from({ length: 60 }, (_, i) => `*:development.hostile-${i}`);
      const valid = Array.from({ length: 20 }, (_, i) => frontendToken(upstream, `valid${i}`));
      const ask = (token: string) =>
        proxy.app.inject({ url: '/api/frontend', headers: { authorization: token } });
      await ask('*:development.warm-up');
      const before = upstream.validateCalls().length;
      // Interleaved: every piece of the batch down to a few tokens holds a refused one.
      const mixed = hostile.flatMap((token, i) =>
        i % 3 === 0 ? [token, valid[i / 3] as string] : [token],
      );
      const answers = await Promise.all(mixed.map(ask));
      for (const [i, answer] of answers.entries()) {
        const expected = mixed[i]?.includes('hostile') ? [401, 403] : [200, 401];
        assert.ok(expected.includes(answer.statusCode), `${mixed[i]}: ${answer.statusCode}`);
      }
      const calls = upstream.validateCalls().length - before;
      assert.ok(calls <= 1 + 4 * Math.ceil(Math.log2(80)), `${calls} calls for one batch`);
      // A valid token is never remembered as refused; asked again, each one is accepted.
      for (const token of valid) assert.notEqual(proxy.validator?.known(token), 'invalid');
      upstream.refusesBatchWith = undefined;
      const again = await Promise.all(valid.map(ask));
      assert.deepEqual(
        again.map((answer) => answer.statusCode),
        valid.map(() => 200),
      );
    } finally {
      await close();
    }
  });

  it('keeps tokens unchecked (401, asked again later) when the upstream fails with 5xx', async () => {
    const { upstream, proxy, close } = await proxyWithUpstream();
    try {
      const valid = frontendToken(upstream, 'valid');
      upstream.failing = true;
      const first = await proxy.app.inject({
        url: '/api/frontend',
        headers: { authorization: valid },
      });
      assert.equal(first.statusCode, 401);
      assert.equal(proxy.validator?.known(valid), 'unknown');
      assert.equal(upstream.validateCalls().length, 1, 'no split on a 5xx');
      upstream.failing = false;
      const again = await proxy.app.inject({
        url: '/api/frontend',
        headers: { authorization: valid },
      });
      assert.equal(again.statusCode, 200);
    } finally {
      await close();
    }
  });
});
