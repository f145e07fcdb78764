import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { errorCatalogue } from '../src/errors.js';

const page = readFileSync(
  fileURLToPath(new URL('../../../docs/reference/errors.md', import.meta.url)),
  'utf8',
);

/** The table rows between `<!-- proxy-errors:start -->` and `<!-- proxy-errors:end -->`, header excluded. */
function documentedRows(): string[] {
  const start = page.indexOf('<!-- proxy-errors:start -->');
  const end = page.indexOf('<!-- proxy-errors:end -->');
  assert.ok(start >= 0 && end > start, 'docs/reference/errors.md marks the proxy errors table');
  return page
    .slice(start, end)
    .split('\n')
    .filter((line) => line.startsWith('|'))
    .slice(2);
}

describe('the error catalogue and docs/reference/errors.md', () => {
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
