// The plan without a server: the files' flags against a server's, field by field, what people own
// left as notes, drift named by the event that made it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Desired, type Flag, makePlan, manifestOf, parseCommandLine } from '@flags/cli';
import type { ServerState } from '../src/client.js';

const empty = (): Desired => ({
  projects: [],
  environments: [],
  segments: [],
  contextFields: [],
  tagTypes: [],
  flags: [],
});

const rollout = (percent: string): Flag => ({
  name: 'checkout',
  environments: {
    production: {
      enabled: true,
      strategies: [{ name: 'flexibleRollout', parameters: { rollout: percent } }],
      variants: [{ name: 'a' }, { name: 'b' }],
    },
  },
});

function inputs(
  wanted: Flag[],
  held: Flag[],
  events: { type: string; at: string; by: string }[] = [],
) {
  const desired = { ...empty(), flags: wanted.map((flag) => ({ project: 'default', flag })) };
  const server: ServerState = {
    desired: { ...empty(), flags: held.map((flag) => ({ project: 'default', flag })) },
    flags: new Map(
      held.map((flag) => [
        `default/${flag.name}`,
        { project: 'default', flag, etag: '"3"', strategyIds: {} },
      ]),
    ),
    segmentIds: new Map(),
  };
  return {
    files: {
      desired,
      managed: new Set<never>(),
      flagFiles: new Map(
        wanted.map((flag) => [
          `default/${flag.name}`,
          { file: `${flag.name}.yaml`, at: () => `${flag.name}.yaml:1:1` },
        ]),
      ),
    },
    server,
    events: async () =>
      events.map((event, i) => ({
        id: events.length - i,
        type: event.type,
        createdBy: event.by,
        createdAt: event.at,
        environment: 'production',
      })),
    fileTime: () => Date.parse('2026-01-01T00:00:00Z'),
  };
}

describe('plan', () => {
  it('finds nothing when the server holds what the files say', async () => {
    const plan = await makePlan(inputs([rollout('50')], [rollout('50')]));
    assert.deepEqual(plan, { actions: [], notes: [] });
  });

  it('names a changed field with its path, before and after', async () => {
    const plan = await makePlan(inputs([rollout('75')], [rollout('50')]));
    assert.equal(plan.actions.length, 1);
    assert.deepEqual(plan.actions[0]!.changes, [
      {
        op: '~',
        path: 'environments.production.strategies[0].parameters.rollout',
        before: '50',
        after: '75',
      },
    ]);
    assert.deepEqual(plan.actions[0]!.drift, []);
  });

  it('names variants by name: a removed one, an added one', async () => {
    const wanted = rollout('50');
    wanted.environments!.production!.variants = [{ name: 'a' }, { name: 'c' }];
    const plan = await makePlan(inputs([wanted], [rollout('50')]));
    assert.deepEqual(
      plan.actions[0]!.changes.map((change) => `${change.op} ${change.path}`),
      ['- environments.production.variants[b]', '+ environments.production.variants[c]'],
    );
  });

  it('leaves what people own as a note, and proposes nothing for it', async () => {
    const wanted = { ...rollout('50'), ui: ['enabled' as const] };
    const held = rollout('50');
    held.environments!.production!.enabled = false;
    const plan = await makePlan(inputs([wanted], [held]));
    assert.deepEqual(plan.actions, []);
    assert.equal(plan.notes.length, 1);
    assert.match(
      plan.notes[0]!.message,
      /^environments\.production\.enabled: false on the server, true in the file; people own "enabled" \(ui\), so it is left as it is$/,
    );
  });

  it('calls a change made on the server after the file drift, with the event’s author and time', async () => {
    const events = [
      { type: 'feature-strategy-update', at: '2026-02-01T10:00:00Z', by: 'alice' },
      { type: 'feature-created', at: '2025-12-01T10:00:00Z', by: 'ci' },
    ];
    const plan = await makePlan(inputs([rollout('50')], [rollout('99')], events));
    assert.deepEqual(plan.actions[0]!.drift, [
      {
        field: 'environments.production.strategies',
        by: 'alice',
        at: '2026-02-01T10:00:00Z',
        event: 'feature-strategy-update',
      },
    ]);
  });

  it('does not call a change drift when the file is newer than the server’s last write', async () => {
    const events = [{ type: 'feature-strategy-update', at: '2025-12-31T10:00:00Z', by: 'alice' }];
    const plan = await makePlan(inputs([rollout('50')], [rollout('99')], events));
    assert.deepEqual(plan.actions[0]!.drift, []);
  });

  it('creates flags without a server copy and archives server flags without a file; parents before children', async () => {
    const child: Flag = { name: 'child', dependencies: [{ feature: 'parent' }] };
    const parent: Flag = { name: 'parent' };
    const plan = await makePlan(inputs([child, parent], [{ name: 'gone' }]));
    assert.deepEqual(
      plan.actions.map((action) => `${action.action} ${action.name}`),
      ['create parent', 'create child', 'archive gone'],
    );
  });
});

