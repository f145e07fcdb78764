import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  ConfigError,
  closest,
  configSchema,
  group,
  helpText,
  invertedVariable,
  markdownTable,
  option,
  replaceSection,
  secondsVariable,
  USAGE_EXIT_CODE,
  UsageError,
  usageMessage,
} from '@flags/config';
import Type from 'typebox';

const schema = Type.Object(
  {
    url: option(Type.Unsafe<string | URL>(Type.String({ format: 'url' })), {
      env: ['APP_URL'],
      required: true,
      doc: 'Where the app is.',
    }),
    secret: option(Type.String(), { env: ['APP_SECRET'], secret: true, doc: 'A secret.' }),
    port: option(Type.Integer({ minimum: 0, maximum: 65535 }), {
      env: ['APP_PORT', 'PORT'],
      default: 8080,
      doc: 'Port.',
    }),
    verbose: option(Type.Boolean(), {
      env: ['VERBOSE', invertedVariable('QUIET')],
      default: false,
      doc: 'Talks more.',
    }),
    level: option(Type.Enum(['low', 'high']), {
      env: ['LEVEL'],
      default: 'low',
      fromEnv: (raw) => raw.toLowerCase(),
      doc: 'How much.',
    }),
    trusted: option(Type.Array(Type.String({ format: 'proxy-address' })), {
      env: ['TRUSTED'],
      doc: 'Trusted addresses.',
    }),
    hook: option(Type.Unsafe<(() => void) | undefined>({ typeof: 'function' }), {
      env: [],
      doc: 'In code only.',
    }),
    intervalMs: option(Type.Integer({ exclusiveMinimum: 0 }), {
      env: ['INTERVAL_MS', secondsVariable('INTERVAL_SECONDS')],
      default: 5000,
      doc: 'How often, ms.',
    }),
    root: option(Type.String({ format: 'url' }), {
      env: [
        'API_URL',
        {
          name: 'ROOT_URL',
          note: 'without `/api`',
          takes: 'a root URL',
          fromEnv: (raw) => (URL.canParse(raw) ? `${raw}/api` : raw),
        },
      ],
      doc: 'API root.',
    }),
    cors: group({
      origin: option(Type.Array(Type.String()), {
        env: ['CORS_ORIGIN'],
        default: ['*'],
        doc: 'Origins.',
      }),
      maxAge: option(Type.Integer({ exclusiveMinimum: 0 }), { env: ['CORS_MAX_AGE'], doc: 'Age.' }),
    }),
    a: option(Type.Array(Type.String()), { env: ['A'], doc: 'One of two.' }),
    b: option(Type.Array(Type.String()), { env: ['B'], doc: 'The other.' }),
  },
  {
    anyOf: ['a', 'b'].map((name) => ({
      type: 'object',
      required: [name],
      properties: { [name]: { type: 'array', minItems: 1 } },
    })),
  },
);
const config = configSchema(schema);
const BASE = { APP_URL: 'http://x.example', A: 'one' };

function problems(env: Record<string, string>, inCode = {}): readonly string[] {
  try {
    config.load(env, inCode);
  } catch (error) {
    assert.ok(error instanceof ConfigError);
    assert.match(error.message, /^invalid configuration:\n {2}/);
    return error.problems;
  }
  assert.fail('expected a ConfigError');
}

