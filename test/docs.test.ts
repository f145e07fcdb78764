// The user documentation stays usable: every relative link and anchor resolves, no user page (or
// `--help` text) reads like a record of how the work went, and the README stays short.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import GithubSlugger from 'github-slugger';
import { marked, type Token, type Tokens } from 'marked';
import { spawnCommand } from './helpers/processes.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
/** Where the repository's files are read on GitHub. */
const REPOSITORY = 'https://github.com/flags-oss/flags/blob/main/';

/** Every Markdown file of the repository (paths from the root), outside dependencies and builds. */
function markdownFiles(dir = ROOT, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist' || name.startsWith('.')) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) markdownFiles(path, out);
    else if (name.endsWith('.md')) out.push(relative(ROOT, path));
  }
  return out.sort();
}

/** Pages written for users: the README, docs/ (but its maintainers' corner) and the package READMEs. */
const userPages = markdownFiles().filter(
  (path) =>
    !path.startsWith('docs/dev/') &&
    !path.startsWith('bench/') &&
    !path.startsWith('test/') &&
    path !== 'CONTRIBUTING.md',
);

/** Each token and the tokens inside it (inline tokens, list items, table cells), depth first. */
function* walk(tokens: readonly Token[]): Generator<Token> {
  for (const token of tokens) {
    yield token;
    if (token.type === 'table') {
      const table = token as Tokens.Table;
      for (const cell of [...table.header, ...table.rows.flat()]) yield* walk(cell.tokens);
    }
    if (token.type === 'list') for (const item of (token as Tokens.List).items) yield* walk([item]);
    if ('tokens' in token && Array.isArray(token.tokens)) yield* walk(token.tokens);
  }
}

/** The text a reader sees of some inline tokens (the text GitHub builds a heading's anchor from). */
function plainText(tokens: readonly Token[]): string {
  return tokens
    .map((token) => {
      if ('tokens' in token && Array.isArray(token.tokens)) return plainText(token.tokens);
      if (token.type === 'codespan' || token.type === 'text' || token.type === 'escape')
        return (token as Tokens.Text).text;
      return '';
    })
    .join('');
}

interface Page {
  readonly tokens: readonly Token[];
  /** The anchors GitHub gives the page's headings (a repeated heading gets `-1`, `-2`, …). */
  readonly anchors: ReadonlySet<string>;
}

const pages = new Map<string, Page>();
function page(path: string): Page {
  let parsed = pages.get(path);
  if (!parsed) {
    const tokens = marked.lexer(readFileSync(join(ROOT, path), 'utf8'));
    const slugger = new GithubSlugger();
    const anchors = new Set<string>();
    for (const token of walk(tokens))
      if (token.type === 'heading')
        anchors.add(slugger.slug(plainText((token as Tokens.Heading).tokens)));
    parsed = { tokens, anchors };
    pages.set(path, parsed);
  }
  return parsed;
}

describe('links in the Markdown files', () => {
  for (const path of markdownFiles()) {
    it(`${path}: every relative link and anchor resolves`, () => {
      const broken: string[] = [];
      for (const token of walk(page(path).tokens)) {
        if (token.type !== 'link' && token.type !== 'image') continue;
        const href = (token as Tokens.Link).href;
        // Links into this repository on GitHub (the package READMEs, read on npm) are checked here too.
        const local = href.startsWith(REPOSITORY) ? href.slice(REPOSITORY.length) : href;
        if (/^[a-z][a-z+.-]*:/i.test(local)) continue; // https:, mailto: …: not ours to check
        const [target = '', anchor] = local.split('#', 2);
        const base = local === href ? dirname(path) : '';
        const file = target === '' ? path : relative(ROOT, resolve(ROOT, base, decodeURI(target)));
        if (!existsSync(join(ROOT, file))) {
          broken.push(`${href} (no ${file})`);
          continue;
        }
        if (anchor !== undefined && file.endsWith('.md') && !page(file).anchors.has(anchor))
          broken.push(`${href} (no heading of ${file} has the anchor #${anchor})`);
      }
      assert.deepEqual(broken, [], `${path} links to what is not there`);
    });
  }
});

/**
 * Words of a run diary: clock times, benchmark "rounds", processor names, the time of day a run
 * was made. Figures belong on the performance page with how to reproduce them, not when and where.
 */
