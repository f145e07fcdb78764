// `migrate verify` compares `/api/client/features` as an SDK reads it: what changes nothing for an
// SDK is no difference (unleash-server 8.2 lists a flag's dependency once per strategy of the flag;
// an SDK checks each dependency and gets the same answer however often it is listed).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { clientView } from '../../src/migrate/verify.js';

const strategy = (rollout: string) => ({
  name: 'flexibleRollout',
  parameters: { rollout, stickiness: 'default', groupId: 'child' },
  constraints: [],
});

const child = (dependencies: unknown[], strategies = [strategy('50'), strategy('10')]) => ({
  features: [{ name: 'child', project: 'default', enabled: true, strategies, dependencies }],
});

describe("migrate verify's view of the client API", () => {
  it('takes a dependency listed once per strategy as the same as listed once', () => {
    const parent = { feature: 'parent', enabled: true, variants: ['a'] };
    assert.deepEqual(clientView(child([parent, parent])), clientView(child([parent])));
  });

  it('still tells different dependencies and strategy orders apart', () => {
    const parent = { feature: 'parent', enabled: true };
    assert.notDeepEqual(
      clientView(child([parent])),
      clientView(child([{ ...parent, enabled: false }])),
    );
    assert.notDeepEqual(clientView(child([parent])), clientView(child([])));
    assert.notDeepEqual(
      clientView(child([parent])),
      clientView(child([parent], [strategy('10'), strategy('50')])),
    );
  });
});
