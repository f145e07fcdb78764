// The engine and unleash-client (the Node SDK, bootstrapped offline) must give the same answer,
// flag by flag, on the benchmark's realistic workload: enabled, variant name and payload.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Unleash } from 'unleash-client';
import { compile } from '../src/index.js';
import { offlineUnleash, SDK_HOSTNAME } from './fixtures/offline-unleash.js';
import { realisticWorkload } from './fixtures/realistic.js';

describe('agreement with unleash-client', () => {
  const { payload, randomFlags, contexts } = realisticWorkload({
    flags: 200,
    contexts: 150,
    hostname: SDK_HOSTNAME,
    seed: 7,
  });
  let unleash: Unleash;

  before(async () => {
    unleash = await offlineUnleash(payload, 'agreement');
  });

  after(() => unleash.destroy());

  it('gives the same answer for every deterministic flag and context', () => {
    const snapshot = compile(payload, { hostname: SDK_HOSTNAME });
    let compared = 0;
    for (const context of contexts) {
      for (const ours of snapshot.evaluateAll(context)) {
        if (randomFlags.has(ours.name)) continue;
        const theirs = unleash.getVariant(ours.name, context as never);
        const where = `${ours.name} for ${JSON.stringify(context)}`;
        assert.equal(ours.enabled, theirs.feature_enabled, where);
        assert.equal(ours.variant.name, theirs.name, where);
        assert.deepEqual(ours.variant.payload, theirs.payload, where);
        compared++;
      }
    }
    assert.ok(compared > 20_000, `compared ${compared} answers`);
  });
});
