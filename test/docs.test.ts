// The user documentation stays usable: every relative link and anchor resolves, no user page (or
// `--help` text) reads like a record of how the work went, and the README stays short.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createProxy } from '@flags/proxy';
import GithubSlugger from 'github-slugger';
import { marked, type Token, type Tokens } from 'marked';
import { DEFAULT_PROBE_TIMEOUT_MS, DEFAULT_PROBE_URL } from '../packages/proxy/src/probe.js';
import { spawnEntry } from './helpers/processes.js';

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
      const command = spawnEntry(join(ROOT, main!), {}, args);
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

/** The statements of a page: each paragraph, list item and table cell, as written. */
function statements(tokens: readonly Token[]): string[] {
  const found: string[] = [];
  for (const token of walk(tokens)) {
    if (token.type === 'paragraph' || token.type === 'list_item')
      found.push((token as Tokens.Paragraph).text);
    if (token.type === 'table') {
      const table = token as Tokens.Table;
      for (const cell of [...table.header, ...table.rows.flat()]) found.push(cell.text);
    }
  }
  return found;
}

/**
 * A flags-proxy against a local upstream that serves `development` and refuses (401) the token of
 * `production`, started with `tokens`: whether `/internal-backstage/ready` answers 200 once every
 * startup token has been polled at least once.
 */
async function readyWith(tokens: string[]): Promise<boolean> {
  const accepted = tokens.filter((token) => token.includes(':development.'));
  const upstream = createServer((request, response) => {
    if (!accepted.includes(request.headers.authorization ?? '')) {
      response.writeHead(401, { 'content-type': 'application/json' }).end('{}');
      return;
    }
    response
      .writeHead(200, { 'content-type': 'application/json', etag: '"1"' })
      .end(JSON.stringify({ version: 2, features: [] }));
  });
  await new Promise<void>((done) => upstream.listen(0, '127.0.0.1', done));
  const { port } = upstream.address() as AddressInfo;
  const proxy = await createProxy({
    flagsUrl: `http://127.0.0.1:${port}/api`,
    flagsApiToken: tokens,
    clientKeys: ['readiness-client-key-0123456789abcdef'],
    refreshInterval: 50,
    metricsInterval: 0,
    logLevel: 'fatal',
  });
  try {
    const polled = () =>
      proxy.environments
        .all()
        .every((environment) => environment.state.ready || environment.refused);
    for (let waited = 0; !polled() && waited < 5000; waited += 20)
      await new Promise((done) => setTimeout(done, 20));
    assert.ok(polled(), 'every startup token was polled');
    const answer = await proxy.app.inject({ method: 'GET', url: '/internal-backstage/ready' });
    return answer.statusCode === 200;
  } finally {
    await proxy.app.close();
    await new Promise((done) => upstream.close(done));
  }
}

describe('what the pages say about flags-proxy readiness', () => {
  it('is what the program does: a refused startup token does not hold the others up, but one alone never makes the proxy ready', async () => {
    const secret = 'readiness-secret-0123456789abcdef';
    const synced = `*:development.${secret}`;
    const refused = `*:production.${secret}`;
    // What the program does, seen: the rule every page must state.
    assert.equal(await readyWith([synced, refused]), true, 'ready with the synced one');
    const readyWithNone = await readyWith([refused]);
    // A page stating readiness "once each environment is synced or its token refused" must
    // say what happens when every startup token is refused.
    // A sentence about readiness that speaks of a startup environment or token being refused.
    const statementsOfRule = userPages.flatMap((path) =>
      statements(page(path).tokens)
        .flatMap((text) => text.replace(/\s+/g, ' ').split(/(?<=\.)\s+|;\s+/))
        .filter((text) => /\/internal-backstage\/ready|\bREADY\b|\bready\b/.test(text))
        .filter((text) => /\brefus/i.test(text) && /startup environment|token/.test(text))
        .map((text) => ({ path, text })),
    );
    assert.ok(statementsOfRule.length >= 3, `found ${statementsOfRule.length} statements`);
    const exception = /not with none|one at least|at least one/;
    const wrong = statementsOfRule.filter(({ text }) => exception.test(text) === readyWithNone);
    assert.deepEqual(
      wrong,
      [],
      readyWithNone
        ? 'ready even when every startup token is refused: the pages must not say otherwise'
        : 'not ready while every startup token is refused: say so ("as long as one at least is synced")',
    );
  });
});

interface Manifest {
  readonly name: string;
  readonly bin?: string | Readonly<Record<string, string>>;
  readonly devDependencies?: Readonly<Record<string, string>>;
}

