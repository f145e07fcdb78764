import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { spawnCommand } from '../../../test/helpers/processes.js';
import { ConfigError, loadConfig, maskToken } from '../src/config/load.js';
import { options } from '../src/config/options.js';
import { errorCatalogue } from '../src/errors.js';

/** A generated or checked section of a user page: the text between its start and end markers. */
const section = (page: string, name: string) => {
  const text = readFileSync(new URL(`../../../docs/${page}`, import.meta.url), 'utf8');
  const start = text.indexOf(`<!-- ${name}:start -->`);
  const end = text.indexOf(`<!-- ${name}:end -->`);
  assert.ok(start >= 0 && end > start, `docs/${page} section ${name}`);
  return text.slice(start, end);
};

describe('configuration', () => {
  it('has documented defaults', () => {
    const config = loadConfig({});
    assert.equal(config.port, 4242);
    assert.equal(config.databaseUrl, undefined);
    assert.equal(config.dataDir, './data');
    // Unset, a token variable creates and deletes nothing (issue 47).
    assert.equal(config.adminTokens, undefined);
    assert.equal(config.publicUrl.href, 'http://localhost:4242/');
    assert.equal(config.logLevel, 'info');
    assert.equal(config.jsonLogger, true);
    assert.equal(config.importBodyLimitBytes, 25 * 1024 * 1024);
    assert.ok(Object.isFrozen(config));
  });

  it('reads the environment: SERVER_PORT before PORT, lists split and trimmed', () => {
    const config = loadConfig({
      PORT: '8080',
      SERVER_PORT: '9090',
      DATABASE_URL: 'postgres://x@db/flags',
      FLAGS_ADMIN_TOKENS: ' a1, a2 ,',
      FLAGS_CLIENT_TOKENS: 'default:production.s1,*:development.s2',
      JSON_LOGGER: 'false',
      LOG_LEVEL: 'debug',
      PUBLIC_URL: 'https://flags.example.com',
    });
    assert.equal(config.port, 9090);
    assert.equal(loadConfig({ PORT: '8080' }).port, 8080);
    assert.equal(config.databaseUrl, 'postgres://x@db/flags');
    assert.deepEqual(config.adminTokens, ['a1', 'a2']);
    assert.deepEqual(config.clientTokens, ['default:production.s1', '*:development.s2']);
    assert.equal(config.jsonLogger, false);
    assert.equal(config.logLevel, 'debug');
    assert.equal(config.publicUrl.host, 'flags.example.com');
  });

  it('reports every problem at once, without printing secrets whole', () => {
    try {
      loadConfig({
        SERVER_PORT: '70000',
        LOG_LEVEL: 'loud',
        JSON_LOGGER: 'maybe',
        PUBLIC_URL: 'not a url',
        IMPORT_BODY_LIMIT_BYTES: '-1',
        FLAGS_CLIENT_TOKENS: 'nosecretformat-abcdefgh',
      });
      assert.fail('expected a ConfigError');
    } catch (error) {
      assert.ok(error instanceof ConfigError);
      assert.equal(error.problems.length, 6);
      assert.ok(!error.message.includes('abcdefgh'));
    }
  });

  it('reads TRUST_PROXY as true, false, a hop count or trusted addresses, and refuses others', () => {
    assert.equal(loadConfig({}).trustProxy, false);
    assert.equal(loadConfig({ TRUST_PROXY: 'TRUE' }).trustProxy, true);
    assert.equal(loadConfig({ TRUST_PROXY: '2' }).trustProxy, 2);
    assert.deepEqual(loadConfig({ TRUST_PROXY: '10.0.0.0/8, loopback,::1' }).trustProxy, [
      '10.0.0.0/8',
      'loopback',
      '::1',
    ]);
    for (const bad of ['yes', '10.0.0.0/33', '10.0.0.1,lb.internal']) {
      assert.throws(
        () => loadConfig({ TRUST_PROXY: bad }),
        (error) => error instanceof ConfigError && /TRUST_PROXY/.test(error.message),
        bad,
      );
    }
  });

  it('keeps client instances 7 days and metrics buckets 8 days, never less than the insights week', () => {
    const defaults = loadConfig({});
    assert.equal(defaults.clientInstanceRetentionDays, 7);
    assert.equal(defaults.clientMetricsRetentionDays, 8);
    const set = loadConfig({
      CLIENT_INSTANCE_RETENTION_DAYS: '2',
      CLIENT_METRICS_RETENTION_DAYS: '7',
    });
    assert.equal(set.clientInstanceRetentionDays, 2);
    assert.equal(set.clientMetricsRetentionDays, 7);
    assert.throws(
      () => loadConfig({ CLIENT_METRICS_RETENTION_DAYS: '6' }),
      (error) =>
        error instanceof ConfigError &&
        error.problems.length === 1 &&
        /CLIENT_METRICS_RETENTION_DAYS must be at least 7/.test(error.message),
    );
    for (const bad of ['0', '-1', '1.5', 'week']) {
      assert.throws(
        () =>
          loadConfig({ CLIENT_INSTANCE_RETENTION_DAYS: bad, CLIENT_METRICS_RETENTION_DAYS: bad }),
        (error) => error instanceof ConfigError && error.problems.length === 2,
        bad,
      );
    }
  });

  it('masks tokens for logs', () => {
    assert.equal(maskToken('default:production.0123456789abcdef'), 'default:production.0123…');
    assert.equal(maskToken('plainsecret'), 'plai…');
  });

  it('documents every option in the docs/configuration/server.md tables, and nothing else', () => {
    const rows = section('configuration/server.md', 'options')
      .split('\n')
      .filter((line) => line.startsWith('| `'));
    assert.equal(rows.length, options.length);
    // The page groups options by task, so each is found by its name.
    const rowOf = new Map(rows.map((row) => [row.split(' | ')[0], row]));
    for (const option of options) {
      const row = rowOf.get(`| \`${option.key}\``);
      assert.ok(row, `the page documents ${option.key}`);
      const cells = row.split(' | ');
      assert.equal(cells[0], `| \`${option.key}\``);
      assert.equal(cells[1], option.env.map((name) => `\`${name}\``).join(', '));
      assert.equal(cells[2], option.default ? `\`${option.default}\`` : '–');
      assert.equal(cells[3], `${option.doc} |`);
    }
  });

  it('prints every option with flags-server --help and exits 0 without starting', async () => {
    const main = fileURLToPath(new URL('../src/main.ts', import.meta.url));
    const args = ['--conditions=source', '--import', 'tsx', main, '--help'];
    const command = spawnCommand(process.execPath, args, { DATABASE_URL: 'postgres://nowhere' });
    assert.equal(await command.exited, 0, command.output());
    const help = command.output();
    assert.match(help, /^Usage: flags-server .*\n\nflags-server: /);
    for (const option of options) {
      assert.ok(help.includes(`  ${option.env.join(', ')}  (${option.key}`), option.key);
      assert.ok(help.includes(`      ${option.doc}\n`), `meaning of ${option.key}`);
    }
    assert.match(
      help,
      / {2}CLIENT_METRICS_RETENTION_DAYS {2}\(clientMetricsRetentionDays; default 8\)\n.*\n {6}Takes a whole number ≥ 7\.\n/,
    );
  });

  it('documents every code of the catalogue once, with its name and status, and nothing else', () => {
    const documented = section('reference/errors.md', 'server-errors')
      .split('\n')
      .filter((line) => line.startsWith('| `'))
      .map((line) => {
        // | `Name` | status | `CODE` | when |
        const row = /^\| `(\w+)` \| (\d{3}) \| `(\w+)` \| (.+) \|$/.exec(line);
        assert.ok(row, `a well-formed row: ${line}`);
        const [, name, status, code, when] = row;
        assert.ok(when?.trim(), `${code} says when it is answered`);
        return `${code} ${name} ${status}`;
      });
    const catalogue = Object.entries(errorCatalogue).map(
      ([code, entry]) => `${code} ${entry.name} ${entry.status}`,
    );
    assert.equal(new Set(documented).size, documented.length, 'each code once');
    assert.deepEqual([...documented].sort(), [...catalogue].sort());
  });
});
