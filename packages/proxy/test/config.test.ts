import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ConfigError, loadConfig, optionTable } from '@flags/proxy';
import { spawnCommand } from '../../../test/helpers/processes.js';
import { smallPayload } from './fixtures/small.js';
import { FakeUpstream } from './helpers/fake-upstream.js';
import { startProxy } from './helpers/proxy.js';

const REQUIRED = {
  FLAGS_URL: 'http://127.0.0.1:4242/api',
  FLAGS_API_TOKEN: 'token',
  FLAGS_PROXY_CLIENT_KEYS: 'a, b',
};

function problems(env: Record<string, string>, options = {}): string[] {
  try {
    loadConfig(env, options);
  } catch (error) {
    assert.ok(error instanceof ConfigError);
    return [...error.problems];
  }
  assert.fail('expected a ConfigError');
}

describe('configuration', () => {
  it('names every missing required setting at once', () => {
    const found = problems({});
    assert.equal(found.length, 3);
    assert.match(found[0] as string, /FLAGS_URL/);
    assert.ok(found.some((text) => /^You must specify the flagsApiToken option/.test(text)));
    assert.ok(
      found.some((text) =>
        /FLAGS_PROXY_CLIENT_KEYS.*FLAGS_PROXY_SECRETS.*Unleash-format token/.test(text),
      ),
    );
  });

  it('needs no client keys when a startup token is Unleash-format', () => {
    const env = { FLAGS_URL: 'http://upstream/api' };
    assert.deepEqual(problems({ ...env, FLAGS_API_TOKEN: 'plain-secret' }), [
      'You must specify the clientKeys option (FLAGS_PROXY_CLIENT_KEYS) or the proxySecrets option (FLAGS_PROXY_SECRETS) or an Unleash-format token (`project:environment.secret`) in flagsApiToken (FLAGS_API_TOKEN)',
    ]);
    const config = loadConfig({
      ...env,
      FLAGS_API_TOKEN: '*:development.abc, plain, *:development.abc',
    });
    assert.deepEqual(config.startupTokens, ['*:development.abc', 'plain']);
    assert.equal(config.flagsApiToken, '*:development.abc');
  });

  it('applies the documented defaults', () => {
    const config = loadConfig(REQUIRED);
    assert.equal(config.port, 3000);
    assert.equal(config.refreshInterval, 5000);
    assert.equal(config.metricsInterval, 30000);
    assert.equal(config.metricsJitter, 0);
    assert.equal(config.flagsAppName, 'flags-proxy');
    assert.ok(config.flagsInstanceId.length > 3);
    assert.equal(config.logLevel, 'warn');
    assert.equal(config.useJsonLogger, false);
    assert.equal(config.trustProxy, false);
    assert.equal(config.clientKeysHeaderName, 'authorization');
    assert.equal(config.proxyBasePath, '');
    assert.equal(config.enableAllEndpoint, false);
    assert.equal(config.enableOAS, false);
    assert.equal(config.reportsPerMinute, 600);
    assert.equal(config.rejectUnauthorized, true);
    assert.deepEqual(config.clientKeys, ['a', 'b']);
    assert.equal(config.flagsUrl.href, 'http://127.0.0.1:4242/api/');
    assert.deepEqual(config.cors, {
      origin: '*',
      methods: 'GET, POST',
      allowedHeaders: undefined,
      exposedHeaders: 'ETag',
      credentials: false,
      maxAge: 172800,
      preflightContinue: false,
      optionsSuccessStatus: 204,
    });
  });

  it('parses every environment variable of the table', () => {
    const config = loadConfig({
      FLAGS_URL: 'https://flags.example/api',
      FLAGS_API_TOKEN: 'token',
      FLAGS_PROXY_SECRETS: 's1-token, s2-token',
      PROXY_PORT: '4000',
      PROXY_BASE_PATH: '     base/path/     ',
      FLAGS_APP_NAME: 'app',
      FLAGS_INSTANCE_ID: 'id-1',
      FLAGS_FETCH_INTERVAL: '1000',
      FLAGS_METRICS_INTERVAL: '2000',
      FLAGS_METRICS_JITTER: '300',
      FLAGS_ENVIRONMENT: 'production',
      FLAGS_PROJECT_NAME: 'web',
      FLAGS_NAME_PREFIX: 'pre',
      FLAGS_TAGS: 'simple:proxy, demo:test',
      JSON_LOGGER: 'true',
      LOG_LEVEL: 'debug',
      TRUST_PROXY: '10.0.0.0/8, 127.0.0.1',
      CLIENT_KEY_HEADER_NAME: 'X-Key',
      ENABLE_OAS: 'true',
      ENABLE_ALL_ENDPOINT: 'TRUE',
      CORS_ORIGIN: 'https://a.com, https://b.com',
      CORS_METHODS: 'GET',
      CORS_ALLOWED_HEADERS: 'authorization',
      CORS_EXPOSED_HEADERS: 'ETag, X-Other',
      CORS_CREDENTIALS: 'true',
      CORS_MAX_AGE: '1234567',
      CORS_PREFLIGHT_CONTINUE: 'true',
      CORS_OPTIONS_SUCCESS_STATUS: '200',
      HTTP_OPTIONS_REJECT_UNAUTHORIZED: 'false',
      HTTPS_PROXY: 'http://corp-proxy:3128',
      EXP_BOOTSTRAP_URL: 'https://cdn.example/features.json',
      EXP_BOOTSTRAP_AUTHORIZATION: 'boot-secret',
      EXP_SERVER_SIDE_SDK_CONFIG_TOKENS: 'super1, super2',
      EXP_CUSTOM_ENRICHERS_FILE: './a.js,./b.js',
      FLAGS_CUSTOM_STRATEGIES_FILE: './s.js',
      PROXY_REPORT_RATE_LIMIT_PER_MINUTE: '0',
    });
    assert.equal(config.reportsPerMinute, 0);
    assert.deepEqual(config.clientKeys, ['s1-token', 's2-token']);
    assert.equal(config.port, 4000);
    assert.equal(config.proxyBasePath, '/base/path');
    assert.equal(config.refreshInterval, 1000);
    assert.equal(config.metricsJitter, 300);
    assert.deepEqual(config.tags, [
      { name: 'simple', value: 'proxy' },
      { name: 'demo', value: 'test' },
    ]);
    assert.deepEqual(config.trustProxy, ['10.0.0.0/8', '127.0.0.1']);
    assert.equal(config.clientKeysHeaderName, 'x-key');
    assert.equal(config.enableAllEndpoint, true);
    assert.deepEqual(config.cors.origin, new Set(['https://a.com', 'https://b.com']));
    assert.equal(config.cors.exposedHeaders, 'ETag, X-Other');
    assert.equal(config.cors.optionsSuccessStatus, 200);
    assert.equal(config.rejectUnauthorized, false);
    assert.equal(config.httpsProxy?.href, 'http://corp-proxy:3128/');
    assert.equal(config.bootstrap?.authorization, 'boot-secret');
    assert.deepEqual(config.serverSideTokens, ['super1', 'super2']);
    assert.deepEqual(config.expCustomEnrichers, ['./a.js', './b.js']);
    assert.deepEqual(config.customStrategies, ['./s.js']);
    assert.equal(config.useJsonLogger, true);
    assert.equal(config.logLevel, 'debug');
  });

  it('rejects bad values, naming each variable, all at once', () => {
    const found = problems({
      ...REQUIRED,
      FLAGS_URL: 'not a url',
      FLAGS_FETCH_INTERVAL: 'soon',
      FLAGS_METRICS_INTERVAL: 'often',
      LOG_LEVEL: 'verbose',
      JSON_LOGGER: 'maybe',
      TRUST_PROXY: 'abc',
      PORT: '70000',
      FLAGS_TAGS: 'lonely',
      CORS_MAX_AGE: '-1',
      PROXY_REPORT_RATE_LIMIT_PER_MINUTE: 'lots',
    });
    const text = found.join('\n');
    for (const name of [
      'FLAGS_URL',
      'FLAGS_FETCH_INTERVAL',
      'FLAGS_METRICS_INTERVAL',
      'LOG_LEVEL',
      'JSON_LOGGER',
      'TRUST_PROXY',
      'PORT',
      'FLAGS_TAGS',
      'CORS_MAX_AGE',
      'PROXY_REPORT_RATE_LIMIT_PER_MINUTE',
    ]) {
      assert.match(text, new RegExp(name), `${name} is reported`);
    }
    assert.ok(!text.includes('token'), 'secrets are not echoed');
  });

  it('ignores the caller’s remoteAddress by default only when trustProxy is set', () => {
    const cases: [Record<string, string>, boolean][] = [
      [{}, false],
      [{ TRUST_PROXY: 'false' }, false],
      [{ TRUST_PROXY: 'true' }, true],
      [{ TRUST_PROXY: '10.0.0.0/8' }, true],
      [{ TRUST_PROXY: 'true', PROXY_IGNORE_CALLER_REMOTE_ADDRESS: 'false' }, false],
      [{ PROXY_IGNORE_CALLER_REMOTE_ADDRESS: 'true' }, true],
    ];
    for (const [env, expected] of cases) {
      assert.equal(
        loadConfig({ ...REQUIRED, ...env }).ignoreCallerRemoteAddress,
        expected,
        JSON.stringify(env),
      );
    }
    assert.equal(loadConfig(REQUIRED, { trustProxy: 1 }).ignoreCallerRemoteAddress, true);
    assert.equal(loadConfig(REQUIRED, { trustProxy: 0 }).ignoreCallerRemoteAddress, false);
    assert.equal(loadConfig(REQUIRED, { trustProxy: [] }).ignoreCallerRemoteAddress, false);
    assert.match(
      problems({ ...REQUIRED, PROXY_IGNORE_CALLER_REMOTE_ADDRESS: 'yes' }).join(),
      /PROXY_IGNORE_CALLER_REMOTE_ADDRESS/,
    );
  });

  it('lets in-code options win over the environment and validates them too', () => {
    const config = loadConfig(REQUIRED, {
      refreshInterval: 250,
      cors: { origin: 'https://x.example' },
    });
    assert.equal(config.refreshInterval, 250);
    assert.deepEqual(config.cors.origin, new Set(['https://x.example']));
    assert.equal(config.cors.maxAge, 172800);
    assert.match(
      problems(REQUIRED, { refreshInterval: -5 }).join(),
      /refreshInterval \(FLAGS_FETCH_INTERVAL\)/,
    );
    assert.match(problems(REQUIRED, { logLevel: 'loud' }).join(), /logLevel/);
  });

  it('documents exactly the options of the table in the README', () => {
    const readme = readFileSync(fileURLToPath(new URL('../README.md', import.meta.url)), 'utf8');
    const section = readme.slice(
      readme.indexOf('## Configuration'),
      readme.indexOf('## Differences'),
    );
    const rows = section
      .split('\n')
      .filter((line) => /^\| `[^`]+` \|/.test(line))
      .map((line) => line.split('|').map((cell) => cell.trim()));
    const documented = new Map(rows.map((cells) => [cells[1]?.replace(/`/g, ''), cells]));
    for (const spec of optionTable) {
      const row = documented.get(spec.option);
      assert.ok(row, `README documents ${spec.option}`);
      assert.equal(
        row[2],
        spec.env.length === 0 ? '(in code only)' : spec.env.map((name) => `\`${name}\``).join(', '),
      );
      assert.equal(
        row[3],
        spec.default === undefined ? '' : `\`${spec.default}\``,
        `default of ${spec.option}`,
      );
      assert.equal(row[4], spec.doc, `meaning of ${spec.option}`);
    }
    assert.equal(documented.size, optionTable.length, 'no undocumented rows');
  });
});

