import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ConfigError, createProxy, loadConfig, optionTable, type ProxyConfig } from '@flags/proxy';
import { spawnCommand } from '../../../test/helpers/processes.js';
import { PROXY_SET_HEADERS, proxyConfig } from '../src/config/options.js';
import { upstreamHeaders } from '../src/sync/upstream.js';
import { smallPayload } from './fixtures/small.js';
import { FakeUpstream } from './helpers/fake-upstream.js';
import { startProxy, waitFor } from './helpers/proxy.js';
import { RecordingLogger } from './helpers/recording-logger.js';

const API_TOKEN_UNLEASH = `*:development.${'u'.repeat(32)}`;

const REQUIRED = {
  FLAGS_URL: 'http://127.0.0.1:4242/api',
  FLAGS_API_TOKEN: 'token',
  FLAGS_PROXY_CLIENT_KEYS: 'a, b',
};

/**
 * The variables of an option as the README and `--help` list them, each with what sets it apart
 * (unit, sense) when it has its own reading.
 */
function documentedVariables(option: string, quote = (name: string) => `\`${name}\``): string {
  const row = proxyConfig.options.find((candidate) => candidate.key === option);
  assert.ok(row, option);
  if (row.variables.length === 0) return '(in code only)';
  return row.variables
    .map(({ name, note }) => (note === undefined ? quote(name) : `${quote(name)} (${note})`))
    .join(', ');
}

const REQUIRED_FOR_PRETRUSTED = {
  FLAGS_URL: 'http://upstream/api',
  FLAGS_API_TOKEN: '*:development.abc',
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

  it("names Unleash Proxy's variables in the client key requirement, as in every other", () => {
    // An Unleash Proxy deployment's environment without its keys: the message names the
    // variables it uses, every variable of each option named.
    const [found] = problems({ UNLEASH_URL: 'http://upstream/api', UNLEASH_API_TOKEN: 'plain' });
    for (const option of proxyConfig.options.filter((row) =>
      ['clientKeys', 'proxySecrets', 'flagsApiToken'].includes(row.key),
    ))
      assert.ok(found?.includes(`(${option.env.join(' or ')})`), `${option.key} in: ${found}`);
  });

  it('takes pretrusted tokens as Unleash-format frontend tokens or secret@environment only', () => {
    const env = { ...REQUIRED_FOR_PRETRUSTED };
    const pretrusted = (value: string) =>
      loadConfig({ ...env, PRETRUSTED_TOKENS: value }).pretrustedTokens;
    assert.deepEqual(pretrusted('web:development.abc, legacy@production'), [
      'web:development.abc',
      'legacy@production',
    ]);
    // A bare word is neither: Unleash Edge refuses it; trusting it would let anyone send it.
    assert.deepEqual(problems({ ...env, PRETRUSTED_TOKENS: 'legacy@production,3064,@x' }), [
      'PRETRUSTED_TOKENS must be a list, each an Unleash-format frontend token (`project:environment.secret`) or `secret@environment` (entries 2, 3)',
    ]);
  });

  it('needs no client keys when a startup token is Unleash-format', () => {
    const env = { FLAGS_URL: 'http://upstream/api' };
    assert.deepEqual(problems({ ...env, FLAGS_API_TOKEN: 'plain-secret' }), [
      'You must specify the clientKeys option (FLAGS_PROXY_CLIENT_KEYS or UNLEASH_PROXY_CLIENT_KEYS) or the proxySecrets option (FLAGS_PROXY_SECRETS or UNLEASH_PROXY_SECRETS) or an Unleash-format token (`project:environment.secret`) in flagsApiToken (FLAGS_API_TOKEN or UNLEASH_API_TOKEN or TOKENS)',
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
      /refreshInterval \(FLAGS_FETCH_INTERVAL or UNLEASH_FETCH_INTERVAL or FEATURES_REFRESH_INTERVAL_SECONDS\)/,
    );
    assert.match(problems(REQUIRED, { logLevel: 'loud' }).join(), /logLevel/);
  });

  it('documents exactly the options of the table in docs/configuration/proxy.md', () => {
    const page = readFileSync(
      fileURLToPath(new URL('../../../docs/configuration/proxy.md', import.meta.url)),
      'utf8',
    );
    const section = page.slice(
      page.indexOf('<!-- options:start -->'),
      page.indexOf('<!-- options:end -->'),
    );
    const rows = section
      .split('\n')
      .filter((line) => /^\| `[^`]+` \|/.test(line))
      .map((line) => line.split('|').map((cell) => cell.trim()));
    const documented = new Map(rows.map((cells) => [cells[1]?.replace(/`/g, ''), cells]));
    for (const spec of optionTable) {
      const row = documented.get(spec.option);
      assert.ok(row, `README documents ${spec.option}`);
      assert.equal(row[2], documentedVariables(spec.option), `variables of ${spec.option}`);
      assert.equal(
        row[3],
        spec.default === undefined ? '' : `\`${spec.default}\``,
        `default of ${spec.option}`,
      );
      const edge = proxyConfig.options.find((candidate) => candidate.key === spec.option);
      const edgeDefault = edge?.profileDefault('edge');
      assert.equal(
        row[4],
        edgeDefault === undefined ? '' : `\`${edgeDefault}\``,
        `edge-mode default of ${spec.option}`,
      );
      assert.equal(row[5], spec.doc, `meaning of ${spec.option}`);
    }
    assert.equal(documented.size, optionTable.length, 'no undocumented rows');
  });
});

