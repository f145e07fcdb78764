import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type ErrorCode, errorCatalogue } from '../src/errors.js';
import { smallPayload } from './fixtures/small.js';
import { CLIENT_KEY, call, type Running, startProxy, withKey } from './helpers/proxy.js';

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

describe('error answers', () => {
  let run: Running;
  before(async () => {
    run = await startProxy(smallPayload);
    await run.proxy.poller.ready;
  });
  after(() => run.close());

  it('carry the code of the catalogue entry they answer with, beside its name and message', async () => {
    const cases: [string, string, Record<string, string>, string | undefined, ErrorCode][] = [
      ['GET', '/nowhere', {}, undefined, 'NOT_FOUND'],
      ['GET', '/api/client/features', {}, undefined, 'NO_TOKEN'],
      ['GET', '/api/client/features', { authorization: 'wrong' }, undefined, 'INVALID_TOKEN'],
      ['GET', '/api/client/features', withKey(), undefined, 'WRONG_TOKEN_TYPE'],
      ['GET', '/api/frontend/features/no-such-flag', withKey(), undefined, 'FEATURE_NOT_FOUND'],
      ['GET', '/api/frontend?properties=x', withKey(), undefined, 'BAD_CONTEXT'],
      [
        'POST',
        '/api/frontend',
        withKey({ 'content-type': 'application/json' }),
        '{',
        'INVALID_JSON',
      ],
      [
        'POST',
        '/api/frontend',
        withKey({ 'content-type': 'text/csv' }),
        'a,b',
        'UNSUPPORTED_MEDIA_TYPE',
      ],
    ];
    for (const [method, path, headers, body, code] of cases) {
      const answer = await call(run, method, path, { headers, body });
      const entry = errorCatalogue[code];
      assert.equal(answer.status, entry.status, `${method} ${path}: ${answer.text}`);
      const error = answer.json();
      assert.equal(error.code, code, `${method} ${path}: ${answer.text}`);
      assert.equal(error.name, entry.name);
      assert.ok(Array.isArray(error.details) && error.details.length > 0);
    }
  });

  it('on `/proxy`, any key problem is the plain-text 401 Unleash Proxy answers, with no code', async () => {
    const keys: Record<string, string>[] = [
      {},
      { authorization: 'wrong' },
      { authorization: `${CLIENT_KEY}x` },
    ];
    for (const headers of keys) {
      const answer = await call(run, 'GET', '/proxy', { headers });
      assert.equal(answer.status, 401);
      assert.equal(answer.text, 'Unauthorized');
    }
  });
});
