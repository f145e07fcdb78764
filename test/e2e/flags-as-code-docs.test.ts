// The examples of docs/flags-as-code.md: every file shown there validates against the JSON Schema
// the package publishes (checked by Ajv, an independent validator), and together they read as a
// directory `flags plan` accepts.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { FILE_KINDS, flagsSchema, readDirectory } from '@flags/cli';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { parse } from 'yaml';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const page = readFileSync(join(ROOT, 'docs/flags-as-code.md'), 'utf8');

/** The YAML blocks of the page that are files of the directory: their first line names them. */
const examples = [...page.matchAll(/```yaml\n# (flags\/[^\n]+)\n([\s\S]*?)```/g)].map((match) => ({
  path: match[1]!,
  text: `${match[2]}`,
}));

const kindOf = (path: string): keyof typeof FILE_KINDS =>
  /^flags\/[^/]+\/[^/]+\.yaml$/.test(path)
    ? 'flag'
    : (
        {
          'flags/projects.yaml': 'projects',
          'flags/environments.yaml': 'environments',
          'flags/segments.yaml': 'segments',
          'flags/context-fields.yaml': 'contextFields',
          'flags/tag-types.yaml': 'tagTypes',
        } as const
      )[path]!;

const ajv = new Ajv2020({ allErrors: true, strict: false });
ajv.addSchema(flagsSchema, 'flags');

describe('docs/flags-as-code.md', () => {
  const work = mkdtempSync(join(tmpdir(), 'flags-as-code-docs-'));
  after(() => rmSync(work, { recursive: true, force: true }));

  it('shows a file of every kind', () => {
    assert.deepEqual(
      [...new Set(examples.map((example) => kindOf(example.path)))].sort(),
      Object.keys(FILE_KINDS).sort(),
    );
  });

  for (const example of examples) {
    it(`${example.path} validates against the published JSON Schema`, () => {
      const validate = ajv.getSchema(`flags#/$defs/${kindOf(example.path)}`)!;
      const valid = validate(parse(example.text));
      assert.ok(valid, JSON.stringify(validate.errors));
    });
  }

  it('the schema refuses an unknown key, as the command does', () => {
    const validate = ajv.getSchema('flags#/$defs/flag')!;
    assert.equal(validate({ name: 'x', enviroments: {} }), false);
  });

  it('the examples together are a directory the command accepts', () => {
    for (const example of examples) {
      const file = join(work, example.path);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, example.text);
    }
    const { desired } = readDirectory(join(work, 'flags'));
    assert.deepEqual(
      desired.flags.map(({ flag }) => flag.name),
      ['checkout.new-flow'],
    );
  });
});
