// Unleash Edge 20's command line and defaults (`flags-proxy edge …`): every Edge option of the
// README's table handled as the table says, the grammar Edge's users write, and the `edge` profile.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { UsageError } from '@flags/config';
import {
  ConfigError,
  EDGE_OPTIONS,
  type EdgeOption,
  edgeVariableReaders,
  loadConfig,
} from '@flags/proxy';
import { freePort, spawnEntry, waitUntilHealthy } from '../../../test/helpers/processes.js';
import { type CommandLine, ownSettings, parseCommandLine } from '../src/config/command-line.js';
import { edgeVariableFindings } from '../src/config/edge-options.js';
import { servingVariables } from '../src/config/own-variables.js';
import { PROBE_VARIABLES } from '../src/probe.js';
import { smallPayload } from './fixtures/small.js';
import { FakeUpstream } from './helpers/fake-upstream.js';
import { waitFor } from './helpers/proxy.js';

const MAIN = fileURLToPath(new URL('../src/main.ts', import.meta.url));
const TOKEN_A = `*:development.${'a'.repeat(32)}`;
const TOKEN_B = `*:production.${'b'.repeat(32)}`;

/** The subcommand an Edge option is written after, to try it where Edge takes it. */
function commandFor(option: EdgeOption): string {
  if (option.scope === 'offline') return 'offline';
  if (option.scope === 'probe') return 'health';
  return 'edge';
}

/** `args` read as the command line, with our own options checked as the command takes them. */
function settings(args: readonly string[]): {
  line: CommandLine;
  variables: Record<string, string>;
} {
  const line = parseCommandLine(args);
  const command = line.command;
  const variables = ownSettings(
    line,
    command === 'health' || command === 'ready' ? PROBE_VARIABLES : servingVariables(command),
  );
  return { line, variables };
}

function refusal(args: readonly string[]): string[] {
  try {
    settings(args);
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    return [...error.problems];
  }
  assert.fail(`expected ${args.join(' ')} to be refused`);
}

describe("Unleash Edge 20 options, as the migration guide's table says", () => {
  it('lists every option once, each with the table row the migration guide shows', () => {
    const longs = EDGE_OPTIONS.map((option) => option.long);
    assert.equal(new Set(longs).size, longs.length);
    const guide = readFileSync(
      new URL('../../../docs/migrate-from-unleash-edge.md', import.meta.url),
      'utf8',
    );
    for (const option of EDGE_OPTIONS)
      assert.ok(guide.includes(`| \`--${option.long}\``), `the guide's row of --${option.long}`);
  });

  for (const option of EDGE_OPTIONS) {
    const { handling } = option;
    it(`--${option.long}: ${handling.kind}`, () => {
      const command = commandFor(option);
      const written = option.flag ? [`--${option.long}`] : [`--${option.long}`, 'x'];
      // Options of the server itself stand before the subcommand, the others after it.
      const args = option.scope === 'top' ? [...written, command] : [command, ...written];
      if (handling.kind === 'refused' && option.env === undefined) {
        assert.ok(refusal(args).some((line) => line.includes(handling.instead)));
        return;
      }
      const { line, variables } = settings(args);
      const env = option.env as string;
      assert.equal(variables[env], option.flag ? 'true' : 'x', `${env} is set`);
      // Named as written: `--consumption` on the command line, CONSUMPTION in the environment.
      const findings = edgeVariableFindings(variables, line.written);
      const fromEnv = edgeVariableFindings(variables);
      if (handling.kind === 'supported') {
        assert.notDeepEqual(edgeVariableReaders(env), [], `${env} is read by an option of ours`);
        assert.deepEqual(findings, { warnings: [], refusals: [] });
      } else if (handling.kind === 'ignored') {
        assert.deepEqual(edgeVariableReaders(env), [], `${env} is read by nothing`);
        assert.equal(findings.warnings.length, 1);
        assert.ok(findings.warnings[0]?.includes(`: --${option.long} (`), findings.warnings[0]);
        assert.match(fromEnv.warnings[0] as string, new RegExp(`\\b${env} \\(`));
        assert.deepEqual(findings.refusals, []);
      } else {
        assert.deepEqual(edgeVariableReaders(env), [], `${env} is read by nothing`);
        assert.deepEqual(findings.warnings, []);
        assert.equal(findings.refusals.length, 1);
        assert.ok(
          findings.refusals[0]?.startsWith(`--${option.long} is an Unleash Edge option`),
          findings.refusals[0],
        );
        assert.ok(fromEnv.refusals[0]?.startsWith(`${env} is an Unleash Edge option`));
        assert.ok(findings.refusals[0]?.includes(handling.instead));
      }
      if (option.short !== undefined) {
        const short = option.flag ? [`-${option.short}`] : [`-${option.short}`, 'x'];
        const shortArgs = option.scope === 'top' ? [...short, command] : [command, ...short];
        assert.equal(settings(shortArgs).variables[env], variables[env], `-${option.short}`);
      }
    });
  }
});

