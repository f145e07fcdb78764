import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { freePort, spawnCommand, waitUntilHealthy } from '../../../test/helpers/processes.js';
import { smallPayload } from './fixtures/small.js';
import { FakeUpstream } from './helpers/fake-upstream.js';
import { API_TOKEN, CLIENT_KEY } from './helpers/proxy.js';

/**
 * The `flags-proxy` command as npm links it (`node_modules/.bin/flags-proxy`, what `npx
 * flags-proxy` runs): a sh launcher that becomes node, in the same process, with V8's young
 * generation capped, and runs the built entry point.
 */
const COMMAND = fileURLToPath(new URL('../../../node_modules/.bin/flags-proxy', import.meta.url));

/** The command line of a running process (Linux). */
function commandLine(pid: number): string[] {
  return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
}

/** The environment a running process started with (Linux). */
function environment(pid: number): string[] {
  return readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean);
}

const ALLOCATOR = ['MALLOC_ARENA_MAX', 'MALLOC_MMAP_THRESHOLD_', 'MALLOC_TRIM_THRESHOLD_'];

async function startedCommand(extraEnv: Record<string, string>) {
  const upstream = await new FakeUpstream(smallPayload).start();
  const port = await freePort();
  const command = spawnCommand(COMMAND, [], {
    FLAGS_URL: upstream.url,
    FLAGS_API_TOKEN: API_TOKEN,
    FLAGS_PROXY_CLIENT_KEYS: CLIENT_KEY,
    PORT: String(port),
    PROXY_HOST: '127.0.0.1',
    FLAGS_METRICS_INTERVAL: '0',
    ...extraEnv,
  });
  const base = `http://127.0.0.1:${port}`;
  await waitUntilHealthy(`${base}/proxy/health`, command.child, { output: command.output });
  return { ...command, upstream, base };
}

describe('the flags-proxy command', () => {
  it('runs node with the young generation capped, serves, and exits 0 on SIGTERM', async () => {
    const command = await startedCommand({});
    try {
      const pid = command.child.pid as number;
      const argv = commandLine(pid);
      assert.match(argv[0] as string, /(^|\/)node$/, 'sh was replaced by node in the same process');
      assert.ok(argv.includes('--max-semi-space-size=4'), argv.join(' '));
      const env = environment(pid);
      for (const setting of [
        'MALLOC_ARENA_MAX=2',
        'MALLOC_MMAP_THRESHOLD_=131072',
        'MALLOC_TRIM_THRESHOLD_=131072',
      ])
        assert.ok(env.includes(setting), setting);
      const answer = await fetch(`${command.base}/proxy?userId=123`, {
        headers: { authorization: CLIENT_KEY },
      });
      assert.equal(answer.status, 200);
      assert.ok(((await answer.json()) as { toggles: unknown[] }).toggles.length > 0);
      command.child.kill('SIGTERM');
      assert.equal(await command.exited, 0, command.output());
    } finally {
      if (command.child.exitCode === null) command.child.kill('SIGKILL');
      await command.upstream.stop();
    }
  });

  it('leaves the young generation to NODE_OPTIONS and the allocator to the environment when they set it', async () => {
    const command = await startedCommand({
      NODE_OPTIONS: '--max-semi-space-size=8',
      MALLOC_ARENA_MAX: '4',
      MALLOC_MMAP_THRESHOLD_: '262144',
      MALLOC_TRIM_THRESHOLD_: '65536',
    });
    try {
      const argv = commandLine(command.child.pid as number);
      assert.ok(!argv.some((arg) => arg.includes('semi-space')), argv.join(' '));
      const env = environment(command.child.pid as number);
      for (const setting of [
        'MALLOC_ARENA_MAX=4',
        'MALLOC_MMAP_THRESHOLD_=262144',
        'MALLOC_TRIM_THRESHOLD_=65536',
      ])
        assert.ok(env.includes(setting), setting);
      for (const name of ALLOCATOR)
        assert.equal(env.filter((entry) => entry.startsWith(`${name}=`)).length, 1, name);
    } finally {
      command.child.kill('SIGKILL');
      await command.upstream.stop();
    }
  });

  it('exits 1 naming the missing settings', async () => {
    const command = spawnCommand(COMMAND, [], { FLAGS_URL: 'http://127.0.0.1:4242/api' });
    assert.equal(await command.exited, 1);
    assert.match(command.output(), /FLAGS_API_TOKEN/);
    assert.match(command.output(), /FLAGS_PROXY_CLIENT_KEYS/);
    assert.doesNotMatch(command.output(), /FLAGS_URL/);
  });
});