describe('manifest', () => {
  it('types each flag by its variant payloads, with the default an evaluation falls back to', () => {
    const flag = (
      name: string,
      payloads: { type: 'string' | 'json' | 'number' | 'csv'; value: string }[],
    ): Flag => ({
      name,
      description: `${name} flag`,
      environments: {
        production: { variants: payloads.map((payload, i) => ({ name: `v${i}`, payload })) },
      },
    });
    const manifest = manifestOf({
      ...empty(),
      flags: [
        flag('plain', []),
        flag('text', [{ type: 'string', value: 'a' }]),
        flag('count', [{ type: 'number', value: '3' }]),
        flag('ratio', [{ type: 'number', value: '0.5' }]),
        flag('config', [{ type: 'json', value: '{}' }]),
        flag('mixed', [
          { type: 'json', value: '{}' },
          { type: 'string', value: 'x' },
        ]),
      ].map((f) => ({ project: 'default', flag: f })),
    });
    assert.equal(
      manifest.$schema,
      'https://raw.githubusercontent.com/open-feature/cli/main/schema/v0/flag-manifest.json',
    );
    assert.deepEqual(
      Object.fromEntries(
        Object.entries(manifest.flags).map(([key, f]) => [key, [f.flagType, f.defaultValue]]),
      ),
      {
        plain: ['boolean', false],
        text: ['string', ''],
        count: ['integer', 0],
        ratio: ['float', 0],
        config: ['object', {}],
        mixed: ['string', ''],
      },
    );
    assert.equal(manifest.flags.plain?.description, 'plain flag');
  });
});

describe('command line', () => {
  it('reads a command and its options, both spellings', () => {
    assert.deepEqual(
      parseCommandLine(['plan', '--dir=x', '--detailed-exitcode', '--output', 'json']),
      {
        name: 'plan',
        dir: 'x',
        detailedExitcode: true,
        output: 'json',
      },
    );
  });

  it('refuses an unknown command, option or output with the one meant', () => {
    assert.throws(
      () => parseCommandLine(['plna']),
      /unknown command "plna" \(did you mean plan\?\)/,
    );
    assert.throws(
      () => parseCommandLine(['plan', '--detailed-exit-code']),
      /unknown option --detailed-exit-code for plan \(did you mean --detailed-exitcode\?\)/,
    );
    assert.throws(
      () => parseCommandLine(['plan', '--output', 'yaml']),
      /--output is "yaml"; it takes text, json, markdown/,
    );
    assert.throws(() => parseCommandLine(['apply', '--url']), /--url needs a value/);
  });

  it('answers help and version wherever they stand', () => {
    assert.equal(parseCommandLine(['plan', '--help']), 'help');
    assert.equal(parseCommandLine(['-V']), 'version');
  });
});