/** The commands a package's manifest installs (a string `bin` is named after the package). */
function bins(manifest: Manifest): string[] {
  if (typeof manifest.bin === 'string') return [manifest.name.replace(/^@[^/]+\//, '')];
  return Object.keys(manifest.bin ?? {});
}

const readManifest = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as Manifest;

/** Each `npx …` command line of a page: in its code blocks and code spans. */
function npxCommands(tokens: readonly Token[]): string[] {
  const found: string[] = [];
  for (const token of walk(tokens))
    if (token.type === 'code' || token.type === 'codespan')
      for (const match of (token as Tokens.Code).text.matchAll(/\bnpx\s[^\n`;&|]*/g))
        found.push(match[0].trim());
  return found;
}

describe('npx in the Markdown files', () => {
  // `npx <command>` without a package runs the command of the project it is run in, and where
  // none provides it, downloads the npm package of that name: `npx flags-proxy` is not ours.
  const ours = new Map(
    readdirSync(join(ROOT, 'packages'))
      .filter((name) => existsSync(join(ROOT, 'packages', name, 'package.json')))
      .map((name) => readManifest(join(ROOT, 'packages', name, 'package.json')))
      .map((manifest) => [manifest.name, bins(manifest)] as const),
  );
  // In a clone (the contributors' pages), the root's dev dependencies provide their commands.
  const developmentCommands = new Set(
    Object.keys(readManifest(join(ROOT, 'package.json')).devDependencies ?? {}).flatMap((name) =>
      bins(readManifest(join(ROOT, 'node_modules', name, 'package.json'))),
    ),
  );
  const forContributors = (path: string) =>
    path === 'CONTRIBUTING.md' || path.startsWith('docs/dev/');

  it('knows the commands of this repository’s packages', () => {
    assert.deepEqual(ours.get('@flags/proxy'), ['flags-proxy']);
    assert.deepEqual(ours.get('@flags/server'), ['flags-server']);
  });

  for (const path of markdownFiles()) {
    const commands = npxCommands(page(path).tokens);
    if (commands.length === 0) continue;
    it(`${path}: every npx names a package of this repository and a command it provides`, () => {
      const wrong = commands.filter((command) => {
        const words = command.split(/\s+/).slice(1);
        let pkg: string | undefined;
        while (words[0]?.startsWith('-')) {
          const option = words.shift()!;
          if (option === '-p' || option === '--package') pkg = words.shift();
          else if (option.startsWith('--package=')) pkg = option.slice('--package='.length);
        }
        const command_ = words[0] ?? '';
        if (pkg === undefined) return !(forContributors(path) && developmentCommands.has(command_));
        return !ours.get(pkg)?.includes(command_);
      });
      assert.deepEqual(wrong, [], 'write `npx -p @flags/<package> <command>`');
    });
  }
});

/** An option's defaults as its service's configuration table gives them (tested against its schema). */
interface Defaults {
  readonly page: string;
  readonly option: string;
  /** The default, and in flags-proxy's edge mode the edge default (`''`: none). */
  readonly values: readonly string[];
  /** A duration in milliseconds (`…Ms`, `…_MS`, or its meaning says `ms`). */
  readonly ms: boolean;
}

/** Every name of an option (in-code name and variables) → its defaults, from docs/configuration/. */
function optionDefaults(): Map<string, Defaults> {
  const byName = new Map<string, Defaults>();
  for (const path of ['docs/configuration/proxy.md', 'docs/configuration/server.md']) {
    const text = readFileSync(join(ROOT, path), 'utf8');
    const table = text.slice(
      text.indexOf('<!-- options:start -->'),
      text.indexOf('<!-- options:end -->'),
    );
    const proxy = path.endsWith('proxy.md');
    for (const line of table.split('\n')) {
      if (!line.startsWith('| `')) continue;
      const cells = line.split(' | ');
      const option = (cells[0] ?? '').replace(/^\| `|`$/g, '');
      const values = (proxy ? cells.slice(2, 4) : cells.slice(2, 3)).map((cell) =>
        cell.trim().replace(/^`|`$/g, ''),
      );
      const names = [
        option,
        ...[...(cells[1] ?? '').matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1]!),
      ];
      const ms = /Ms$/.test(option) || /[,(] ?ms\b/.test(cells.at(-1) ?? '');
      for (const name of names)
        if (!byName.has(name)) byName.set(name, { page: path, option, values, ms });
    }
  }
  return byName;
}

/** Text between `<!-- x:start -->` and `<!-- x:end -->` markers: generated, and tested elsewhere. */
const GENERATED = /<!-- ([\w-]+):start -->[\s\S]*?<!-- \1:end -->/g;

const UNITS: Readonly<Record<string, number>> = { KiB: 1024, MiB: 1024 * 1024, GiB: 1024 ** 3 };

/** Whether a default as written in prose (`on`, `off`, `1 MiB`, `4096`, `15 s`) is `value`. */
function sameDefault(stated: string, value: string, ms: boolean): boolean {
  const number = Number(value);
  // `auto` is `upstreamStreaming`'s on (streaming where the upstream streams, as `STREAMING=true`).
  if (stated === 'on') return value === 'true' || value === 'auto' || (value !== '' && number > 0);
  if (stated === 'off') return value === 'false' || value === '' || number === 0;
  const match = /^([\d.,]+)\s*(\w+)?$/.exec(stated);
  if (!match) return stated === value;
  const [, digits = '', unit = ''] = match;
  let amount = Number(digits.replace(/,/g, ''));
  if (unit in UNITS) amount *= UNITS[unit]!;
  if (ms && /^(s|seconds?)$/.test(unit)) amount *= 1000;
  if (ms && /^(min|minutes?)$/.test(unit)) amount *= 60_000;
  if (ms && /^hours?$/.test(unit)) amount *= 3_600_000;
  return amount === number;
}

/** Claims of a default in prose, each beside the option it is the default of. */
const CLAIMS = [
  // `ofrepEventStreams`, on by default · `ofrepEventStreamsMaxPerKey` (off by default
  /`([\w]+)`[,:]? \(?(on|off) by default/g,
  // `maxBodyBytes`, 1 MiB by default · `maxContextValueLength` (4096 characters by default)
  /`([\w]+)`[,:]? \(?(?:limit )?([\d.,]+(?: ?(?:KiB|MiB|GiB|ms|s|seconds?|min|minutes?))?)(?: characters| bytes)? by default/g,
  // `port` (default 3000) · `X` (default `Y`) · `X` defaults to `Y`
  /`([\w]+)` \(default `?([^`),;]+)`?[),;]/g,
  /`([\w]+)` defaults to `?([^`\s,;)]+)`?/g,
  // `upstreamTimeoutMs`, default 10 s · `bodyLimitBytes` (1 MiB) · `CLIENT_INSTANCE_RETENTION_DAYS` (7 days)
  /`([\w]+)`(?:,? default| \()(\d[\d,.]*(?: ?(?:KiB|MiB|GiB|ms|s|seconds?|min|minutes?|hours?|days?))?)[ ,;:)]/g,
  // `refreshInterval` (its default, 5 s, …)
  /`([\w]+)` \((?:at )?(?:the|its) default,? (\d[\d,.]*(?: ?(?:KiB|MiB|GiB|ms|s|seconds?|min|minutes?|hours?|days?))?)[ ,;:)]/g,
];

describe('defaults stated in prose', () => {
  it('are the defaults of the configuration tables', () => {
    const defaults = optionDefaults();
    assert.ok(defaults.get('PROXY_MAX_BODY_BYTES')?.values.includes('1048576'));
    const claims: { path: string; name: string; stated: string; right: boolean }[] = [];
    for (const path of userPages) {
      const text = readFileSync(join(ROOT, path), 'utf8').replace(GENERATED, '');
      for (const statement of statements(marked.lexer(text)).map((s) => s.replace(/\s+/g, ' ')))
        for (const claim of CLAIMS)
          for (const [, name = '', stated = ''] of statement.matchAll(claim)) {
            const known = defaults.get(name);
            if (known === undefined) continue;
            const right = known.values.some((value) => sameDefault(stated.trim(), value, known.ms));
            claims.push({ path, name, stated: stated.trim(), right });
          }
    }
    assert.ok(claims.length >= 4, `found ${claims.length} defaults stated in prose`);
    assert.deepEqual(
      claims.filter((claim) => !claim.right),
      [],
    );
  });
});

describe('the probes’ defaults stated in prose', () => {
  it('are the ones `flags-proxy ready` and `health` use', () => {
    const stated: { path: string; text: string }[] = [];
    const wrong: { path: string; text: string }[] = [];
    for (const path of userPages)
      for (const statement of statements(page(path).tokens).map((s) => s.replace(/\s+/g, ' ')))
        for (const clause of statement.split(/;\s+|(?<=\.)\s+/)) {
          if (
            !/`--(?:edge-)?url`|`-e\/--edge-url|`--timeout/.test(clause) ||
            !/default/.test(clause)
          )
            continue;
          stated.push({ path, text: clause });
          const urls = [...clause.matchAll(/`(https?:\/\/[^`]+)`/g)].map((m) => m[1]);
          const timeouts = [...clause.matchAll(/`--timeout[^`]*`[^.;]*?\b(\d+)\b/g)].map((m) =>
            Number(m[1]),
          );
          if (
            urls.some((url) => url !== DEFAULT_PROBE_URL) ||
            timeouts.some((ms) => ms !== DEFAULT_PROBE_TIMEOUT_MS)
          )
            wrong.push({ path, text: clause });
        }
    assert.ok(stated.length >= 2, `found ${stated.length} statements`);
    assert.deepEqual(wrong, []);
  });
});
