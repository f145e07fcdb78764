import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createProxy } from '@flags/proxy';
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
