import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { readmesWithConfigTables } from '../scripts/config-tables.js';

const read = (path: string) => readFileSync(new URL(`../${path}`, import.meta.url), 'utf8');

/** The table rows of a README (lines starting with "| `"), in order. */
function optionRows(markdown: string, after: string): string[] {
  const start = markdown.indexOf(after);
  assert.ok(start >= 0, `section ${after}`);
  const lines = markdown.slice(start).split('\n');
  const first = lines.findIndex((line) => line.startsWith('| Option |'));
  const rows: string[] = [];
  for (const line of lines.slice(first + 2)) {
    if (!line.startsWith('|')) break;
    rows.push(line);
  }
  return rows;
}

// The package READMEs are tested against the option tables in code; the root README must carry
// the same rows, so every option, env var and default a newcomer reads there is true.
describe('README', () => {
  const root = read('README.md');

  it('carries the flags-proxy configuration table of packages/proxy', () => {
    const rows = optionRows(read('packages/proxy/README.md'), '## Configuration');
    assert.ok(rows.length > 40);
    assert.deepEqual(optionRows(root, '### flags-proxy'), rows);
  });

  it('carries the flags-server configuration table of packages/server', () => {
    const rows = optionRows(read('packages/server/README.md'), '<!-- options:start -->');
    assert.ok(rows.length > 10);
    assert.deepEqual(optionRows(root, '### flags-server'), rows);
  });

  it('gives the two quick-start commands', () => {
    assert.match(root, /npm ci && npm start/);
    assert.match(root, /npm ci && npm test/);
  });
});

describe('configuration tables', () => {
  it('are the ones the option schemas generate (npm run docs:config rewrites them)', () => {
    for (const readme of readmesWithConfigTables()) {
      assert.equal(read(readme.path), readme.text, `${readme.path} is up to date`);
    }
  });
});
