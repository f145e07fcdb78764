// The files of `flags`: what a good directory reads as, and ten kinds of bad file, each refused
// with its file:line:column and what is wrong.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { FileError, readDirectory, writeDirectory } from '@flags/cli';

const roots: string[] = [];
after(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

/** A directory holding `files` (path → text). */
function directory(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'flags-files-'));
  roots.push(root);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

const GOOD = {
  'environments.yaml':
    'environments:\n  - name: development\n    type: development\n  - name: production\n    type: production\n',
  'segments.yaml':
    'segments:\n  - name: beta-testers\n    constraints:\n      - contextName: userId\n        operator: IN\n        values: [a, b]\n',
  'tag-types.yaml': 'tagTypes:\n  - name: simple\n',
  'default/parent.yaml': 'name: parent\nenvironments:\n  production:\n    enabled: true\n',
  'default/checkout.yaml': [
    'name: checkout',
    'type: experiment',
    'description: The new checkout',
    'ui: [enabled]',
    'environments:',
    '  production:',
    '    enabled: false',
    '    strategies:',
    '      - name: flexibleRollout',
    '        parameters: { rollout: "25", stickiness: default, groupId: checkout }',
    '        segments: [beta-testers]',
    '    variants:',
    '      - name: blue',
    '        payload: { type: string, value: blue }',
    'dependencies:',
    '  - feature: parent',
    'tags:',
    '  - { type: simple, value: team-a }',
    '',
  ].join('\n'),
};

/** The problems of a directory: GOOD with `changes` (a file to `null` removes it). */
function problemsOf(changes: Record<string, string | null>): string[] {
  const files: Record<string, string> = { ...GOOD };
  for (const [path, text] of Object.entries(changes)) {
    if (text === null) delete files[path];
    else files[path] = text;
  }
  try {
    readDirectory(directory(files));
  } catch (error) {
    assert.ok(error instanceof FileError, String(error));
    return [...error.problems];
  }
  return [];
}

const checkout = GOOD['default/checkout.yaml'];