const DIARY =
  /\b(rounds?\b(?!\()|\d{1,2}:\d{2}\b(?! UTC)|Xeon|EPYC|Intel|AMD|Ryzen|this morning|that night|the night before)/i;

/** The prose of a page: its text outside code blocks and code spans. */
function prose(tokens: readonly Token[]): string[] {
  const lines: string[] = [];
  for (const token of walk(tokens))
    if (token.type === 'text' && !('tokens' in token && Array.isArray(token.tokens)))
      lines.push((token as Tokens.Text).text);
  return lines;
}

describe('user pages', () => {
  it('are found (README, docs/, the package READMEs)', () => {
    assert.ok(userPages.includes('README.md'));
    assert.ok(userPages.includes('docs/getting-started.md'));
    assert.ok(userPages.includes('packages/proxy/README.md'));
  });

  for (const path of userPages) {
    it(`${path} holds no run diary (clock times, rounds, processor names)`, () => {
      const found = prose(page(path).tokens).filter((text) => DIARY.test(text));
      assert.deepEqual(found, []);
    });
  }

  it('the README is at most 150 lines', () => {
    const lines = readFileSync(join(ROOT, 'README.md'), 'utf8').trimEnd().split('\n');
    assert.ok(lines.length <= 150, `README.md has ${lines.length} lines`);
  });
});

/** Each file under a folder whose name ends with `.ts`, recursively. */
function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(join(ROOT, dir))) {
    const path = join(dir, name);
    if (statSync(join(ROOT, path)).isDirectory()) sourceFiles(path, out);
    else if (name.endsWith('.ts')) out.push(path);
  }
  return out;
}

/**
 * The messages the services log with a string of their own (`log.warn({…}, 'message')`): the
 * text before the first `${…}`, up to 40 characters (the page writes the varying parts as
 * `<name>` and may shorten a long message with `…`).
 */
function loggedMessages(): { file: string; message: string }[] {
  const found: { file: string; message: string }[] = [];
  for (const dir of ['packages/proxy/src', 'packages/server/src', 'packages/serving/src'])
    for (const file of sourceFiles(dir)) {
      const text = readFileSync(join(ROOT, file), 'utf8');
      const call =
        /\b(?:log|logger)\.(?:fatal|error|warn|info)\(\s*(?:\{[^}]*\}|[\w.]+)\s*,\s*(['`])((?:(?!\1)[^\\]|\\.)*)\1\s*,?\s*\)/g;
      for (const match of text.matchAll(call)) {
        const message = (match[2] ?? '').split('${')[0]!.slice(0, 40).trim();
        if (message.length >= 8) found.push({ file, message });
      }
    }
  return found;
}

describe('docs/troubleshooting.md', () => {
  it('explains every message the services log', () => {
    const page = readFileSync(join(ROOT, 'docs/troubleshooting.md'), 'utf8');
    const messages = loggedMessages();
    assert.ok(messages.length > 40, `found ${messages.length} log calls`);
    const missing = messages.filter(({ message }) => !page.includes(message));
    assert.deepEqual(missing, []);
  });
});

describe('--help', () => {
  const commands: [string, string[]][] = [
    ['flags-proxy', ['packages/proxy/src/main.ts', '--help']],
    ['flags-proxy edge', ['packages/proxy/src/main.ts', 'edge', '--help']],
    ['flags-proxy offline', ['packages/proxy/src/main.ts', 'offline', '--help']],
    ['flags-server', ['packages/server/src/main.ts', '--help']],
  ];
  for (const [name, [main, ...args]] of commands) {
    it(`${name} --help speaks to users: no rounds, issues, sessions of work or clock times`, async () => {
      const command = spawnCommand(
        process.execPath,
        ['--conditions=source', '--import', 'tsx', join(ROOT, main!), ...args],
        {},
      );
      assert.equal(await command.exited, 0, command.output());
      const help = command.output();
      assert.ok(help.length > 1000, `${name} --help prints its options`);
      const found = help
        .split('\n')
        .filter((line) => /\b(rounds?|issues?|README|\d{1,2}:\d{2})\b|(^|\s)#\d+\b/i.test(line));
      assert.deepEqual(found, []);
    });
  }
});