describe('Unleash Edge 20 command line', () => {
  it('takes lists repeated or comma-separated, and options of the server before the subcommand', () => {
    const { line, variables } = settings([
      '-p',
      '4000',
      '--tls-enable',
      '-i',
      '::1',
      'edge',
      '-u',
      'http://unleash:4242',
      '-t',
      TOKEN_A,
      '--tokens',
      TOKEN_B,
      '-p',
      'secret@development,other@production',
      '-H',
      'X-Api-Key: one',
      '-H',
      'X-Other: two',
      '-s',
      '-f15',
      '--metrics-interval-seconds=60',
    ]);
    assert.equal(line.command, 'edge');
    assert.deepEqual(variables, {
      PORT: '4000',
      TLS_ENABLE: 'true',
      INTERFACE: '::1',
      UPSTREAM_URL: 'http://unleash:4242',
      TOKENS: `${TOKEN_A},${TOKEN_B}`,
      PRETRUSTED_TOKENS: 'secret@development,other@production',
      CUSTOM_CLIENT_HEADERS: 'X-Api-Key: one,X-Other: two',
      SKIP_SSL_VERIFICATION: 'true',
      FEATURES_REFRESH_INTERVAL_SECONDS: '15',
      METRICS_INTERVAL_SECONDS: '60',
    });
  });

  it('reads a short option by where it stands, as Edge does', () => {
    assert.deepEqual(settings(['-p', '1', 'edge', '-p', 'k@development']).variables, {
      PORT: '1',
      PRETRUSTED_TOKENS: 'k@development',
    });
    assert.deepEqual(settings(['offline', '-b', 'flags.json', '-c', 'a', '-f', 'b']).variables, {
      BOOTSTRAP_FILE: 'flags.json',
      CLIENT_TOKENS: 'a',
      FRONTEND_TOKENS: 'b',
    });
    assert.deepEqual(settings(['ready', '-e', 'https://edge:3043', '-c', 'ca.pem']).variables, {
      EDGE_URL: 'https://edge:3043',
      CA_CERTIFICATE_FILE: 'ca.pem',
    });
  });

  it('never takes the subcommand as a switch’s value', () => {
    const { line, variables } = settings(['--trust-proxy', 'edge', '--strict', '-u', 'http://u']);
    assert.equal(line.command, 'edge');
    assert.deepEqual(variables, { TRUST_PROXY: 'true', STRICT: 'true', UPSTREAM_URL: 'http://u' });
  });

  it('still takes every variable of ours as a kebab-case option, without a subcommand too', () => {
    const { line, variables } = settings([
      '--flags-url',
      'http://u/api',
      '--flags-fetch-interval=1000',
    ]);
    assert.equal(line.command, undefined);
    assert.deepEqual(variables, { FLAGS_URL: 'http://u/api', FLAGS_FETCH_INTERVAL: '1000' });
  });

  it('refuses what Edge would refuse, naming it', () => {
    assert.deepEqual(refusal(['edge', '--frobnicate', '1']), [
      'unknown option --frobnicate for edge',
    ]);
    assert.deepEqual(refusal(['edge', '-z']), ['unknown option -z for edge']);
    assert.deepEqual(refusal(['hydrate']), ['unknown command "hydrate"']);
    assert.deepEqual(refusal(['edge', '-u']), ['-u (--upstream-url) needs a value']);
    assert.deepEqual(refusal(['edge', '-u', 'a', '-u', 'b']), [
      '-u (--upstream-url) is given more than once',
    ]);
    assert.deepEqual(refusal(['offline', '--tokens', 'a']), [
      '--tokens is an option of edge, not of offline',
    ]);
    assert.deepEqual(refusal(['edge', '--tls-enable=yes']), [
      '--tls-enable is a switch: give it alone, or as =true or =false',
    ]);
    assert.deepEqual(refusal(['edge', 'extra']), ['unexpected argument "extra"']);
  });

  it('refuses a command line as a usage error (exit 2), saying what was meant', () => {
    assert.throws(() => settings(['edge', '-z']), UsageError);
    assert.throws(() => settings(['edge', '--frobnicate']), UsageError);
    assert.deepEqual(refusal(['egde']), ['unknown command "egde" (did you mean edge?)']);
    assert.deepEqual(refusal(['edge', '--upstream-ulr', 'http://u']), [
      'unknown option --upstream-ulr for edge (did you mean --upstream-url?)',
    ]);
    assert.deepEqual(refusal(['--prot', '3000']), ['unknown option --prot (did you mean --port?)']);
    assert.deepEqual(refusal(['--flags-ulr', 'http://u/api']), [
      'unknown option --flags-ulr (did you mean --flags-url?)',
    ]);
    assert.deepEqual(refusal(['ready', '--edge-ulr', 'http://u']), [
      'unknown option --edge-ulr for ready (did you mean --edge-url?)',
    ]);
    assert.deepEqual(refusal(['--verison']), [
      'unknown option --verison (did you mean --version?)',
    ]);
    // A short option written where it means nothing, that means something elsewhere.
    assert.deepEqual(refusal(['-u', 'http://u', 'edge']), [
      '-u (--upstream-url) is an option of edge: write it after `edge`',
    ]);
    assert.deepEqual(refusal(['edge', '-i', '127.0.0.1']), [
      '-i (--interface) is an option of flags-proxy itself: write it before `edge`',
    ]);
    assert.deepEqual(refusal(['-e', 'http://u', 'health']), [
      '-e (--edge-url) is an option of health and ready: write it after `health` or `ready`',
    ]);
    assert.deepEqual(refusal(['-b', 'x', 'offline']), [
      'unknown option -b; it is an option of edge (--backup-folder) and of offline (--bootstrap-file): write it after the subcommand',
    ]);
    // After `edge`, `-p` is the pretrusted tokens: a port there would silently become a key that
    // anyone could send, and the proxy would listen on 3063.
    assert.deepEqual(refusal(['edge', '-p', '3064', '-u', 'http://u']), [
      '-p (--pretrusted-tokens) 3064 looks like a port: after `edge`, -p is the pretrusted tokens; write the port before `edge` (-p 3064 edge …)',
    ]);
    assert.deepEqual(refusal(['edge', '-p3064,k@development']), [
      '-p (--pretrusted-tokens) 3064 looks like a port: after `edge`, -p is the pretrusted tokens; write the port before `edge` (-p 3064 edge …)',
    ]);
    assert.equal(settings(['edge', '--pretrusted-tokens', 'k@development']).line.command, 'edge');
  });
});