describe('configSchema', () => {
  it('reads the environment by the schema, first variable set wins, defaults filled in', () => {
    const loaded = config.load({
      ...BASE,
      APP_PORT: '',
      PORT: '9000',
      VERBOSE: ' TRUE ',
      LEVEL: 'HIGH',
      TRUSTED: '10.0.0.0/8, loopback,',
      CORS_MAX_AGE: '60',
    });
    assert.deepEqual(loaded, {
      url: 'http://x.example',
      port: 9000,
      verbose: true,
      level: 'high',
      trusted: ['10.0.0.0/8', 'loopback'],
      intervalMs: 5000,
      cors: { origin: ['*'], maxAge: 60 },
      a: ['one'],
    });
  });

  it('takes 1/t and 0/f for booleans too, as Unleash Proxy and most tools write them', () => {
    for (const [word, value] of [
      ['1', true],
      ['t', true],
      [' T ', true],
      ['0', false],
      ['f', false],
    ] as const) {
      assert.equal(config.load({ ...BASE, VERBOSE: word }).verbose, value, word);
    }
    assert.equal(config.load({ ...BASE, QUIET: '1' }).verbose, false);
  });

  it('reads another spelling of an option by its own conversion', () => {
    const loaded = config.load({
      ...BASE,
      QUIET: 'false',
      INTERVAL_SECONDS: '15',
      ROOT_URL: 'http://x.example',
    });
    assert.equal(loaded.verbose, true);
    assert.equal(loaded.intervalMs, 15_000);
    assert.equal(loaded.root, 'http://x.example/api');
    assert.equal(config.load({ ...BASE, QUIET: 'TRUE' }).verbose, false);
  });

  it('takes two spellings that mean the same value, and refuses two that differ, naming both', () => {
    const same = config.load({
      ...BASE,
      VERBOSE: 'true',
      QUIET: 'false',
      INTERVAL_MS: '15000',
      INTERVAL_SECONDS: '15',
      API_URL: 'http://x.example/api',
      ROOT_URL: 'http://x.example',
    });
    assert.deepEqual(
      [same.verbose, same.intervalMs, same.root],
      [true, 15_000, 'http://x.example/api'],
    );
    assert.deepEqual(
      problems({
        ...BASE,
        PORT: '80',
        APP_PORT: '8080',
        VERBOSE: 'true',
        QUIET: 'true',
        INTERVAL_MS: '15000',
        INTERVAL_SECONDS: '0',
      }),
      [
        'APP_PORT="8080" and PORT="80" set port to different values; set only one of them',
        'VERBOSE="true" and QUIET="true" set verbose to different values; set only one of them',
        'INTERVAL_MS="15000" and INTERVAL_SECONDS="0" set intervalMs to different values; set only one of them',
      ],
    );
    const fallback = configSchema(
      Type.Object({
        port: option(Type.Integer(), {
          env: ['APP_PORT', { name: 'PORT', fallback: true }],
          default: 1,
          doc: 'Port.',
        }),
      }),
    );
    assert.equal(fallback.load({ APP_PORT: '2', PORT: '3' }).port, 2, 'a fallback is not compared');
    assert.equal(fallback.load({ PORT: '3' }).port, 3);
    assert.deepEqual(
      problems({ ...BASE, INTERVAL_SECONDS: '0', INTERVAL_MS: '' }),
      ['INTERVAL_SECONDS must be greater than 0, got "0"'],
      'an empty variable is not set',
    );
  });

  it('names what a variable of its own reading takes, and never repeats a secret in a conflict', () => {
    assert.deepEqual(problems({ ...BASE, ROOT_URL: 'ftp' }), [
      'ROOT_URL must be a root URL, got "ftp"',
    ]);
    const secrets = configSchema(
      Type.Object({
        token: option(Type.String(), {
          env: ['TOKEN', 'LEGACY_TOKEN'],
          secret: true,
          doc: 'A token.',
        }),
      }),
    );
    assert.throws(
      () => secrets.load({ TOKEN: 'hunter2', LEGACY_TOKEN: 'swordfish' }),
      (error: unknown) =>
        error instanceof ConfigError &&
        error.problems.join() ===
          'TOKEN and LEGACY_TOKEN set token to different values; set only one of them',
    );
    assert.equal(secrets.load({ TOKEN: 'hunter2', LEGACY_TOKEN: 'hunter2' }).token, 'hunter2');
  });

  it('lets code win, takes URLs and comma-separated strings in code, and leaves undefined to the environment', () => {
    const hook = () => {};
    const loaded = config.load(
      { ...BASE, APP_PORT: '1', CORS_ORIGIN: 'https://env.example' },
      { url: new URL('http://code.example/api'), port: undefined, hook, cors: { origin: 'a, b' } },
    );
    assert.equal(loaded.url, 'http://code.example/api');
    assert.equal(loaded.port, 1);
    assert.equal(loaded.hook, hook);
    assert.deepEqual(loaded.cors.origin, ['a', 'b']);
    assert.match(
      problems(BASE, { secret: new URL('http://x.example') }).join(),
      /secret \(APP_SECRET\) must be a string/,
      'a URL object is text only where a URL is expected',
    );
  });

  it('reports every problem at once, in schema order, naming the variable or the option', () => {
    assert.deepEqual(
      problems(
        {
          APP_SECRET: 'hunter2',
          PORT: '0x50',
          VERBOSE: 'yes',
          LEVEL: 'mid',
          TRUSTED: 'x, ::1, y',
          B: ' ',
        },
        { hook: 'not a function', cors: { maxAge: 0 } },
      ),
      [
        'You must specify the url option (APP_URL)',
        'PORT must be a whole number from 0 to 65535, got "0x50"',
        'VERBOSE must be true or false, got "yes"',
        'LEVEL must be one of low, high, got "mid"',
        'TRUSTED must be a list, each an IP address, a CIDR range, loopback, linklocal or uniquelocal (entries 1, 3), got "x, ::1, y"',
        'hook must be a function, got "not a function"',
        'cors.maxAge (CORS_MAX_AGE) must be greater than 0, got 0',
        'You must specify the a option (A) or the b option (B)',
      ],
    );
  });

  it('names a range that alone failed, and never repeats a secret', () => {
    assert.deepEqual(problems({ ...BASE, APP_PORT: '65536' }), [
      'APP_PORT must be at most 65535, got "65536"',
    ]);
    const found = problems({ ...BASE }, { secret: 42 }).join('\n');
    assert.match(found, /secret \(APP_SECRET\) must be a string/);
    assert.ok(!found.includes('42'));
  });

  it('lists the options with their documented defaults', () => {
    assert.deepEqual(
      config.options.map((row) => [row.key, row.env.join(' '), row.default]),
      [
        ['url', 'APP_URL', undefined],
        ['secret', 'APP_SECRET', undefined],
        ['port', 'APP_PORT PORT', '8080'],
        ['verbose', 'VERBOSE QUIET', 'false'],
        ['level', 'LEVEL', 'low'],
        ['trusted', 'TRUSTED', undefined],
        ['hook', '', undefined],
        ['intervalMs', 'INTERVAL_MS INTERVAL_SECONDS', '5000'],
        ['root', 'API_URL ROOT_URL', undefined],
        ['cors.origin', 'CORS_ORIGIN', '*'],
        ['cors.maxAge', 'CORS_MAX_AGE', undefined],
        ['a', 'A', undefined],
        ['b', 'B', undefined],
      ],
    );
  });
});

