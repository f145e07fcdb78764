import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { FileBackup } from '@flags/proxy';
import type { ClientFeatures } from '@flags/schemas';
import { smallPayload } from './fixtures/small.js';
import { call, type Running, startProxy, withKey } from './helpers/proxy.js';

/** The ETags of the same requests, in the same order, on one proxy. */
async function etags(run: Running): Promise<string[]> {
  await run.proxy.poller.ready;
  const json = withKey({ 'content-type': 'application/json' });
  const answers = [
    await call(run, 'GET', '/proxy?userId=1', { headers: withKey() }),
    await call(run, 'POST', '/proxy/all', {
      headers: json,
      body: JSON.stringify({ context: { userId: '2' } }),
    }),
    await call(run, 'POST', '/proxy', {
      headers: json,
      body: JSON.stringify({ context: { userId: '3' }, toggles: ['with-variants', 'nope'] }),
    }),
    await call(run, 'POST', '/ofrep/v1/evaluate/flags', {
      headers: json,
      body: JSON.stringify({ context: { targetingKey: '4' } }),
    }),
    await call(run, 'GET', '/proxy/client/features', {
      headers: { authorization: 'server-token' },
    }),
  ];
  for (const answer of answers) assert.equal(answer.status, 200, answer.text);
  return answers.map((answer) => String(answer.headers.etag));
}

const options = {
  enableAllEndpoint: true,
  expServerSideSdkConfig: { tokens: ['server-token'] },
};

describe('two proxies in one process', () => {
  it('share no ids: the same requests get the same ETags from each', async () => {
    const first = await startProxy(smallPayload, options);
    const second = await startProxy(smallPayload, options);
    try {
      // All of the first proxy's answers before any of the second's: anything drawn from one
      // process-wide counter or cache would give the second proxy other ETags.
      const fromFirst = await etags(first);
      const fromSecond = await etags(second);
      assert.deepEqual(fromSecond, fromFirst);
      assert.equal(new Set(fromFirst).size, fromFirst.length, 'five different answers');
    } finally {
      await first.close();
      await second.close();
    }
  });

  it('count usage beside the engine: the snapshot keeps its own methods', async () => {
    const run = await startProxy(smallPayload, { ...options, metricsInterval: 60_000 });
    try {
      assert.equal(run.proxy.reporter.enabled, true);
      // Every way of evaluating: each flag, all flags, named flags, OFREP.
      await etags(run);
      const snapshot = run.proxy.state.current?.snapshot;
      assert.ok(snapshot !== undefined);
      for (const method of ['evaluate', 'evaluateAll', 'evaluateEach']) {
        assert.equal(Object.hasOwn(snapshot, method), false, `${method} is not replaced`);
      }
    } finally {
      await run.close();
    }
  });

  it('write backups to one directory side by side without clashing', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'flags-instances-'));
    try {
      const backups = [new FileBackup(dir), new FileBackup(dir)];
      const payloads: ClientFeatures[] = [];
      for (let i = 0; i < 20; i++) payloads.push({ ...smallPayload, version: i + 1 });
      // Concurrent writes of one key by two providers: each must use a temporary file of its own.
      await Promise.all(
        payloads.map((payload, i) => (backups[i % 2] as FileBackup).set('key', payload)),
      );
      const saved = await (backups[0] as FileBackup).get('key');
      assert.ok(payloads.some((payload) => payload.version === saved?.version));
      assert.deepEqual(await readdir(dir), ['key.json'], 'no temporary file left behind');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