describe('Unleash Proxy’s variable names', () => {
  /** An Unleash Proxy 1.4 deployment's environment, as it is (its booleans as `safeBoolean` read them). */
  const UNLEASH_PROXY = {
    UNLEASH_URL: 'https://flags.example/api',
    UNLEASH_API_TOKEN: 'upstream-token',
    UNLEASH_PROXY_CLIENT_KEYS: 'key-1, key-2',
    UNLEASH_APP_NAME: 'unleash-proxy',
    UNLEASH_INSTANCE_ID: 'gitlab-instance',
    UNLEASH_FETCH_INTERVAL: '1000',
    UNLEASH_METRICS_INTERVAL: '0',
    UNLEASH_METRICS_JITTER: '300',
    UNLEASH_ENVIRONMENT: 'production',
    UNLEASH_PROJECT_NAME: 'web',
    UNLEASH_NAME_PREFIX: 'checkout.',
    UNLEASH_TAGS: 'simple:proxy, demo:test',
    UNLEASH_CUSTOM_STRATEGIES_FILE: './strategies.js',
    ENABLE_ALL_ENDPOINT: '1',
    ENABLE_OAS: 't',
    CORS_CREDENTIALS: '0',
  };

  it('loads an Unleash Proxy deployment’s environment as the same options', () => {
    const config = loadConfig(UNLEASH_PROXY);
    assert.equal(config.flagsUrl.href, 'https://flags.example/api/');
    assert.deepEqual(config.startupTokens, ['upstream-token']);
    assert.deepEqual(config.clientKeys, ['key-1', 'key-2']);
    assert.equal(config.flagsAppName, 'unleash-proxy');
    assert.equal(config.flagsInstanceId, 'gitlab-instance');
    assert.equal(config.refreshInterval, 1000);
    assert.equal(config.metricsInterval, 0);
    assert.equal(config.metricsJitter, 300);
    assert.equal(config.environment, 'production');
    assert.equal(config.projectName, 'web');
    assert.equal(config.namePrefix, 'checkout.');
    assert.deepEqual(config.tags, [
      { name: 'simple', value: 'proxy' },
      { name: 'demo', value: 'test' },
    ]);
    assert.deepEqual(config.customStrategies, ['./strategies.js']);
    assert.equal(config.enableAllEndpoint, true);
    assert.equal(config.enableOAS, true);
    assert.equal(config.cors.credentials, false);
    // The deprecated spelling of the client keys too.
    const { UNLEASH_PROXY_CLIENT_KEYS: _keys, ...withSecrets } = UNLEASH_PROXY;
    const secrets = loadConfig({ ...withSecrets, UNLEASH_PROXY_SECRETS: 'secret-1' });
    assert.deepEqual(secrets.clientKeys, ['secret-1']);
  });

  it('takes both spellings when they agree, and refuses them when they differ', () => {
    assert.equal(
      loadConfig({ ...UNLEASH_PROXY, FLAGS_URL: 'https://flags.example/api' }).flagsUrl.href,
      'https://flags.example/api/',
    );
    const [problem] = problems({ ...UNLEASH_PROXY, FLAGS_APP_NAME: 'other' });
    assert.match(String(problem), /FLAGS_APP_NAME.*UNLEASH_APP_NAME/);
  });
});