describe('documentation', () => {
  it('renders the README table from the schema', () => {
    const table = markdownTable(config.options.slice(2, 4), '–').split('\n');
    assert.deepEqual(table, [
      '| Option | Environment variable | Default | Meaning |',
      '|---|---|---|---|',
      '| `port` | `APP_PORT`, `PORT` | `8080` | Port. |',
      '| `verbose` | `VERBOSE`, `QUIET` (inverted) | `false` | Talks more. |',
    ]);
    assert.match(
      markdownTable(config.options, ''),
      /^\| `hook` \| \(in code only\) \| {2}\| In code only\. \|$/m,
    );
  });

  it('replaces a marked section and refuses a text without the markers', () => {
    const text = 'a\n<!-- t:start -->\nold\n<!-- t:end -->\nb';
    assert.equal(replaceSection(text, 't', 'new'), 'a\n<!-- t:start -->\nnew\n<!-- t:end -->\nb');
    assert.throws(() => replaceSection('a', 't', 'new'), /t:start/);
  });

  it('writes --help from the schema: every environment variable, what it takes, its default', () => {
    const help = helpText({
      command: 'app',
      synopsis: '[--help]',
      summary: 'does things',
      examples: [
        { doc: 'Listen on port 80', command: 'PORT=80 app' },
        { doc: 'Talk more', command: 'VERBOSE=true app' },
      ],
      rows: config.options,
    });
    // The synopsis first, then what it is and examples, the reference after.
    assert.match(
      help,
      /^Usage: app \[--help\]\n\napp: does things\n\nExamples:\n {2}Listen on port 80:\n {4}PORT=80 app\n {2}Talk more:\n {4}VERBOSE=true app\n\nConfigured by environment variables/,
    );
    assert.match(
      help,
      / {2}APP_PORT, PORT {2}\(port; default 8080\)\n {6}Port\.\n {6}Takes a whole number from 0 to 65535\./,
    );
    assert.match(help, / {2}APP_URL {2}\(url; required\)/);
    assert.match(
      help,
      / {2}INTERVAL_MS, INTERVAL_SECONDS \(seconds\) {2}\(intervalMs; default 5000\)\n/,
    );
    assert.ok(!help.includes('hook'), 'in-code-only options are not listed');
  });
});

describe('command lines', () => {
  it('suggests the candidate a mistyped word is closest to, and nothing when none is close', () => {
    const options = ['port', 'upstream-url', 'version', 'help', 'tokens'];
    assert.equal(closest('prot', options), 'port');
    assert.equal(closest('verison', options), 'version');
    assert.equal(closest('upstream-ulr', options), 'upstream-url');
    assert.equal(closest('token', options), 'tokens');
    assert.equal(closest('PORT', options), 'port');
    assert.equal(closest('bogus', options), undefined);
    assert.equal(closest('x', options), undefined);
    assert.equal(closest('frobnicate', options), undefined);
  });

  it('refuses a command line with every problem named, pointing at --help (exit 2)', () => {
    const error = new UsageError(['unknown option --bogus', 'unexpected argument "x"']);
    assert.ok(error instanceof ConfigError);
    assert.equal(
      usageMessage('app', error.problems, 'the options'),
      'app: unknown option --bogus\napp: unexpected argument "x"\nRun `app --help` for the options.\n',
    );
    assert.equal(USAGE_EXIT_CODE, 2);
  });
});