describe('edge mode defaults', () => {
  const env = { UPSTREAM_URL: 'http://unleash:4242', TOKENS: TOKEN_A };

  it('are Unleash Edge 20’s with `edge`, and Unleash Proxy’s without', () => {
    const edge = loadConfig(env, {}, 'edge');
    const proxy = loadConfig(env, {}, 'proxy');
    const picked = (config: typeof edge) => ({
      port: config.port,
      host: config.host,
      strictTokens: config.strictTokens,
      enableAllEndpoint: config.enableAllEndpoint,
      disabledFeatureAnswer: config.disabledFeatureAnswer,
      compression: config.compression,
      enableOAS: config.enableOAS,
      refreshInterval: config.refreshInterval,
      metricsInterval: config.metricsInterval,
      tokenRevalidationInterval: config.tokenRevalidationInterval,
      upstreamTimeoutMs: config.upstreamTimeoutMs,
    });
    assert.deepEqual(picked(edge), {
      port: 3063,
      host: '::',
      strictTokens: true,
      enableAllEndpoint: true,
      disabledFeatureAnswer: 'disabled',
      compression: true,
      enableOAS: true,
      refreshInterval: 15_000,
      metricsInterval: 60_000,
      tokenRevalidationInterval: 3_600_000,
      upstreamTimeoutMs: 5000,
    });
    assert.deepEqual(picked(proxy), {
      port: 3000,
      host: '0.0.0.0',
      strictTokens: false,
      enableAllEndpoint: false,
      disabledFeatureAnswer: 'not-found',
      compression: false,
      enableOAS: false,
      refreshInterval: 5000,
      metricsInterval: 30_000,
      tokenRevalidationInterval: 3_600_000,
      upstreamTimeoutMs: 10_000,
    });
  });

  it('give way to what the environment or code sets', () => {
    const config = loadConfig(
      {
        ...env,
        PORT: '4000',
        DISABLE_ALL_ENDPOINT: 'true',
        INTERFACE: '127.0.0.1',
        STRICT: 'false',
      },
      { compression: false },
      'edge',
    );
    assert.equal(config.port, 4000);
    assert.equal(config.enableAllEndpoint, false);
    assert.equal(config.host, '127.0.0.1');
    assert.equal(config.strictTokens, false);
    assert.equal(config.compression, false);
  });

  it('read APP_NAME and INSTANCE_ID', () => {
    const config = loadConfig(
      { ...env, APP_NAME: 'edge-eu', INSTANCE_ID: 'edge-eu-1' },
      {},
      'edge',
    );
    assert.equal(config.flagsAppName, 'edge-eu');
    assert.equal(config.flagsInstanceId, 'edge-eu-1');
  });
});

