// test-runs: once (a slow end-to-end suite: CI runs it on one Node.js line, scripts/run-tests.mjs)
// The `flags-server` command line: it is configured by environment variables, so anything on the
// command line besides --help and --version stops the start before anything is read, opened or
// listened on (issue 47: `flags-server --version` used to start a server with a database in ./data).
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  exitStatusWithin,
  freePort,
  runEntry,
  spawnEntry,
} from '../../../test/helpers/processes.js';

const MAIN = fileURLToPath(new URL('../src/main.ts', import.meta.url));
const VERSION = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    version: string;
  }
).version;

const dir = mkdtempSync(join(tmpdir(), 'flags-server-command-line-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/**
 * `flags-server …args` with a data directory of its own and a free port: its exit status (`'still
 * running'` when it had not exited within 20 s: it was started, and is stopped here), what it
 * wrote, and whether it created the data directory.
 */
async function run(args: readonly string[], name: string) {
  const dataDir = join(dir, name);
  const result = await runEntry(MAIN, args, {
    DATA_DIR: dataDir,
    PORT: String(await freePort()),
    SERVER_HOST: '127.0.0.1',
  });
  return { ...result, createdDataDir: existsSync(dataDir) };
}

describe('flags-server command line', () => {
  for (const flag of ['--version', '-V'])
    it(`${flag} prints the package version and exits 0, starting nothing`, async () => {
      const result = await run([flag], `version${flag}`);
      assert.equal(result.status, 0, result.output);
      assert.equal(result.output, `flags-server ${VERSION}\n`);
      assert.equal(result.createdDataDir, false);
    });

  const refused: [readonly string[], RegExp][] = [
    [['--bogus'], /^flags-server: unknown option --bogus\n/],
    [['--verison'], /^flags-server: unknown option --verison \(did you mean --version\?\)\n/],
    [['-x'], /^flags-server: unknown option -x\n/],
    [['serve'], /^flags-server: unexpected argument "serve"\n/],
    // Its options are variables: the message says which to set instead.
    [
      ['--port', '8080'],
      /^flags-server: unknown option --port: flags-server is configured by environment variables, set PORT=8080 instead\n/,
    ],
    // A secret's value is not written back.
    [
      ['--database-url=postgres://flags:secret@db/flags'],
      /^flags-server: unknown option --database-url: flags-server is configured by environment variables, set DATABASE_URL instead\n/,
    ],
    [
      ['--prot', '8080'],
      /^flags-server: unknown option --prot: flags-server is configured by environment variables, did you mean PORT\?\n/,
    ],
  ];
  for (const [args, message] of refused)
    it(`refuses \`flags-server ${args.join(' ')}\` with exit 2, naming it, starting nothing`, async () => {
      const result = await run(args, `refused-${args[0]}`);
      assert.equal(result.status, 2, result.output);
      assert.match(result.output, message);
      assert.match(
        result.output,
        /\nRun `flags-server --help` for the variables and examples\.\n$/,
      );
      assert.equal(result.createdDataDir, false);
    });

  it('names every problem at once', async () => {
    const result = await run(['--bogus', 'extra'], 'refused-two');
    assert.equal(result.status, 2, result.output);
    assert.match(
      result.output,
      /^flags-server: unknown option --bogus\nflags-server: unexpected argument "extra"\n/,
    );
  });

  it('--help opens with the synopsis and five examples, the variables after', async () => {
    const result = await run(['--help'], 'help');
    assert.equal(result.status, 0, result.output);
    const [synopsis, , summary] = result.output.split('\n');
    assert.equal(
      synopsis,
      'Usage: flags-server [-h|--help] [-V|--version] | health|ready [--url <base>] [--timeout <ms>] | migrate from-unleash|verify …',
    );
    assert.match(result.output, /\n {2}flags-server migrate from-unleash --url <URL> --token /);
    assert.match(result.output, /\n {2}flags-server ready \[--url <base>\] \[--timeout <ms>\]\n/);
    assert.match(summary ?? '', /^flags-server: /);
    const examples = result.output.slice(
      result.output.indexOf('\nExamples:\n'),
      result.output.indexOf('\nCommands:\n'),
    );
    const commands = examples.split('\n').filter((line) => line.startsWith('    '));
    assert.equal(commands.length, 5, examples);
    for (const command of commands) assert.match(command, /flags-server$/);
    assert.match(examples, /DATABASE_URL=postgres:\/\//);
    assert.match(examples, /FLAGS_ADMIN_TOKENS=/);
    assert.match(examples, /PUBLIC_URL=https:\/\/.* TRUST_PROXY=/);
    assert.ok(
      result.output.indexOf('  SERVER_PORT, PORT  (port') > result.output.indexOf(examples),
    );
    assert.equal(result.createdDataDir, false);
  });

  it('migrate --help gives its synopsis, options and examples, starting nothing', async () => {
    for (const args of [
      ['migrate', '--help'],
      ['migrate', 'from-unleash', '--help'],
    ]) {
      const result = await run(args, `migrate-help-${args.length}`);
      assert.equal(result.status, 0, result.output);
      assert.match(
        result.output,
        /^Usage:\n {2}flags-server migrate from-unleash --url <unleash-server URL> --token <admin token> \[--database <URL>\] \[--dry-run\]\n {2}flags-server migrate verify /,
      );
      for (const option of [
        '--url',
        '--token',
        '--database',
        '--dry-run',
        '--flags-url',
        '--contexts',
      ])
        assert.match(result.output, new RegExp(`\\n {6}${option} `), option);
      assert.match(result.output, /\nExamples:\n(.|\n)*--dry-run\n/);
      assert.equal(result.createdDataDir, false);
    }
  });

  const migrateRefused: [readonly string[], RegExp][] = [
    [['migrate'], /^Usage:\n/],
    [
      ['migrate', 'from-unleash', '--url', 'http://x', '--token', 't', '--dryrun'],
      /^flags-server migrate: unknown option --dryrun for migrate from-unleash \(did you mean --dry-run\?\)\n/,
    ],
    [
      ['migrate', 'from-unleash', '--url', 'http://x'],
      /^flags-server migrate: migrate from-unleash needs --token\n/,
    ],
    [
      ['migrate', 'verify', '--url', 'http://x', '--token', 't', '--contexts', 'many'],
      /^flags-server migrate: --contexts takes a whole number of 1 or more, not "many"\n/,
    ],
    [
      ['migrate', 'from-unleash', '--url', 'http://x', '--token', 't', '--flags-url', 'http://y'],
      /^flags-server migrate: unknown option --flags-url for migrate from-unleash\n/,
    ],
    [
      ['migrate', 'frm-unleash'],
      /^flags-server migrate: unknown migrate command "frm-unleash" \(did you mean from-unleash\?\)/,
    ],
  ];
  for (const [args, message] of migrateRefused)
    it(`refuses \`flags-server ${args.join(' ')}\` with exit 2, starting nothing`, async () => {
      const result = await run(args, `migrate-refused-${args.length}-${args[1]}`);
      assert.equal(result.status, 2, result.output);
      assert.match(result.output, message);
      if (args.length > 1)
        assert.match(
          result.output,
          /\nRun `flags-server migrate --help` for its options and examples\.\n$/,
        );
      assert.equal(result.createdDataDir, false);
    });

  it('migrate from-unleash names an unreachable unleash-server, exits 1 and creates no database', async () => {
    const port = await freePort();
    const result = await run(
      ['migrate', 'from-unleash', '--url', `http://127.0.0.1:${port}`, '--token', '*:*.secret'],
      'migrate-unreachable',
    );
    assert.equal(result.status, 1, result.output);
    assert.match(
      result.output,
      /flags-server migrate from-unleash: cannot reach unleash-server at http:\/\/127\.0\.0\.1:\d+\/ \(ECONNREFUSED\); check --url and that it is running; nothing was written\n$/,
    );
    assert.equal(result.createdDataDir, false);
  });

  it('migrate goes on to its end when its output is no longer read (`| head`), without a stack trace', async () => {
    const port = await freePort();
    const entry = spawnEntry(MAIN, { DATA_DIR: join(dir, 'migrate-closed-output') }, [
      'migrate',
      'from-unleash',
      '--url',
      `http://127.0.0.1:${port}`,
      '--token',
      '*:*.secret',
    ]);
    // The reader is gone before the command writes its first line.
    entry.child.stdout?.destroy();
    assert.equal(await exitStatusWithin(entry, 20_000), 1, entry.output());
    assert.match(
      entry.output(),
      /^flags-server migrate from-unleash: cannot reach unleash-server at .*; nothing was written\n$/,
    );
  });
});
