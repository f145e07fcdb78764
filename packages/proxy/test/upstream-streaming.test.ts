import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { loadConfig, type ProxyOptions } from '@flags/proxy';
import type { ClientFeatures } from '@flags/schemas';
import { API_TOKEN, CLIENT_KEY, type Running, startProxy, waitFor } from './helpers/proxy.js';
import type { RecordingLogger } from './helpers/recording-logger.js';
import { StreamingUpstream } from './helpers/streaming-upstream.js';

type Streaming = Running<StreamingUpstream>;

const running: Streaming[] = [];
after(async () => {
  for (const run of running) await run.close();
});

async function start(
  prepare: (upstream: StreamingUpstream) => void = () => {},
  options: ProxyOptions = {},
  payload: ClientFeatures = smallPayload,
): Promise<Streaming> {
  const started = await startProxy(payload, options, {
    upstream: prepare,
    serve: (served) => new StreamingUpstream(served as ClientFeatures),
  });
  running.push(started);
  return started;
}

/** The enabled toggles `/proxy` answers, by name. */
async function enabled({ proxy }: Streaming): Promise<string[]> {
  const answer = await proxy.app.inject({
    method: 'GET',
    url: '/proxy',
    headers: { authorization: CLIENT_KEY },
  });
  if (answer.statusCode !== 200) return [`status ${answer.statusCode}`];
  return (answer.json().toggles as Array<{ name: string }>).map((toggle) => toggle.name).sort();
}

/** How each feed syncs, as `/internal-backstage/tokens` shows it. */
async function syncModes({ proxy }: Streaming): Promise<string[]> {
  const answer = await proxy.app.inject({ method: 'GET', url: '/internal-backstage/tokens' });
  return answer.json().tokenRefreshes.map((refresh: { sync: string }) => refresh.sync);
}

/** The features the upstream holds, enabled ones by name: what the proxy should end up serving. */
function enabledUpstream(payload: ClientFeatures): string[] {
  return payload.features
    .filter((feature) => feature.enabled)
    .map((feature) => feature.name)
    .sort();
}

const flag = (name: string, enabled = true) => ({
  name,
  enabled,
  strategies: [{ name: 'default' }],
});
const onFlag = (name: string) => ({ type: 'feature-updated' as const, feature: flag(name) });

/** Flags whose answers need no context: enabled ones are on for everyone. */
const smallPayload: ClientFeatures = {
  version: 2,
  features: [flag('simple-on'), flag('simple-off', false), flag('with-variants'), flag('third')],
};

const fallbackLines = (log: RecordingLogger) =>
  log.lines.filter((line) => line.message.startsWith('upstream does not stream'));

