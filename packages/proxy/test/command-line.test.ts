// test-runs: once (a slow end-to-end suite: CI runs it on one Node.js line, scripts/run-tests.mjs)
// The `flags-proxy` command line as a process: --version, what it refuses (exit 2, as clap exits for
// Unleash Edge), and how --help opens. The grammar itself is tested in edge-command-line.test.ts.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { runEntry } from '../../../test/helpers/processes.js';

const MAIN = fileURLToPath(new URL('../src/main.ts', import.meta.url));
const VERSION = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    version: string;
  }
).version;
const TOKEN = `*:development.${'a'.repeat(32)}`;

/** `flags-proxy …args`: its exit status and what it wrote (stopped, and `'still running'`, after 20 s). */
const run = (args: readonly string[], env: Record<string, string> = {}) =>
  runEntry(MAIN, args, env);

describe('flags-proxy command line', () => {
  for (const args of [['--version'], ['-V'], ['edge', '--version']])
    it(`\`flags-proxy ${args.join(' ')}\` prints the package version and exits 0`, async () => {
      // A configuration that would not start: --version reads none of it.
      const result = await run(args, { FLAGS_URL: 'not a url' });
      assert.equal(result.status, 0, result.output);
      assert.equal(result.output, `flags-proxy ${VERSION}\n`);
    });

  const upstream = ['-u', 'http://127.0.0.1:1', '-t', TOKEN];
  const refused: [readonly string[], RegExp][] = [
    [['--bogus'], /^flags-proxy: unknown option --bogus\n/],
    [['--prot', '3000'], /^flags-proxy: unknown option --prot \(did you mean --port\?\)\n/],
    [
      ['edge', ...upstream, '--upstream-ulr', 'http://u'],
      /^flags-proxy: unknown option --upstream-ulr for edge \(did you mean --upstream-url\?\)\n/,
    ],
    [['egde', ...upstream], /^flags-proxy: unknown command "egde" \(did you mean edge\?\)\n/],
    [['edge', ...upstream, 'stray'], /^flags-proxy: unexpected argument "stray"\n/],
    [['edge', ...upstream, '-z'], /^flags-proxy: unknown option -z for edge\n/],
    [
      ['-u', 'http://127.0.0.1:1', 'edge', '-t', TOKEN],
      /^flags-proxy: -u \(--upstream-url\) is an option of edge: write it after `edge`\n/,
    ],
  ];
  for (const [args, message] of refused)
    it(`refuses \`flags-proxy ${args.join(' ')}\` with exit 2, naming it`, async () => {
      const result = await run(args);
      assert.equal(result.status, 2, result.output);
      assert.match(result.output, message);
      assert.match(result.output, /\nRun `flags-proxy --help` for the options and examples\.\n$/);
    });

  it('--help opens with the synopsis and five examples, the options after', async () => {
    const result = await run(['--help']);
    assert.equal(result.status, 0, result.output);
    const [synopsis, , summary] = result.output.split('\n');
    assert.equal(
      synopsis,
      'Usage: flags-proxy [OPTIONS] [edge|offline|health|ready] [OPTIONS] | -h|--help | -V|--version',
    );
    assert.match(summary ?? '', /^flags-proxy: /);
    const examples = result.output.slice(
      result.output.indexOf('\nExamples:\n'),
      result.output.indexOf('\nCommands:\n'),
    );
    const commands = examples.split('\n').filter((line) => line.startsWith('    '));
    assert.equal(commands.length, 5, examples);
    for (const command of commands) assert.match(command, /flags-proxy/);
    assert.match(examples, /flags-proxy edge -u https?:\/\/\S+ -t /);
    assert.match(
      examples,
      /FLAGS_URL=\S+ FLAGS_API_TOKEN=\S+ FLAGS_PROXY_CLIENT_KEYS=\S+ flags-proxy/,
    );
    assert.match(examples, /flags-proxy offline -b /);
    assert.match(examples, /flags-proxy health/);
  });
});
