import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';
import { smallPayload } from './fixtures/small.js';
import { call, startProxy, waitFor, withKey } from './helpers/proxy.js';

interface Sample {
  readonly value?: string;
  readonly count?: string;
  readonly labels?: Record<string, string>;
  readonly buckets?: Record<string, string>;
}
interface Family {
  readonly name: string;
  readonly type: string;
  readonly help: string;
  readonly metrics: Sample[];
}

// A third-party parser of the text exposition format (not prom-client, which wrote it).
const parse = createRequire(import.meta.url)('parse-prometheus-text-format') as (
  text: string,
) => Family[];

function family(families: Family[], name: string): Family {
  const found = families.find((candidate) => candidate.name === name);
  assert.ok(found, `${name} is exposed`);
  return found;
}

describe('Prometheus', () => {
  it('is behind readiness, needs no key, and reports the sync timestamps after a sync', async () => {
    const before = Date.now();
    const run = await startProxy(
      smallPayload,
      {},
      {
        upstream: (upstream) => {
          upstream.mode = 'error500';
        },
      },
    );
    const other = await startProxy(smallPayload);
    try {
      const early = await call(run, 'GET', '/proxy/internal-backstage/prometheus');
      assert.equal(early.status, 503);
      assert.equal(early.text, 'Not Ready');
      run.upstream.mode = 'ok';
      await run.proxy.poller.ready;
      await call(run, 'GET', '/proxy', { headers: withKey() });
      await call(run, 'GET', '/proxy', { headers: {} });
      // Let a poll answered 304 move the fetch timestamp past the update timestamp.
      const polls = run.upstream.featureRequests().length;
      await waitFor(() => run.upstream.featureRequests().length > polls + 1);
      await waitFor(() => run.proxy.poller.lastCheckMs > run.proxy.state.lastUpdateMs);

      const answer = await call(run, 'GET', '/proxy/internal-backstage/prometheus');
      assert.equal(answer.status, 200);
      assert.match(String(answer.headers['content-type']), /^text\/plain; version=0\.0\.4/);
      const families = parse(answer.text);

      const up = family(families, 'flags_proxy_up');
      assert.equal(up.type, 'COUNTER');
      assert.equal(Number(up.metrics[0]?.value), 1);

      const update = Number(
        family(families, 'last_metrics_update_epoch_timestamp_ms').metrics[0]?.value,
      );
      const fetch = Number(
        family(families, 'last_metrics_fetch_epoch_timestamp_ms').metrics[0]?.value,
      );
      assert.equal(family(families, 'last_metrics_update_epoch_timestamp_ms').type, 'GAUGE');
      assert.equal(update, run.proxy.state.lastUpdateMs);
      assert.ok(update >= before && update <= Date.now(), 'update time is the sync time');
      assert.ok(fetch > update, 'a 304 moves only the fetch time');
      assert.ok(fetch <= Date.now());

      assert.equal(family(families, 'flags_proxy_http_request_duration_seconds').type, 'HISTOGRAM');
      // The parser merges the series of a labelled histogram, so the counts are read from the lines.
      const count = (text: string, status: string) =>
        Number(
          new RegExp(
            `^flags_proxy_http_request_duration_seconds_count\\{route="/proxy",method="GET",status="${status}"\\} (\\d+)$`,
            'm',
          ).exec(text)?.[1],
        );
      assert.equal(count(answer.text, '200'), 1);
      assert.equal(count(answer.text, '401'), 1);
      assert.ok(
        families.some((f) => f.name === 'process_cpu_user_seconds_total'),
        'process metrics',
      );
      assert.ok(
        families.some((f) => f.name === 'nodejs_eventloop_lag_seconds'),
        'runtime metrics',
      );

      // A second proxy in the same process has its own registry.
      await other.proxy.poller.ready;
      const secondText = (await call(other, 'GET', '/proxy/internal-backstage/prometheus')).text;
      assert.equal(Number(family(parse(secondText), 'flags_proxy_up').metrics[0]?.value), 1);
      assert.ok(
        Number.isNaN(count(secondText, '200')),
        'requests of the first proxy are not counted here',
      );
    } finally {
      await run.close();
      await other.close();
    }
  });
});