describe('flags-proxy started as Unleash Edge', () => {
  it('serves from `flags-proxy -p <port> edge -u <url> -t A -t B`, warning once of ignored Edge variables', async () => {
    const upstream = await new FakeUpstream(smallPayload).start();
    const port = await freePort();
    const command = spawnEntry(MAIN, { WORKERS: '4', SENTRY_DSN: 'https://sentry.example/1' }, [
      '-p',
      String(port),
      'edge',
      '-u',
      upstream.url.replace(/\/api$/, ''),
      '-t',
      TOKEN_A,
      '-t',
      TOKEN_B,
      '-m',
      '0',
    ]);
    try {
      await waitUntilHealthy(`http://127.0.0.1:${port}/internal-backstage/health`, command.child, {
        output: command.output,
      });
      await waitFor(() => upstream.featureRequests().length >= 2);
      const tokens = new Set(upstream.featureRequests().map((r) => r.headers.authorization));
      assert.deepEqual([...tokens].sort(), [TOKEN_A, TOKEN_B].sort());
      // Dual stack: the IPv6 loopback reaches it too.
      const v6 = await fetch(`http://[::1]:${port}/internal-backstage/health`);
      assert.equal(v6.status, 200);
      const warnings = command
        .output()
        .split('\n')
        .filter((line) => line.includes('as Unleash Edge 20 ignores them'));
      assert.equal(warnings.length, 1, command.output());
      assert.match(warnings[0] as string, /WORKERS \(.*SENTRY_DSN \(/);
    } finally {
      command.child.kill('SIGTERM');
      await command.exited;
      await upstream.stop();
    }
  });

  it('stops at an Edge variable it does not implement, saying what to do', async () => {
    const command = spawnEntry(MAIN, { UNLEASH_CLIENT_SECRET: 'secret' }, [
      'edge',
      '-u',
      'http://127.0.0.1:1',
      '-t',
      TOKEN_A,
    ]);
    assert.equal(await command.exited, 1);
    assert.match(
      command.output(),
      /UNLEASH_CLIENT_SECRET is an Unleash Edge option flags-proxy does not take: .*give client tokens in TOKENS/,
    );
    assert.ok(!command.output().includes('secret\n'));
  });

  it('probes with `health -e <url>` and `ready` by EDGE_URL', async () => {
    const upstream = await new FakeUpstream(smallPayload).start();
    const port = await freePort();
    const run = (args: string[], env: Record<string, string> = {}) => spawnEntry(MAIN, env, args);
    const proxy = run([
      'edge',
      '-u',
      upstream.url.replace(/\/api$/, ''),
      '-t',
      TOKEN_A,
      '--port',
      String(port),
    ]);
    try {
      await waitUntilHealthy(`http://127.0.0.1:${port}/internal-backstage/ready`, proxy.child, {
        output: proxy.output,
      });
      const health = run(['health', '-e', `http://localhost:${port}`]);
      assert.equal(await health.exited, 0, health.output());
      assert.match(health.output(), /^healthy: 200 /);
      const ready = run(['ready'], { EDGE_URL: `http://127.0.0.1:${port}` });
      assert.equal(await ready.exited, 0, ready.output());
      const elsewhere = run(['ready', '--edge-url', 'http://127.0.0.1:1']);
      assert.equal(await elsewhere.exited, 1);
      assert.match(elsewhere.output(), /^not ready: cannot reach it/);
    } finally {
      proxy.child.kill('SIGTERM');
      await proxy.exited;
      await upstream.stop();
    }
  });
});