describe('reading the files', () => {
  it('reads a good directory into its canonical form, defaults left out', () => {
    const { desired, managed } = readDirectory(directory(GOOD));
    assert.deepEqual([...managed].sort(), ['environments.yaml', 'segments.yaml', 'tag-types.yaml']);
    const flag = desired.flags.find(({ flag }) => flag.name === 'checkout');
    assert.deepEqual(flag, {
      project: 'default',
      flag: {
        name: 'checkout',
        type: 'experiment',
        description: 'The new checkout',
        ui: ['enabled'],
        environments: {
          production: {
            enabled: false,
            strategies: [
              {
                name: 'flexibleRollout',
                parameters: { groupId: 'checkout', rollout: '25', stickiness: 'default' },
                segments: ['beta-testers'],
              },
            ],
            variants: [{ name: 'blue', payload: { type: 'string', value: 'blue' } }],
          },
        },
        dependencies: [{ feature: 'parent' }],
        tags: [{ type: 'simple', value: 'team-a' }],
      },
    });
  });

  it('writes what it reads: a written directory reads back the same', () => {
    const { desired } = readDirectory(directory(GOOD));
    desired.projects = [{ id: 'default' }];
    const root = directory({});
    writeDirectory(root, desired);
    assert.deepEqual(readDirectory(root).desired.flags, desired.flags);
    const text = readFileSync(join(root, 'default/checkout.yaml'), 'utf8');
    assert.match(
      text,
      /^# yaml-language-server: \$schema=\.\.\/flags\.schema\.json#\/\$defs\/flag\n/,
    );
  });

  it('keeps a flag file’s ui list when a pull writes it again (the server does not know it)', () => {
    const root = directory(GOOD);
    const { desired } = readDirectory(root);
    desired.projects = [{ id: 'default' }];
    const fromServer = desired.flags.map(({ project, flag }) => {
      const { ui: _ui, ...rest } = flag;
      return { project, flag: rest };
    });
    writeDirectory(root, { ...desired, flags: fromServer });
    const again = readDirectory(root).desired.flags.find(({ flag }) => flag.name === 'checkout');
    assert.deepEqual(again?.flag.ui, ['enabled']);
  });

  const BAD: [string, Record<string, string | null>, RegExp][] = [
    [
      'YAML that does not parse',
      { 'default/checkout.yaml': 'name: checkout\nenvironments: [production\n' },
      /^default\/checkout\.yaml:\d+:\d+: /,
    ],
    [
      'an unknown key, with the one meant',
      { 'default/checkout.yaml': checkout.replace('description:', 'descripton:') },
      /^default\/checkout\.yaml:3:1: unknown key "descripton" \(did you mean "description"\?\)$/,
    ],
    [
      'a value of the wrong type',
      { 'default/checkout.yaml': checkout.replace('enabled: false', 'enabled: "no"') },
      /^default\/checkout\.yaml:7:14: environments\.production\.enabled is string "no"; expected boolean$/,
    ],
    [
      'a parameter that is a number, not a string',
      { 'default/checkout.yaml': checkout.replace('rollout: "25"', 'rollout: 25') },
      /^default\/checkout\.yaml:10:32: environments\.production\.strategies\[0\]\.parameters\.rollout is integer 25; expected string$/,
    ],
    [
      'a required key missing',
      {
        'default/checkout.yaml': checkout.replace(
          '      - name: flexibleRollout\n',
          '      - title: rollout\n',
        ),
      },
      /^default\/checkout\.yaml:9:9: environments\.production\.strategies\[0\] needs "name"$/,
    ],
    [
      'an operator that does not exist',
      { 'segments.yaml': GOOD['segments.yaml'].replace('operator: IN', 'operator: EQUALS') },
      /^segments\.yaml:5:19: segments\[0\]\.constraints\[0\]\.operator is "EQUALS"; expected one of IN, NOT_IN/,
    ],
    [
      'a name that differs from the file name',
      { 'default/checkout.yaml': checkout.replace('name: checkout\n', 'name: check-out\n') },
      /^default\/checkout\.yaml:1:7: name "check-out" differs from the file name/,
    ],
    [
      'an environment that is not in environments.yaml',
      { 'default/checkout.yaml': checkout.replace('  production:', '  prod:') },
      /^default\/checkout\.yaml:6:3: environment "prod" is not in environments\.yaml \(development, production\)$/,
    ],
    [
      'a segment that is not in segments.yaml',
      { 'default/checkout.yaml': checkout.replace('[beta-testers]', '[beta]') },
      /^default\/checkout\.yaml:11:19: segment "beta" is not in segments\.yaml$/,
    ],
    [
      'a parent flag without a file',
      { 'default/parent.yaml': null },
      /^default\/checkout\.yaml:16:14: parent flag "parent" has no file$/,
    ],
    [
      'a variant weight out of range',
      {
        'default/checkout.yaml': checkout.replace(
          '      - name: blue\n',
          '      - name: blue\n        weight: 1200\n',
        ),
      },
      /^default\/checkout\.yaml:14:17: environments\.production\.variants\[0\]\.weight is 1200; the most allowed is 1000$/,
    ],
    [
      'a file the directory does not know',
      { 'context.yaml': 'contextFields: []\n' },
      /^context\.yaml:1:1: unknown file; the top of the directory holds projects\.yaml, /,
    ],
    [
      'an ownership that names no part of a flag',
      { 'default/checkout.yaml': checkout.replace('ui: [enabled]', 'ui: [enable]') },
      /^default\/checkout\.yaml:4:6: ui\[0\] is "enable"; expected one of definition, enabled, /,
    ],
  ];
  for (const [kind, changes, expected] of BAD) {
    it(`refuses ${kind}, naming file:line:column`, () => {
      const problems = problemsOf(changes);
      assert.equal(problems.length, 1, problems.join('\n'));
      assert.match(problems[0]!, expected);
    });
  }

  it('reports every problem of every file at once', () => {
    const problems = problemsOf({
      'default/checkout.yaml': checkout
        .replace('description:', 'descripton:')
        .replace('enabled: false', 'enabled: 1'),
      'segments.yaml': GOOD['segments.yaml'].replace('operator: IN', 'operator: EQUALS'),
    });
    assert.equal(problems.length, 3, problems.join('\n'));
  });
});
