import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';
import { freePort, spawnEntry, waitUntilHealthy } from '../../../test/helpers/processes.js';
import { smallPayload } from './fixtures/small.js';
import { FakeUpstream } from './helpers/fake-upstream.js';
import { API_TOKEN, CLIENT_KEY } from './helpers/proxy.js';

/**
 * Issue 40 (HIGH): usage reports that anyone holding a client key can send must not grow the
 * proxy's memory without bound. The proxy runs as its own process, its upstream never gets a
 * send (the interval is long), so everything it keeps stays; its resident memory is read from
 * `/proc/<pid>/status` before and after the hostile reports.
 */

const MAIN = fileURLToPath(new URL('../src/main.ts', import.meta.url));
/**
 * Growth allowed during the measured round. The issue saw 85 → 812 MB from 80 reports; with the
 * pending usage bound (16 MiB by default) the round grows it by 20 MiB at most, without it (the
 * bound raised to 2 GB) by 50 MiB and more.
 */
const MAX_GROWTH_BYTES = 40 * 1024 * 1024;
/** Full reports a round sends (each is 600 flag names of 100 variant names). */
const FULL_REPORTS = 20;
const KNOWN_FLAG = 'simple-on';
/** `usageMaxPendingBytes`, its default. */
const PENDING_BOUND_BYTES = 16 * 1024 * 1024;
/** Old-space limit of the proxy process, MB. */
const HEAP_LIMIT_MB = 160;
/** What the proxy's own bucket may add beyond it (kept whatever the bound). */
const OWN_BUCKET_BYTES = 4096;

/** Resident memory of a process, bytes. */
function residentBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(status);
  assert.ok(match, status);
  return Number(match[1]) * 1024;
}

/** `count` distinct variant names starting with `prefix`, one hit each. */
function variantsOf(prefix: string, count: number): Record<string, number> {
  const variants: Record<string, number> = {};
  for (let i = 0; i < count; i++) variants[`${prefix}${i.toString(36)}`] = 1;
  return variants;
}

const BUCKET = { start: '2026-11-22T00:00:00.000Z', stop: '2026-11-22T00:01:00.000Z' };

/** The report: 60,000 distinct variant names on one known flag (~800 KB). */
function wideReport(n: number): string {
  return JSON.stringify({
    appName: 'web',
    bucket: {
      ...BUCKET,
      toggles: { [KNOWN_FLAG]: { yes: 1, no: 0, variants: variantsOf(`r${n}-`, 60_000) } },
    },
  });
}

/**
 * A report each limit of the schema allows at once: an application of its own, 600 made-up flag
 * names (of 255 characters) with 100 variant names each, under the body limit.
 */
function fullReport(n: number): string {
  const toggles: Record<string, unknown> = {};
  for (let i = 0; i < 600; i++) {
    const name = `${n}-${i}-`.padEnd(255, 'f');
    toggles[name] = { yes: 1, no: 0, variants: variantsOf(`${n}.${i}.`, 100) };
  }
  return JSON.stringify({ appName: `app-${n}`, bucket: { ...BUCKET, toggles } });
}

/** The same counts as a downstream relay's bulk body. */
function wideBulk(n: number): string {
  return JSON.stringify({
    applications: [],
    metrics: [
      {
        featureName: KNOWN_FLAG,
        appName: 'edge-web',
        environment: 'development',
        timestamp: BUCKET.stop,
        yes: 1,
        no: 0,
        variants: variantsOf(`b${n}-`, 60_000),
      },
    ],
  });
}

describe('flags-proxy memory under hostile usage reports', () => {
  it('stays within its bound while public keys send reports full of distinct names', async () => {
    const upstream = await new FakeUpstream(smallPayload).start();
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const proxy = spawnEntry(MAIN, {
      FLAGS_URL: upstream.url,
      FLAGS_API_TOKEN: API_TOKEN,
      FLAGS_PROXY_CLIENT_KEYS: CLIENT_KEY,
      PORT: String(port),
      PROXY_HOST: '127.0.0.1',
      FLAGS_FETCH_INTERVAL: '60000',
      FLAGS_METRICS_INTERVAL: '600000',
      LOG_LEVEL: 'error',
      // A heap limit makes the collector reclaim parsed bodies before the heap grows (garbage
      // is not what the test measures); memory kept beyond it would end the process instead.
      NODE_OPTIONS: `--max-old-space-size=${HEAP_LIMIT_MB}`,
    });
    const agent = new Agent({ pipelining: 0 });
    try {
      await waitUntilHealthy(`${base}/proxy/health`, proxy.child, { output: proxy.output });
      const pid = proxy.child.pid as number;
      const post = async (path: string, token: string, body: string) => {
        const response = await request(`${base}${path}`, {
          method: 'POST',
          headers: { authorization: token, 'content-type': 'application/json' },
          body,
          dispatcher: agent,
        });
        await response.body.dump();
        return response.statusCode;
      };
      // One honest report first: the routes are up and counting.
      const honest = JSON.stringify({
        appName: 'web',
        bucket: { ...BUCKET, toggles: { [KNOWN_FLAG]: { yes: 1, no: 0 } } },
      });
      assert.equal(await post('/proxy/client/metrics', CLIENT_KEY, honest), 200);
      const statuses = new Map<number, number>();
      const sent = (status: number) => statuses.set(status, (statuses.get(status) ?? 0) + 1);
      /** The hostile reports, their names distinct from every other round's. */
      const round = async (first: number) => {
        for (let n = first; n < first + 10; n++)
          sent(await post('/proxy/client/metrics', CLIENT_KEY, wideReport(n)));
        for (let n = first; n < first + 5; n++)
          sent(await post('/api/client/metrics/bulk', API_TOKEN, wideBulk(n)));
        for (let n = first; n < first + FULL_REPORTS; n++)
          sent(await post('/proxy/client/metrics', CLIENT_KEY, fullReport(n)));
      };
      // A first round fills the pending usage to its bound and grows the heap to its working size
      // with the garbage of parsing such bodies, which the collector reclaims later under load
      // (50–100 MiB on a busy machine); the second round, as many new names again, must not grow
      // it further.
      await round(0);
      const before = residentBytes(pid);
      await round(100);
      const after = residentBytes(pid);
      const growth = after - before;
      assert.equal(proxy.child.exitCode, null, proxy.output());
      assert.ok(
        growth < MAX_GROWTH_BYTES,
        `resident memory grew by ${Math.round(growth / 1048576)} MiB (${Math.round(before / 1048576)} → ${Math.round(after / 1048576)} MiB); statuses ${JSON.stringify([...statuses])}`,
      );
      // The estimate the bound works on, and what it dropped, as Prometheus sees them.
      const scrape = await request(`${base}/internal-backstage/metrics`, { dispatcher: agent });
      const text = await scrape.body.text();
      const pending = Number(/^flags_proxy_usage_pending_bytes (\S+)$/m.exec(text)?.[1]);
      // Beyond the bound only the proxy's own bucket is kept (its evaluations: none here).
      assert.ok(
        pending > 0 && pending <= PENDING_BOUND_BYTES + OWN_BUCKET_BYTES,
        `pending usage ${pending} bytes`,
      );
      const dropped = Number(
        /^flags_proxy_usage_dropped_total\{kind="variant"\} (\S+)$/m.exec(text)?.[1],
      );
      assert.ok(dropped > 0, `variant names dropped: ${dropped}`);
    } finally {
      proxy.child.kill('SIGKILL');
      await proxy.exited;
      await agent.close();
      await upstream.stop();
    }
  });
});
