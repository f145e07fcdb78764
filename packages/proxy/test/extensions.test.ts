import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { customPayload } from './fixtures/custom-payload.js';
import { smallPayload } from './fixtures/small.js';
import { type Answer, call, type Running, startProxy, withKey } from './helpers/proxy.js';

const names = (answer: Answer): string[] =>
  answer.json().toggles.map((toggle: { name: string }) => toggle.name);
const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));

describe('custom strategies from files (CommonJS and ESM), one of them throwing', () => {
  let run: Running;
  before(async () => {
    run = await startProxy(customPayload, {
      customStrategies: [fixture('strategies.cjs'), fixture('strategies.mjs')],
    });
    await run.proxy.poller.ready;
  });
  after(() => run.close());

  it('evaluates with the loaded strategies', async () => {
    const acme = await call(run, 'GET', '/proxy?properties[tenant]=acme&properties[day]=monday', {
      headers: withKey(),
    });
    assert.deepEqual(names(acme), [
      'tenant-flag',
      'monday-flag',
      'broken-then-default',
      'plain-on',
    ]);
    const other = await call(run, 'GET', '/proxy?properties[tenant]=initech', {
      headers: withKey(),
    });
    assert.deepEqual(names(other), ['broken-then-default', 'plain-on']);
  });

  it('treats a throwing strategy as false, logs once per flag and keeps serving', async () => {
    for (let i = 0; i < 5; i++) {
      const answer = await call(run, 'POST', '/proxy', {
        headers: withKey({ 'content-type': 'application/json' }),
        body: JSON.stringify({
          context: { userId: String(i) },
          toggles: ['broken-flag', 'broken-then-default'],
        }),
      });
      assert.equal(answer.status, 200);
      assert.deepEqual(
        answer.json().toggles.map((toggle: { enabled: boolean }) => toggle.enabled),
        [false, true],
      );
    }
    const warnings = run.log.lines.filter(
      (line) => line.level === 'warn' && (line.data as { flag?: string })?.flag,
    );
    const flags = warnings.map((line) => (line.data as { flag: string }).flag).sort();
    assert.deepEqual(flags, ['broken-flag', 'broken-then-default']);
    assert.equal((await call(run, 'GET', '/proxy/health')).status, 200);
  });
});

describe('context enrichers', () => {
  it('applies file enrichers in order', async () => {
    const run = await startProxy(smallPayload, { expCustomEnrichers: [fixture('enrichers.mjs')] });
    try {
      await run.proxy.poller.ready;
      const answer = await call(run, 'GET', '/proxy', { headers: withKey() });
      // The first enricher sets region=eu; the second, seeing it, sets userId 123.
      assert.ok(names(answer).includes('region-eu'));
      assert.ok(names(answer).includes('user-123'));
    } finally {
      await run.close();
    }
  });

  it('answers a JSON 500 when an enricher throws, logs it once and keeps serving', async () => {
    let calls = 0;
    const run = await startProxy(smallPayload, {
      expCustomEnrichers: [
        (context) => {
          calls++;
          if (context.userId === 'bad') throw new Error('enricher exploded');
          return context;
        },
      ],
    });
    try {
      await run.proxy.poller.ready;
      for (let i = 0; i < 3; i++) {
        const answer = await call(run, 'GET', '/proxy?userId=bad', { headers: withKey() });
        assert.equal(answer.status, 500);
        assert.equal(answer.json().name, 'ContextEnricherError');
        assert.ok(!answer.text.includes('exploded'), 'operator errors are not shown to callers');
      }
      assert.equal(
        (await call(run, 'GET', '/proxy?userId=good', { headers: withKey() })).status,
        200,
      );
      assert.equal(calls, 4);
      assert.equal(run.log.lines.filter((line) => /enricher failed/.test(line.message)).length, 1);
    } finally {
      await run.close();
    }
  });
});
