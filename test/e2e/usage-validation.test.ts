import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  DEMO_CLIENT_KEY as CLIENT_KEY,
  type DemoStack,
  startDemoStack,
} from '../helpers/demo-stack.js';
import { waitFor } from '../helpers/wait.js';

const BUCKET = { start: '2026-11-22T00:00:00.000Z', stop: '2026-11-22T00:01:00.000Z' };

/**
 * Issue 40 (LOW): a report the upstream would refuse (a NUL, which PostgreSQL text cannot hold, a
 * lone surrogate, which its jsonb refuses, a date before 1970) is refused by the proxy with 400,
 * so it never rides in a batch with other applications' counts and takes them down with it.
 */
describe('flags-proxy refuses the reports flags-server would refuse', () => {
  let stack: DemoStack;

  before(async () => {
    stack = await startDemoStack({ refreshInterval: 60_000, metricsInterval: 300 });
  });

  after(async () => {
    await stack?.close();
  });

  const report = (body: unknown) =>
    fetch(`${stack.proxyUrl}/proxy/client/metrics`, {
      method: 'POST',
      headers: { authorization: CLIENT_KEY, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  it('answers 400 to the bad reports, and the good application’s counts reach the server', async () => {
    const bad = [
      {
        appName: 'evil\u0000app',
        bucket: { ...BUCKET, toggles: { 'beta-banner': { yes: 1, no: 0 } } },
      },
      {
        appName: 'evil-variant',
        bucket: {
          ...BUCKET,
          toggles: { 'dark-mode': { yes: 1, no: 0, variants: { 'x\ud800': 1 } } },
        },
      },
      {
        appName: 'evil-date',
        bucket: { ...BUCKET, stop: '1969-12-31T23:59:59.000Z', toggles: {} },
      },
    ];
    for (const body of bad) {
      const response = await report(body);
      assert.equal(response.status, 400, JSON.stringify(body));
      const error = (await response.json()) as { name: string; details: { message: string }[] };
      assert.equal(error.name, 'BadDataError');
      assert.ok(error.details.length > 0);
    }
    const good = await report({
      appName: 'good-web',
      bucket: { ...BUCKET, toggles: { 'beta-banner': { yes: 3, no: 1 } } },
    });
    assert.equal(good.status, 200);
    await waitFor(
      async () => {
        const rows = await stack.db.query<{ yes: number; no: number }>(
          `SELECT SUM(yes)::int AS yes, SUM(no)::int AS no FROM client_metrics
            WHERE app_name = 'good-web' AND feature_name = 'beta-banner'`,
        );
        return rows[0]?.yes === 3 && rows[0]?.no === 1;
      },
      10_000,
      "the good application's counts in the server's buckets",
    );
  });
});