describe('Unleash Edge’s variable names', () => {
  const EDGE_TOKEN = `*:development.${'e'.repeat(32)}`;
  const EDGE = { UPSTREAM_URL: 'http://unleash.example:4242', TOKENS: EDGE_TOKEN };

  it('reads each of them as the option it stands for, in the option’s unit and sense', () => {
    const cases: [Record<string, string>, (config: ProxyConfig) => unknown, unknown][] = [
      [{}, (c) => c.flagsUrl.href, 'http://unleash.example:4242/api/'],
      [
        { UPSTREAM_URL: 'https://x.example/unleash//' },
        (c) => c.flagsUrl.href,
        'https://x.example/unleash/api/',
      ],
      [
        { TOKENS: '*:development.a1, *:production.b2' },
        (c) => c.startupTokens,
        ['*:development.a1', '*:production.b2'],
      ],
      [
        { PRETRUSTED_TOKENS: 'legacy-key@development' },
        (c) => c.pretrustedTokens,
        ['legacy-key@development'],
      ],
      [{ FEATURES_REFRESH_INTERVAL_SECONDS: '15' }, (c) => c.refreshInterval, 15_000],
      [{ METRICS_INTERVAL_SECONDS: '60' }, (c) => c.metricsInterval, 60_000],
      [{ TOKEN_REVALIDATION_INTERVAL_SECONDS: '120' }, (c) => c.tokenRevalidationInterval, 120_000],
      [{ UPSTREAM_REQUEST_TIMEOUT: '5' }, (c) => c.upstreamTimeoutMs, 5000],
      [{ BACKUP_FOLDER: '/var/lib/edge' }, (c) => c.backupDir, '/var/lib/edge'],
      [
        { REDIS_URL: 'redis://redis:6379/0' },
        (c) => c.redis?.urls[0]?.href,
        'redis://redis:6379/0',
      ],
      [{ BASE_PATH: '/edge' }, (c) => c.proxyBasePath, '/edge'],
      [{ TRUST_PROXY: 'true' }, (c) => c.trustProxy, true],
      [
        { CORS_ORIGIN: 'https://app.example' },
        (c) => c.cors.origin,
        new Set(['https://app.example']),
      ],
      [
        { CORS_ALLOWED_HEADERS: 'authorization,content-type' },
        (c) => c.cors.allowedHeaders,
        'authorization, content-type',
      ],
      [
        { CORS_EXPOSED_HEADERS: 'ETag,X-Request-Id' },
        (c) => c.cors.exposedHeaders,
        'ETag, X-Request-Id',
      ],
      [{ CORS_MAX_AGE: '600' }, (c) => c.cors.maxAge, 600],
      [{ DISABLE_ALL_ENDPOINT: 'true' }, (c) => c.enableAllEndpoint, false],
      [{ DISABLE_ALL_ENDPOINT: 'false' }, (c) => c.enableAllEndpoint, true],
      [
        { CUSTOM_CLIENT_HEADERS: 'X-Api-Key: gateway-secret,X-Route:eu:west' },
        (c) => c.customHeaders,
        { 'x-api-key': 'gateway-secret', 'x-route': 'eu:west' },
      ],
      [{ SKIP_SSL_VERIFICATION: 'true' }, (c) => c.rejectUnauthorized, false],
      [{ SKIP_SSL_VERIFICATION: 'false' }, (c) => c.rejectUnauthorized, true],
      [{ LOG_FORMAT: 'json' }, (c) => c.useJsonLogger, true],
      [{ LOG_FORMAT: 'plain' }, (c) => c.useJsonLogger, false],
      [{ LOG_FORMAT: 'Pretty' }, (c) => c.useJsonLogger, false],
      [{ PORT: '3063' }, (c) => c.port, 3063],
      [{ STRICT: 'true' }, (c) => c.strictTokens, true],
    ];
    for (const [env, read, expected] of cases)
      assert.deepEqual(read(loadConfig({ ...EDGE, ...env })), expected, JSON.stringify(env));
  });

  it('loads an Edge deployment’s environment as it is', () => {
    const config = loadConfig({
      UPSTREAM_URL: 'https://unleash.example.com',
      TOKENS: `${EDGE_TOKEN},*:production.${'p'.repeat(32)}`,
      PORT: '3063',
      FEATURES_REFRESH_INTERVAL_SECONDS: '10',
      METRICS_INTERVAL_SECONDS: '60',
      BACKUP_FOLDER: '/data',
      CORS_ORIGIN: '*',
      TRUST_PROXY: 'true',
      LOG_FORMAT: 'json',
      DISABLE_ALL_ENDPOINT: 'true',
    });
    assert.equal(config.flagsUrl.href, 'https://unleash.example.com/api/');
    assert.equal(config.startupTokens.length, 2);
    assert.equal(config.flagsApiToken, EDGE_TOKEN);
    assert.deepEqual(config.clientKeys, [], 'no client keys needed');
    assert.deepEqual(
      [config.port, config.refreshInterval, config.metricsInterval, config.backupDir],
      [3063, 10_000, 60_000, '/data'],
    );
  });

  it('takes two spellings of one option that agree, and refuses those that disagree, naming both', () => {
    const agreeing = loadConfig({
      ...EDGE,
      FLAGS_URL: 'http://unleash.example:4242/api',
      FLAGS_API_TOKEN: EDGE_TOKEN,
      FLAGS_FETCH_INTERVAL: '15000',
      FEATURES_REFRESH_INTERVAL_SECONDS: '15',
      ENABLE_ALL_ENDPOINT: 'true',
      DISABLE_ALL_ENDPOINT: 'false',
      JSON_LOGGER: 'false',
      LOG_FORMAT: 'pretty',
    });
    assert.deepEqual(
      [agreeing.refreshInterval, agreeing.enableAllEndpoint, agreeing.useJsonLogger],
      [15_000, true, false],
    );
    assert.deepEqual(
      problems({
        ...EDGE,
        FLAGS_URL: 'http://other.example/api',
        FLAGS_API_TOKEN: `*:production.${'x'.repeat(32)}`,
        FLAGS_METRICS_INTERVAL: '60',
        METRICS_INTERVAL_SECONDS: '60',
        JSON_LOGGER: 'false',
        LOG_FORMAT: 'json',
        BACKUP_DIR: '/a',
        BACKUP_FOLDER: '/b',
        ENABLE_ALL_ENDPOINT: 'true',
        DISABLE_ALL_ENDPOINT: 'true',
        HTTP_OPTIONS_REJECT_UNAUTHORIZED: 'true',
        SKIP_SSL_VERIFICATION: 'true',
      }),
      [
        'FLAGS_URL="http://other.example/api" and UPSTREAM_URL="http://unleash.example:4242" set flagsUrl to different values; set only one of them',
        'FLAGS_API_TOKEN and TOKENS set flagsApiToken to different values; set only one of them',
        'FLAGS_METRICS_INTERVAL="60" and METRICS_INTERVAL_SECONDS="60" set metricsInterval to different values; set only one of them',
        'JSON_LOGGER="false" and LOG_FORMAT="json" set useJsonLogger to different values; set only one of them',
        'BACKUP_DIR="/a" and BACKUP_FOLDER="/b" set backupDir to different values; set only one of them',
        'ENABLE_ALL_ENDPOINT="true" and DISABLE_ALL_ENDPOINT="true" set enableAllEndpoint to different values; set only one of them',
        'HTTP_OPTIONS_REJECT_UNAUTHORIZED="true" and SKIP_SSL_VERIFICATION="true" set httpOptions.rejectUnauthorized to different values; set only one of them',
      ],
    );
  });

  it('refuses a bad value naming the Edge variable, in its own terms', () => {
    assert.deepEqual(
      problems({
        ...EDGE,
        UPSTREAM_URL: 'not a url',
        FEATURES_REFRESH_INTERVAL_SECONDS: '0',
        METRICS_INTERVAL_SECONDS: '1.5',
        LOG_FORMAT: 'xml',
        DISABLE_ALL_ENDPOINT: 'yes',
      }),
      [
        'UPSTREAM_URL must be a URL, got "not a url"',
        'FEATURES_REFRESH_INTERVAL_SECONDS must be greater than 0, got "0"',
        'METRICS_INTERVAL_SECONDS must be a whole number ≥ 0, got "1.5"',
        'LOG_FORMAT must be one of plain, json, pretty, got "xml"',
        'DISABLE_ALL_ENDPOINT must be true or false, got "yes"',
      ],
    );
  });
});

