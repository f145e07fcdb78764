// The `code` of an error body is documented once per service (docs/reference/errors.md, checked
// against each catalogue by the services' own tests); here, every code a user page cites must be a
// code some response carries, at the status the page gives it.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { errorCatalogue as proxyCatalogue } from '@flags/proxy';
import { ofrepErrorCodes } from '@flags/schemas';
import { errorCatalogue as serverCatalogue } from '@flags/server';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

/** User pages: the README, docs/ (but its maintainers' corner) and the package READMEs. */
function userPages(dir = ROOT, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist' || name.startsWith('.')) continue;
    const path = join(dir, name);
    const page = relative(ROOT, path);
    if (statSync(path).isDirectory()) {
      if (page === 'docs' || page === 'packages' || /^packages\/[^/]+$/.test(page))
        userPages(path, out);
      else if (page.startsWith('docs/') && page !== 'docs/dev') userPages(path, out);
    } else if (
      name.endsWith('.md') &&
      (page === 'README.md' ||
        page.startsWith('docs/') ||
        /^packages\/[^/]+\/README\.md$/.test(page))
    ) {
      out.push(page);
    }
  }
  return out.sort();
}

/** Every status each code is answered with, in either service. */
const statuses = new Map<string, Set<number>>();
for (const catalogue of [proxyCatalogue, serverCatalogue]) {
  for (const [code, entry] of Object.entries(catalogue)) {
    statuses.set(code, (statuses.get(code) ?? new Set()).add(entry.status));
  }
}

/**
 * Codes cited the same way that are not error bodies' codes: OFREP's `errorCode`s (its own
 * protocol), and the readiness answers `/ready` and `/internal-backstage/ready` give.
 */
const OTHER_CODES = new Set<string>([...ofrepErrorCodes, 'READY', 'NOTREADY']);

/**
 * `401 \`NO_TOKEN\``, `code \`NO_TOKEN\``, `codes \`A\`, \`B\`` and codes joined to a cited one
 * by `/`, `,` or `or`.
 */
const CITATION =
  /(?:\b([1-5]\d\d)|\bcodes?) `([A-Z][A-Z0-9_]{2,})`((?:\s*(?:\/|,|or)\s*`[A-Z][A-Z0-9_]{2,}`)*)/g;

interface Citation {
  readonly page: string;
  readonly status: number | undefined;
  readonly code: string;
}

function citations(): Citation[] {
  const out: Citation[] = [];
  for (const page of userPages()) {
    const text = readFileSync(join(ROOT, page), 'utf8');
    for (const match of text.matchAll(CITATION)) {
      const status = match[1] === undefined ? undefined : Number(match[1]);
      const joined = [...(match[3] ?? '').matchAll(/`([A-Z][A-Z0-9_]{2,})`/g)].map((m) => m[1]!);
      for (const code of [match[2]!, ...joined]) out.push({ page, status, code });
    }
  }
  return out;
}

describe('error codes cited by the user pages', () => {
  it('are found (the pages cite codes the way this test reads them)', () => {
    const cited = new Set(citations().map((citation) => citation.code));
    for (const code of ['NO_TOKEN', 'INVALID_TOKEN', 'TOKEN_NOT_CHECKED', 'TOO_MANY_STREAMS']) {
      assert.ok(cited.has(code), `${code} is cited somewhere`);
    }
  });

  it('are each the code of a catalogue entry, at the status the page gives', () => {
    const wrong: string[] = [];
    for (const { page, status, code } of citations()) {
      if (OTHER_CODES.has(code)) continue;
      const known = statuses.get(code);
      if (known === undefined) wrong.push(`${page}: ${code} is in no catalogue`);
      else if (status !== undefined && !known.has(status))
        wrong.push(`${page}: ${status} ${code}, answered with ${[...known].join(' or ')}`);
    }
    assert.deepEqual(wrong, []);
  });
});