describe('start-up warnings', () => {
  const LONG = 'k'.repeat(32);
  const shortSecretWarnings = (lines: readonly { level: string; message: string }[]) =>
    lines.filter((line) => line.level === 'warn' && /shorter than 32/.test(line.message));

  it('warns (and starts) when a client key, server-side token or the upstream token is short', async () => {
    const run = await startProxy(smallPayload, {
      flagsApiToken: 'short-upstream-token',
      clientKeys: ['short-client-key', LONG],
      proxySecrets: ['short-legacy'],
      expServerSideSdkConfig: { tokens: ['short-server-token'] },
      metricsInterval: 0,
    });
    try {
      await run.proxy.poller.ready;
      const warnings = shortSecretWarnings(run.log.lines);
      assert.deepEqual(
        warnings.map((line) => line.message),
        [
          '2 of 3 client keys (clientKeys, proxySecrets) are shorter than 32 characters; anyone may guess them',
          'the upstream token (flagsApiToken) is shorter than 32 characters; anyone may guess it',
          '1 of 1 server-side tokens (expServerSideSdkConfig.tokens) is shorter than 32 characters; anyone may guess it',
        ],
      );
      const logged = run.log.text();
      for (const secret of ['short-upstream-token', 'short-client-key', 'short-legacy'])
        assert.ok(!logged.includes(secret), 'secrets are never logged');
    } finally {
      await run.close();
    }
  });

  it('is quiet when every secret has 32 characters or more', async () => {
    const run = await startProxy(smallPayload, {
      flagsApiToken: `*:development.${'a'.repeat(32)}`,
      clientKeys: [LONG],
      expServerSideSdkConfig: { tokens: [`${LONG}-server`] },
      metricsInterval: 0,
    });
    try {
      await run.proxy.poller.ready;
      assert.deepEqual(shortSecretWarnings(run.log.lines), []);
    } finally {
      await run.close();
    }
  });
});