describe('custom upstream headers', () => {
  const refused = /^CUSTOM_CLIENT_HEADERS must be comma-separated Name: value headers/;

  it('refuses malformed entries and any header the proxy sets itself, in any case, never echoing a value', () => {
    for (const value of [
      'Authorization: gateway-secret',
      'X-Api-Key: gateway-secret, authorization:gateway-secret',
    ]) {
      // The header that carries the upstream token (`upstreamAuthHeader`).
      const found = problems({ ...REQUIRED, CUSTOM_CLIENT_HEADERS: value });
      assert.equal(found.length, 1, value);
      assert.match(
        found[0] as string,
        /may not set "authorization": it carries the upstream token/,
      );
      assert.ok(!found.join().includes('gateway-secret'), 'values are secrets');
    }
    assert.match(
      problems({
        ...REQUIRED,
        UPSTREAM_AUTH_HEADER: 'X-Unleash-Token',
        CUSTOM_CLIENT_HEADERS: 'x-unleash-token: gateway-secret',
      }).join(),
      /may not set "x-unleash-token"/,
    );
    for (const value of [
      'USER-AGENT: gateway-secret',
      'Unleash-AppName: gateway-secret',
      'Content-Length: 1',
      'X-Api-Key gateway-secret',
      ': gateway-secret',
      'X Api Key: gateway-secret',
      'X-Api-Key: gateway-secret, x-api-key: gateway-secret',
    ]) {
      const found = problems({ ...REQUIRED, CUSTOM_CLIENT_HEADERS: value });
      assert.equal(found.length, 1, value);
      assert.match(found[0] as string, refused, value);
      assert.ok(!found.join().includes('gateway-secret'), 'values are secrets');
    }
    assert.match(
      problems(REQUIRED, { customHeaders: { 'X-Api-Key': 'line\r\nbreak' } }).join(),
      /^customHeaders \(FLAGS_CUSTOM_HEADERS or CUSTOM_CLIENT_HEADERS\) must be/,
    );
    assert.match(problems(REQUIRED, { customHeaders: { Host: 'elsewhere' } }).join(), /must be/);
  });

  it('covers every header the proxy sets on upstream requests', () => {
    const config = loadConfig(REQUIRED, { customHeaders: { 'X-Api-Key': 'k' } });
    // The token's header is refused in `load.ts` (above), the rest by the schema.
    const own = Object.keys(upstreamHeaders(config)).filter(
      (name) => name !== 'x-api-key' && name !== config.upstreamAuthHeader,
    );
    for (const name of [
      ...own,
      'if-none-match',
      'content-type',
      'content-length',
      'unleash-interval',
      'accept',
      'cache-control',
      'last-event-id',
    ])
      assert.ok((PROXY_SET_HEADERS as readonly string[]).includes(name), name);
  });

  it('sends them on every upstream request, beside the token', async () => {
    const upstream = await new FakeUpstream(smallPayload).start();
    const proxy = await createProxy(
      { logger: new RecordingLogger(), refreshInterval: 20, metricsInterval: 0 },
      {
        UPSTREAM_URL: upstream.url.replace(/\/api$/, ''),
        TOKENS: API_TOKEN_UNLEASH,
        CUSTOM_CLIENT_HEADERS: 'X-Api-Key: gateway-secret, X-Route: eu:west',
      },
    );
    try {
      await waitFor(
        () =>
          upstream.featureRequests().length >= 2 &&
          upstream.requests.some((request) => request.path === '/api/client/register'),
      );
      const register = upstream.requests.find((request) => request.path === '/api/client/register');
      for (const request of [...upstream.featureRequests().slice(0, 2), register]) {
        assert.equal(request?.headers['x-api-key'], 'gateway-secret');
        assert.equal(request?.headers['x-route'], 'eu:west');
        assert.equal(request?.headers.authorization, API_TOKEN_UNLEASH);
        assert.equal(request?.headers['unleash-appname'], 'flags-proxy');
      }
    } finally {
      await proxy.app.close();
      await upstream.stop();
    }
  });

  it('sends the token in UPSTREAM_AUTH_HEADER, leaving Authorization to a gateway’s credential', async () => {
    const upstream = await new FakeUpstream(smallPayload).start();
    const proxy = await createProxy(
      { logger: new RecordingLogger(), refreshInterval: 20, metricsInterval: 0 },
      {
        UPSTREAM_URL: upstream.url.replace(/\/api$/, ''),
        TOKENS: API_TOKEN_UNLEASH,
        UPSTREAM_AUTH_HEADER: 'X-Unleash-Token',
        CUSTOM_CLIENT_HEADERS: 'Authorization: Bearer gateway-secret',
      },
    );
    try {
      await waitFor(
        () =>
          upstream.featureRequests().length >= 1 &&
          upstream.requests.some((request) => request.path === '/api/client/register'),
      );
      const register = upstream.requests.find((request) => request.path === '/api/client/register');
      for (const request of [upstream.featureRequests()[0], register]) {
        assert.equal(request?.headers['x-unleash-token'], API_TOKEN_UNLEASH);
        assert.equal(request?.headers.authorization, 'Bearer gateway-secret');
      }
    } finally {
      await proxy.app.close();
      await upstream.stop();
    }
  });
});

