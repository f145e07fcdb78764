import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';
import { freePort, spawnEntry } from '../../../test/helpers/processes.js';
import { smallPayload } from './fixtures/small.js';
import { FakeUpstream } from './helpers/fake-upstream.js';
import { API_TOKEN, CLIENT_KEY } from './helpers/proxy.js';

/**
 * Graceful shutdown of the `flags-proxy` process: on SIGTERM it stops accepting connections,
 * finishes the requests in flight, sends the usage metrics it holds upstream and exits 0.
 */

const MAIN = fileURLToPath(new URL('../src/main.ts', import.meta.url));
const IN_FLIGHT = 40;
const ENRICHER_DELAY_MS = 1000;

describe('flags-proxy on SIGTERM', () => {
  it('finishes in-flight requests, refuses new connections, flushes usage metrics and exits 0', async () => {
    const upstream = await new FakeUpstream(smallPayload).start();
    const dir = mkdtempSync(join(tmpdir(), 'flags-shutdown-'));
    // A slow enricher keeps requests in flight long enough to send the signal in the middle.
    const enricher = join(dir, 'slow-enricher.mjs');
    writeFileSync(
      enricher,
      `export default [async (context) => { await new Promise((r) => setTimeout(r, ${ENRICHER_DELAY_MS})); return context; }];\n`,
    );
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
      EXP_CUSTOM_ENRICHERS_FILE: enricher,
      LOG_LEVEL: 'info',
      JSON_LOGGER: 'true',
    });
    const agent = new Agent({ connections: IN_FLIGHT + 4 });
    const probes = new Agent({ pipelining: 0 });
    try {
      const deadline = Date.now() + 30_000;
      for (;;) {
        assert.equal(proxy.child.exitCode, null, proxy.output());
        const health = await request(`${base}/proxy/health`, { dispatcher: agent }).catch(
          () => undefined,
        );
        const ok = health?.statusCode === 200;
        await health?.body.dump();
        if (ok) break;
        assert.ok(Date.now() < deadline, `the proxy did not become ready: ${proxy.output()}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const metricsBefore = upstream.acceptedMetrics().length;
      const started = Date.now();
      const inFlight = Array.from({ length: IN_FLIGHT }, (_, i) =>
        request(`${base}/proxy?userId=${i}`, {
          headers: { authorization: CLIENT_KEY },
          dispatcher: agent,
        }).then(async (response) => ({
          status: response.statusCode,
          body: await response.body.text(),
        })),
      );
      let finished = 0;
      for (const answer of inFlight) void answer.then(() => finished++);
      await new Promise((resolve) => setTimeout(resolve, ENRICHER_DELAY_MS / 5));
      proxy.child.kill('SIGTERM');
      // New connections are refused once the signal is handled (probed until then).
      let late = '';
      let finishedAtRefusal = -1;
      const probeUntil = Date.now() + 5000;
      while (Date.now() < probeUntil) {
        late = await request(`${base}/proxy/health`, { dispatcher: probes }).then(
          async (response) => {
            await response.body.dump();
            return `answered ${response.statusCode}`;
          },
          (error: NodeJS.ErrnoException) => error.code ?? String(error),
        );
        if (late === 'ECONNREFUSED') {
          finishedAtRefusal = finished;
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const answers = await Promise.all(inFlight);
      const code = await proxy.exited;
      const stoppedMs = Date.now() - started;
      const reports = upstream.acceptedMetrics().slice(metricsBefore);
      const counted = reports
        .flatMap((report) => Object.values(report.bucket.toggles) as { yes: number; no: number }[])
        .reduce((sum, toggle) => sum + toggle.yes + toggle.no, 0);
      console.log(
        `proxy SIGTERM with ${IN_FLIGHT} requests in flight: ${answers.filter((a) => a.status === 200).length} answered 200; ` +
          `new connections refused after the signal (${finishedAtRefusal} of ${IN_FLIGHT} in-flight requests finished by then); ${reports.length} usage report(s) flushed upstream with ${counted} evaluations; ` +
          `exit code ${code} after ${stoppedMs} ms`,
      );
      assert.deepEqual(
        answers.map((a) => a.status),
        Array(IN_FLIGHT).fill(200),
      );
      assert.ok(answers.every((a) => JSON.parse(a.body).toggles.length > 0));
      assert.equal(late, 'ECONNREFUSED');
      assert.ok(finishedAtRefusal < IN_FLIGHT, 'refused while requests were still in flight');
      assert.equal(code, 0, proxy.output());
      // Idle keep-alive connections do not hold the exit back until their timeout (72 s).
      assert.ok(stoppedMs < 10_000, `exited after ${stoppedMs} ms`);
      assert.ok(reports.length >= 1, 'pending usage metrics were sent on shutdown');
      // Every flag is evaluated once per request: all of them are in the flushed counts.
      assert.equal(counted, IN_FLIGHT * smallPayload.features.length);
    } finally {
      if (proxy.child.exitCode === null) proxy.child.kill('SIGKILL');
      await agent.close();
      await probes.close();
      await upstream.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