describe('flags-proxy syncs by streaming from its upstream', () => {
  it('hydrates from the stream, applies updates, and never polls while streaming', async () => {
    const run = await start(() => {}, { customHeaders: { 'X-Api-Key': 'gateway-secret' } });
    await run.proxy.poller.ready;
    assert.deepEqual(await enabled(run), enabledUpstream(smallPayload));
    run.upstream.change(onFlag('streamed-in'));
    await waitFor(async () => (await enabled(run)).includes('streamed-in'));
    run.upstream.change({ type: 'feature-removed', featureName: 'simple-on' });
    await waitFor(async () => !(await enabled(run)).includes('simple-on'));
    assert.equal(run.upstream.featureRequests().length, 0, run.log.text());
    const [stream] = run.upstream.streamRequests();
    assert.equal(stream?.headers.authorization, API_TOKEN);
    assert.equal(stream?.headers['unleash-client-spec'], '5.2.0');
    assert.ok(stream?.headers['unleash-appname']);
    assert.ok(stream?.headers['unleash-connection-id']);
    assert.equal(stream?.headers['x-api-key'], 'gateway-secret');
    assert.equal(stream?.headers.accept, 'text/event-stream');
    assert.equal(stream?.headers['last-event-id'], undefined, 'the first connection hydrates');
    assert.ok(run.proxy.poller.lastCheckMs > 0, 'the stream counts as an upstream check');
    assert.deepEqual(await syncModes(run), ['streaming']);
  });

  it('resumes a killed stream with Last-Event-ID and misses nothing', async () => {
    const run = await start();
    await run.proxy.poller.ready;
    const seen = run.upstream.change(onFlag('before-drop'));
    await waitFor(async () => (await enabled(run)).includes('before-drop'));
    // The upstream refuses reconnections while it records changes, then lets the proxy back in.
    run.upstream.streamStatus = 503;
    run.upstream.dropStreams();
    run.upstream.change(onFlag('while-down-1'));
    run.upstream.change({ type: 'feature-removed', featureName: 'with-variants' });
    run.upstream.change(onFlag('while-down-2'));
    run.upstream.streamStatus = undefined;
    await waitFor(async () => run.upstream.openStreams === 1);
    const expected = [
      ...enabledUpstream(smallPayload),
      'before-drop',
      'while-down-1',
      'while-down-2',
    ]
      .filter((name) => name !== 'with-variants')
      .sort();
    await waitFor(async () => (await enabled(run)).join() === expected.join());
    const resumed = run.upstream.streamRequests().filter((request) => request.status === 200);
    assert.equal(resumed.length, 2);
    assert.equal(resumed[1]?.headers['last-event-id'], String(seen));
    run.upstream.change(onFlag('after-resume'));
    await waitFor(async () => (await enabled(run)).includes('after-resume'));
    assert.equal(run.upstream.featureRequests().length, 0, 'resumed by streaming, no poll');
  });

  /** Warnings about the upstream's stream (the short test secrets are warned about too). */
  const warnings = (log: RecordingLogger) =>
    log.lines.filter(
      (line) => line.level === 'warn' && /^upstream (stream|does not stream)/.test(line.message),
    );

  // 404/405/501 say the upstream has no stream; another error status on a feed that has never
  // streamed is a chained relay without streaming (an open-source Unleash Edge answers 500).
  for (const status of [404, 501, 500, 503]) {
    it(`polls when the first stream request gets ${status}, says so once at info level, and asks again only rarely`, async () => {
      const run = await start((upstream) => {
        upstream.streamStatus = status;
      });
      await run.proxy.poller.ready;
      assert.deepEqual(await enabled(run), enabledUpstream(smallPayload));
      run.upstream.setPayload({ ...smallPayload, features: [onFlag('polled-in').feature] });
      await waitFor(async () => (await enabled(run)).join() === 'polled-in');
      await waitFor(() => run.upstream.featureRequests().length >= 5);
      assert.equal(run.upstream.streamRequests().length, 1, 'streaming is not asked for again yet');
      const lines = fallbackLines(run.log);
      assert.equal(lines.length, 1, run.log.text());
      assert.equal(lines[0]?.level, 'info');
      assert.match(
        lines[0]?.message ?? '',
        new RegExp(`answered ${status}.*asking again every 6 s`),
      );
      assert.deepEqual(warnings(run.log), [], run.log.text());
      assert.deepEqual(await syncModes(run), ['polling']);
    });
  }

  it('streams once a rare second request finds a stream, without a warning', async () => {
    const run = await start((upstream) => {
      upstream.streamStatus = 500;
    });
    await run.proxy.poller.ready;
    await waitFor(() => fallbackLines(run.log).length === 1);
    run.upstream.streamStatus = undefined;
    // Asked again after 120 refresh intervals: 6 s here.
    await waitFor(() => run.upstream.openStreams === 1, 15_000);
    run.upstream.change(onFlag('streamed-in'));
    await waitFor(async () => (await enabled(run)).includes('streamed-in'));
    assert.equal(run.upstream.streamRequests().length, 2);
    assert.ok(
      run.log.lines.some(
        (line) => line.level === 'info' && /upstream streams now/.test(line.message),
      ),
      run.log.text(),
    );
    assert.deepEqual(warnings(run.log), [], run.log.text());
    assert.deepEqual(await syncModes(run), ['streaming']);
  });

  it('goes back to polling on fetch-mode: polling', async () => {
    const run = await start();
    await run.proxy.poller.ready;
    assert.equal(run.upstream.featureRequests().length, 0);
    run.upstream.writeRaw('event: fetch-mode\ndata: polling\n\n');
    await waitFor(() => run.upstream.featureRequests().length >= 2);
    run.upstream.change(onFlag('polled-after-hint'));
    await waitFor(async () => (await enabled(run)).includes('polled-after-hint'));
    assert.ok(run.log.lines.some((line) => /fetch-mode: polling/.test(line.message)));
  });

  it('polls while a stream that worked keeps failing, then streams again (and stops polling)', async () => {
    const run = await start();
    await run.proxy.poller.ready;
    run.upstream.streamStatus = 500;
    run.upstream.dropStreams();
    await waitFor(() => run.upstream.featureRequests().length >= 2);
    const failed = run.upstream.streamRequests().filter((request) => request.status === 500).length;
    assert.ok(failed >= 5, `${failed} stream attempts before polling`);
    assert.ok(
      run.log.lines.some((line) => /5 failed stream connections in a row/.test(line.message)),
      run.log.text(),
    );
    run.upstream.streamStatus = undefined;
    // Streaming is tried again after 60 refresh intervals (3 s here).
    await waitFor(() => run.upstream.openStreams === 1, 15_000);
    run.upstream.change(onFlag('streamed-again'));
    await waitFor(async () => (await enabled(run)).includes('streamed-again'));
    const polls = run.upstream.featureRequests().length;
    run.upstream.change(onFlag('streamed-again-2'));
    await waitFor(async () => (await enabled(run)).includes('streamed-again-2'));
    assert.equal(run.upstream.featureRequests().length, polls, 'the poller stopped');
  });

  it('refuses a malformed event without touching the snapshot, and rehydrates', async () => {
    const run = await start();
    await run.proxy.poller.ready;
    const before = await enabled(run);
    const payloadBefore = JSON.stringify(run.proxy.state.current?.payload.features);
    run.upstream.writeRaw(
      'event: unleash-updated\nid: 99\ndata: {"events":[{"type":"feature-updated","feature":{"name":5}}]}\n\n',
    );
    await waitFor(() => run.upstream.streamRequests().length >= 2);
    assert.deepEqual(await enabled(run), before);
    assert.equal(
      JSON.stringify(run.proxy.state.current?.payload.features),
      payloadBefore,
      'the snapshot is unchanged',
    );
    const again = run.upstream.streamRequests()[1];
    assert.equal(
      again?.headers['last-event-id'],
      undefined,
      'a refused event asks for a hydration',
    );
    assert.ok(
      run.log.lines.some((line) => /event refused/.test(line.message)),
      run.log.text(),
    );
    await waitFor(async () => run.upstream.openStreams === 1);
    run.upstream.writeRaw('event: unleash-updated\nid: 100\ndata: {not json\n\n');
    await waitFor(() => run.upstream.streamRequests().length >= 3);
    assert.deepEqual(await enabled(run), before);
    await waitFor(async () => run.upstream.openStreams === 1);
    run.upstream.change(onFlag('after-bad-events'));
    await waitFor(async () => (await enabled(run)).includes('after-bad-events'));
  });

  it('skips event types it does not know, applying the rest of the message', async () => {
    const run = await start();
    await run.proxy.poller.ready;
    const events = [
      { type: 'feature-archived-someday', featureName: 'simple-on' },
      { type: 'feature-updated', feature: flag('next-to-unknown') },
    ];
    run.upstream.writeRaw(`event: unleash-updated\nid: 7\ndata: ${JSON.stringify({ events })}\n\n`);
    await waitFor(async () => (await enabled(run)).includes('next-to-unknown'));
    assert.ok((await enabled(run)).includes('simple-on'));
    assert.equal(run.upstream.streamRequests().length, 1, 'no reconnection');
  });

  it('only polls when upstreamStreaming is polling', async () => {
    const run = await start(() => {}, { upstreamStreaming: 'polling' });
    await run.proxy.poller.ready;
    await waitFor(() => run.upstream.featureRequests().length >= 2);
    assert.equal(run.upstream.streamRequests().length, 0);
    assert.equal(fallbackLines(run.log).length, 0);
  });

  it('reads Edge’s STREAMING variable', () => {
    const base = { flagsUrl: 'http://127.0.0.1:1/api', flagsApiToken: 't', clientKeys: ['k'] };
    assert.equal(loadConfig({}, base).upstreamStreaming, 'auto');
    assert.equal(loadConfig({ STREAMING: 'false' }, base).upstreamStreaming, 'polling');
    assert.equal(loadConfig({ STREAMING: 'true' }, base).upstreamStreaming, 'auto');
    assert.equal(
      loadConfig({ FLAGS_UPSTREAM_STREAMING: 'polling' }, base).upstreamStreaming,
      'polling',
    );
  });
});
