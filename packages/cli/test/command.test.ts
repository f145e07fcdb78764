// The `flags` command as a process: --version, --help, and what it refuses (exit 2 for a command
// line it cannot take, 1 for a run that fails).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { exitStatusWithin, runEntry, spawnEntry } from '../../../test/helpers/processes.js';

const MAIN = fileURLToPath(new URL('../src/main.ts', import.meta.url));
const VERSION = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    version: string;
  }
).version;

const flags = (args: readonly string[], env: Record<string, string> = {}) =>
  runEntry(MAIN, args, env);

describe('flags command line', () => {
  it('goes on to its end when its output is no longer read (`| head`), without a stack trace', async () => {
    const entry = spawnEntry(MAIN, {}, ['schema']);
    // The reader is gone before the command writes.
    entry.child.stdout?.destroy();
    assert.equal(await exitStatusWithin(entry, 20_000), 0, entry.output());
    assert.equal(entry.output(), '');
  });

  it('prints its version with -V and --version', async () => {
    for (const flag of ['-V', '--version']) {
      const { status, output } = await flags([flag]);
      assert.equal(status, 0);
      assert.equal(output, `flags ${VERSION}\n`);
    }
  });

  it('opens --help with the usage line and examples, then every command', async () => {
    const { status, output } = await flags(['--help']);
    assert.equal(status, 0);
    assert.match(output, /^Usage: flags pull\|plan\|apply\|validate\|manifest\|schema /);
    assert.match(output, /\nExamples:\n/);
    for (const command of ['pull', 'plan', 'apply', 'validate', 'manifest', 'schema']) {
      assert.match(output, new RegExp(`\\n  flags ${command} `));
    }
    assert.match(output, /FLAGS_ADMIN_TOKEN/);
  });

  it('exits 2 on an option it does not know, naming the one meant', async () => {
    const { status, output } = await flags(['plan', '--detailed-exit-code']);
    assert.equal(status, 2);
    assert.equal(
      output,
      'flags: unknown option --detailed-exit-code for plan (did you mean --detailed-exitcode?)\nRun `flags --help` for the commands and examples.\n',
    );
  });

  it('exits 1 when the server is not given, naming the option and the variable', async () => {
    const { status, output } = await flags(['pull', '--dir', 'nowhere']);
    assert.equal(status, 1);
    assert.match(output, /pull needs --url or FLAGS_SERVER_URL and --token or FLAGS_ADMIN_TOKEN/);
  });
});