describe('start-up warnings', () => {
  const LONG = 'k'.repeat(32);
  const shortSecretWarnings = (lines: readonly { level: string; message: string }[]) =>
    lines.filter((line) => line.level === 'warn' && /shorter than 32/.test(line.message));

  it('warns (and starts) when a client key, server-side token, the upstream token or the OFREP event secret is short', async () => {
    const run = await startProxy(smallPayload, {
      flagsApiToken: 'short-upstream-token',
      clientKeys: ['short-client-key', LONG],
      proxySecrets: ['short-legacy'],
      expServerSideSdkConfig: { tokens: ['short-server-token'] },
      ofrepEventSecret: 'short-ofrep-secret',
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
          'the OFREP event secret (ofrepEventSecret) is shorter than 32 characters; anyone may guess it and sign event-stream credentials',
        ],
      );
      const logged = run.log.text();
      for (const secret of [
        'short-upstream-token',
        'short-client-key',
        'short-legacy',
        'short-ofrep-secret',
      ])
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
  args: readonly string[] = [],
): Promise<{ code: number | null; stderr: string; stdout: string }> {
  const main = fileURLToPath(new URL('../src/main.ts', import.meta.url));
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      ['--conditions=source', '--import', 'tsx', main, ...args],
      {
        env: { PATH: process.env.PATH ?? '', ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
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

/**
 * The command serving from `env` (with `LOG_LEVEL=info` and JSON lines, to see it listen): the
 * process, the port it listens on and what it printed until then.
 */
async function listeningMain(
  env: Record<string, string>,
  args: readonly string[] = [],
): Promise<{ child: ChildProcess; port: number; output: string }> {
  const main = fileURLToPath(new URL('../src/main.ts', import.meta.url));
  const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', main, ...args], {
    env: { PATH: process.env.PATH ?? '', PORT: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stderr.on('data', (chunk) => {
    output += chunk;
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout.on('data', (chunk) => {
      output += chunk;
      const match = /listening on http:\/\/[^\s"]*:(\d+)/.exec(output);
      if (match) resolve(Number(match[1]));
    });
    child.on('exit', () => reject(new Error(`exited: ${output}`)));
  });
  return { child, port, output };
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
    assert.match(help, /^Usage: flags-proxy .*\n\nflags-proxy: /);
    for (const spec of optionTable.filter((row) => row.env.length > 0)) {
      const variables = documentedVariables(spec.option, String);
      assert.ok(help.includes(`  ${variables}  (${spec.option}`), spec.option);
      assert.ok(help.includes(`      ${spec.doc}\n`), `meaning of ${spec.option}`);
    }
    assert.match(
      help,
      / {2}FLAGS_URL, UNLEASH_URL, UPSTREAM_URL \(server root URL; `\/api` is added\) {2}\(flagsUrl; required\)\n/,
    );
    assert.match(
      help,
      / {2}FLAGS_FETCH_INTERVAL, UNLEASH_FETCH_INTERVAL, FEATURES_REFRESH_INTERVAL_SECONDS \(seconds\) {2}\(refreshInterval; default 5000; edge 15000\)\n/,
    );
    for (const probe of ['ready', 'health'])
      assert.match(
        help,
        new RegExp(
          `\n  flags-proxy ${probe} \\[-e\\|--edge-url\\|--url <base>\\] \\[-c\\|--ca-certificate-file <pem>\\] \\[--timeout <ms>\\]\n {6}.*GET <base>/internal-backstage/${probe} answers 200`,
        ),
      );
    assert.match(
      help,
      /\n {2}flags-proxy \[OPTIONS\] edge \[OPTIONS\]\n {6}Serves with Unleash Edge’s defaults/,
    );
    assert.match(
      help,
      / {2}PORT, PROXY_PORT {2}\(port; default 3000; edge 3063\)\n.*\n {6}Takes a whole number from 0 to 65535\.\n/,
    );
  });

  it('starts from an Unleash Edge deployment’s environment', async () => {
    const upstream = await new FakeUpstream(smallPayload).start();
    const { child, output } = await listeningMain({
      UPSTREAM_URL: upstream.url.replace(/\/api$/, ''),
      TOKENS: API_TOKEN_UNLEASH,
      FEATURES_REFRESH_INTERVAL_SECONDS: '1',
      METRICS_INTERVAL_SECONDS: '0',
      CUSTOM_CLIENT_HEADERS: 'X-Api-Key: gateway-secret',
      LOG_FORMAT: 'json',
    });
    try {
      for (const line of output.trim().split('\n')) JSON.parse(line);
      await waitFor(() => upstream.featureRequests().length > 0);
      const [first] = upstream.featureRequests();
      assert.equal(first?.headers.authorization, API_TOKEN_UNLEASH);
      assert.equal(first?.headers['x-api-key'], 'gateway-secret');
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      await upstream.stop();
    }
  });

  it('starts as Unleash Edge’s image runs it: `edge` and the settings as options', async () => {
    const upstream = await new FakeUpstream(smallPayload).start();
    const { child } = await listeningMain({}, [
      'edge',
      '--upstream-url',
      upstream.url.replace(/\/api$/, ''),
      `--tokens=${API_TOKEN_UNLEASH}`,
      '--features-refresh-interval-seconds',
      '1',
      '--metrics-interval-seconds',
      '0',
      '--strict',
    ]);
    try {
      await waitFor(() => upstream.featureRequests().length > 0);
      assert.equal(upstream.featureRequests()[0]?.headers.authorization, API_TOKEN_UNLEASH);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      await upstream.stop();
    }
  });

  it('refuses an option it does not know, or a command, naming it', async () => {
    const unknown = await runMain(REQUIRED, ['edge', '--upstream-url', 'http://x', '--frobnicate']);
    // A command line it cannot take exits with 2, as clap does for Unleash Edge.
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /unknown option --frobnicate/);
    const command = await runMain(REQUIRED, ['hydrate']);
    assert.equal(command.code, 2);
    assert.match(command.stderr, /unknown command "hydrate"/);
    const bad = await runMain(REQUIRED, ['--features-refresh-interval-seconds', '0']);
    assert.equal(bad.code, 1);
    // Named as written on the command line (issue #47).
    assert.match(bad.stderr, /--features-refresh-interval-seconds must be greater than 0/);
  });

  it('starts from the environment, serves, and stops on SIGTERM', async () => {
    const upstream = await new FakeUpstream(smallPayload).start();
    const { child, port, output } = await listeningMain({
      FLAGS_URL: upstream.url,
      FLAGS_API_TOKEN: 'token',
      FLAGS_PROXY_CLIENT_KEYS: 'k1',
      PROXY_HOST: '127.0.0.1',
      JSON_LOGGER: 'true',
    });
    try {
      assert.match(output, /listening on http:\/\/127\.0\.0\.1:/);
      for (const line of output.trim().split('\n')) JSON.parse(line);
      assert.ok(!output.includes('"token"'));
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
