import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { errorCatalogue } from '../src/errors.js';

const readme = readFileSync(fileURLToPath(new URL('../README.md', import.meta.url)), 'utf8');

/** The table rows between `<!-- errors:start -->` and `<!-- errors:end -->`, header excluded. */
function documentedRows(): string[] {
  const start = readme.indexOf('<!-- errors:start -->');
  const end = readme.indexOf('<!-- errors:end -->');
  assert.ok(start >= 0 && end > start, 'the README marks its errors table');
  return readme
    .slice(start, end)
    .split('\n')
    .filter((line) => line.startsWith('|'))
    .slice(2);
}

describe('the error catalogue and the README', () => {
  it('document every code of the catalogue with its name and status, and nothing else', () => {
    const documented = documentedRows().map((line) => {
      // | `Name` | status | `CODE` | when |
      const row = /^\| `(\w+)` \| (\d{3}) \| `(\w+)` \| (.+) \|$/.exec(line);
      assert.ok(row, `a well-formed row: ${line}`);
      const [, name, status, code, when] = row;
      assert.ok(when?.trim(), `${code} says when it is answered`);
      return `${code} ${name} ${status}`;
    });
    const catalogue = Object.entries(errorCatalogue).map(
      ([code, entry]) => `${code} ${entry.name} ${entry.status}`,
    );
    assert.equal(new Set(documented).size, documented.length, 'each code once');
    assert.deepEqual([...documented].sort(), [...catalogue].sort());
  });
});