function runMain(
  env: Record<string, string>,
): Promise<{ code: number | null; stderr: string; stdout: string }> {
  const main = fileURLToPath(new URL('../src/main.ts', import.meta.url));
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', main], {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    let stdout = '';
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.on('exit', (code) => resolve({ code, stderr, stdout }));
  });
}

describe('flags-proxy command', () => {
  it('exits non-zero naming a missing variable', async () => {
    const result = await runMain({ FLAGS_API_TOKEN: 'secret-token', FLAGS_PROXY_CLIENT_KEYS: 'k' });
    assert.equal(result.code, 1);
    assert.match(result.stderr, /FLAGS_URL/);
    assert.ok(!result.stderr.includes('secret-token'));
  });

  it('exits non-zero naming a bad value', async () => {
    const result = await runMain({ ...REQUIRED, FLAGS_FETCH_INTERVAL: '0', LOG_LEVEL: 'verbose' });
    assert.equal(result.code, 1);
    assert.match(result.stderr, /FLAGS_FETCH_INTERVAL/);
    assert.match(result.stderr, /LOG_LEVEL/);
  });

  it('prints every option of the schema with --help and exits 0 without starting', async () => {
    const main = fileURLToPath(new URL('../src/main.ts', import.meta.url));
    const args = ['--conditions=source', '--import', 'tsx', main, '--help'];
    const command = spawnCommand(process.execPath, args, {});
    assert.equal(await command.exited, 0, command.output());
    const help = command.output();
    assert.match(help, /^flags-proxy: /);
    for (const spec of optionTable.filter((row) => row.env.length > 0)) {
      assert.ok(help.includes(`  ${spec.env.join(', ')}  (${spec.option}`), spec.option);
      assert.ok(help.includes(`      ${spec.doc}\n`), `meaning of ${spec.option}`);
    }
    assert.match(help, / {2}FLAGS_URL {2}\(flagsUrl; required\)\n/);
    assert.match(
      help,
      / {2}PORT, PROXY_PORT {2}\(port; default 3000\)\n.*\n {6}Takes a whole number from 0 to 65535\.\n/,
    );
  });

  it('starts from the environment, serves, and stops on SIGTERM', async () => {
    const upstream = await new FakeUpstream(smallPayload).start();
    const main = fileURLToPath(new URL('../src/main.ts', import.meta.url));
    const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', main], {
      env: {
        PATH: process.env.PATH ?? '',
        FLAGS_URL: upstream.url,
        FLAGS_API_TOKEN: 'token',
        FLAGS_PROXY_CLIENT_KEYS: 'k1',
        PORT: '0',
        PROXY_HOST: '127.0.0.1',
        LOG_LEVEL: 'info',
        JSON_LOGGER: 'true',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      let out = '';
      const port = await new Promise<number>((resolve, reject) => {
        child.stdout.on('data', (chunk) => {
          out += chunk;
          const match = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
          if (match) resolve(Number(match[1]));
        });
        child.on('exit', () => reject(new Error(`exited: ${out}`)));
      });
      for (const line of out.trim().split('\n')) JSON.parse(line);
      assert.ok(!out.includes('"token"'));
      let status = 0;
      for (let i = 0; i < 100 && status !== 200; i++) {
        status = (await fetch(`http://127.0.0.1:${port}/proxy/health`)).status;
        if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 20));
      }
      assert.equal(status, 200);
      const code = await new Promise<number | null>((resolve) => {
        child.on('exit', resolve);
        child.kill('SIGTERM');
      });
      assert.equal(code, 0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      await upstream.stop();
    }
  });
});
