import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { readmesWithConfigTables } from '../scripts/config-tables.js';

const read = (path: string) => readFileSync(new URL(`../${path}`, import.meta.url), 'utf8');

/** The option rows (lines starting with "| `") of every table between a page's markers. */
function optionRows(markdown: string, marker: string): string[] {
  const start = markdown.indexOf(`<!-- ${marker}:start -->`);
  const end = markdown.indexOf(`<!-- ${marker}:end -->`);
  assert.ok(start >= 0 && end > start, `section ${marker}`);
  return markdown
    .slice(start, end)
    .split('\n')
    .filter((line) => line.startsWith('| `'));
}

describe('README', () => {
  it('gives the quick start: clone, npm ci, npm start', () => {
    const root = read('README.md');
    assert.match(root, /git clone \S+/);
    assert.match(root, /npm ci && npm start/);
  });
});

describe('configuration tables', () => {
  it('are the ones the option schemas generate (npm run docs:config rewrites them)', () => {
    for (const page of readmesWithConfigTables()) {
      assert.equal(read(page.path), page.text, `${page.path} is up to date`);
    }
  });

  it('list each option of a service once, in one table of docs/configuration/', () => {
    for (const [path, markers, least] of [
      ['docs/configuration/proxy.md', ['options', 'offline-options'], 40],
      ['docs/configuration/server.md', ['options'], 10],
    ] as const) {
      const page = read(path);
      const names = markers.flatMap((marker) =>
        optionRows(page, marker).map((row) => row.split('|')[1]?.trim()),
      );
      assert.ok(names.length > least, `${path} has its tables`);
      assert.equal(new Set(names).size, names.length, `${path} lists each option once`);
    }
  });

  it('appear on no other page (a copy would go stale)', () => {
    for (const path of ['README.md', 'packages/proxy/README.md', 'packages/server/README.md'])
      assert.doesNotMatch(read(path), /<!-- [\w-]*options:start -->/, path);
  });
});
