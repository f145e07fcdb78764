import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ConfigError, loadConfig } from '@flags/proxy';
import { Redis } from 'ioredis';
import { smallPayload } from './fixtures/small.js';
import { changed, names, restartWithUpstreamDown } from './helpers/backup.js';
import { FakeUpstream } from './helpers/fake-upstream.js';
import { call, startProxy, waitFor, withKey } from './helpers/proxy.js';

describe('backup storage', () => {
  const dirs: string[] = [];
  after(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  const base = { FLAGS_URL: 'http://x/api', FLAGS_API_TOKEN: 't', FLAGS_PROXY_CLIENT_KEYS: 'k' };
  const problems = (env: Record<string, string>): string => {
    try {
      loadConfig({ ...base, ...env });
    } catch (error) {
      assert.ok(error instanceof ConfigError);
      return error.message;
    }
    assert.fail('the configuration was accepted');
  };

  it('reads BACKUP_DIR, REDIS_URL, REDIS_KEY_PREFIX and the Redis timeouts', () => {
    assert.equal(
      loadConfig({ ...base, BACKUP_DIR: '/var/lib/flags-proxy' }).backupDir,
      '/var/lib/flags-proxy',
    );
    const redis = loadConfig({
      ...base,
      REDIS_URL: 'redis://cache:6379/2',
      REDIS_KEY_PREFIX: 'edge:',
      REDIS_READ_CONNECTION_TIMEOUT_MILLISECONDS: '500',
      REDIS_WRITE_CONNECTION_TIMEOUT_MILLISECONDS: '700',
    }).redis;
    assert.deepEqual(
      [
        redis?.mode,
        redis?.urls.map(String),
        redis?.keyPrefix,
        redis?.readTimeoutMs,
        redis?.writeTimeoutMs,
      ],
      ['single', ['redis://cache:6379/2'], 'edge:', 500, 700],
    );
    const defaults = loadConfig({ ...base, REDIS_URL: 'redis://cache' }).redis;
    assert.deepEqual(
      [defaults?.keyPrefix, defaults?.readTimeoutMs, defaults?.writeTimeoutMs],
      ['flags-proxy:', 2000, 2000],
    );
    assert.equal(loadConfig(base).redis, undefined);
  });

  it('builds the Redis URL as Unleash Edge does: host, scheme, port, user, password, secure', () => {
    const url = (env: Record<string, string>) =>
      loadConfig({ ...base, ...env }).redis?.urls.map(String);
    assert.deepEqual(
      url({
        REDIS_HOST: 'localhost',
        REDIS_USERNAME: 'redis',
        REDIS_PASSWORD: 'pa ss',
        REDIS_PORT: '6389',
        REDIS_SCHEME: 'rediss',
      }),
      ['rediss://redis:pa%20ss@localhost:6389'],
    );
    assert.deepEqual(url({ REDIS_HOST: 'cache', REDIS_SCHEME: 'TLS' }), ['rediss://cache']);
    assert.deepEqual(url({ REDIS_HOST: 'cache', REDIS_SECURE: 'true' }), ['rediss://cache']);
    assert.deepEqual(
      url({
        REDIS_URL: 'redis://localhost',
        REDIS_USERNAME: 'redis',
        REDIS_PASSWORD: 'password',
        REDIS_SECURE: 'true',
      }),
      ['rediss://redis:password@localhost'],
    );
    assert.deepEqual(
      url({ REDIS_URL: 'redis://a:7001,redis://b:7002' }),
      ['redis://a:7001'],
      'single: the first URL',
    );
    const cluster = loadConfig({
      ...base,
      REDIS_MODE: 'cluster',
      REDIS_URL: 'redis://a:7001, redis://b:7002,redis://c:7003',
      REDIS_PASSWORD: 'secret',
    }).redis;
    assert.equal(cluster?.mode, 'cluster');
    assert.deepEqual(cluster?.urls.map(String), [
      'redis://:secret@a:7001',
      'redis://:secret@b:7002',
      'redis://:secret@c:7003',
    ]);
  });

  it('reads S3_BUCKET_NAME and S3_FORCE_PATH_STYLE', () => {
    assert.deepEqual(
      loadConfig({ ...base, S3_BUCKET_NAME: 'flags', S3_FORCE_PATH_STYLE: 'true' }).s3,
      {
        bucket: 'flags',
        forcePathStyle: true,
      },
    );
    assert.deepEqual(loadConfig({ ...base, S3_BUCKET_NAME: 'flags' }).s3, {
      bucket: 'flags',
      forcePathStyle: false,
    });
  });

  it('refuses to start with a combination that names no store or more than one', () => {
    assert.match(
      problems({ BACKUP_DIR: '/a', REDIS_URL: 'redis://cache' }),
      /backupDir \(BACKUP_DIR\) and redisUrl.*keep one/,
    );
    assert.match(
      problems({ S3_BUCKET_NAME: 'b', REDIS_HOST: 'cache' }),
      /redisUrl\/redisHost.*and s3BucketName/,
    );
    assert.match(
      problems({ REDIS_MODE: 'cluster' }),
      /REDIS_MODE\) is cluster but redisUrl \(REDIS_URL\) is not set/,
    );
    assert.match(problems({ REDIS_MODE: 'cluster', REDIS_HOST: 'a' }), /is cluster but redisUrl/);
    assert.match(
      problems({ REDIS_MODE: 'cluster', REDIS_URL: 'redis://a:1', REDIS_PORT: '2' }),
      /redisPort \(REDIS_PORT\) cannot apply/,
    );
    assert.match(
      problems({ REDIS_PASSWORD: 'x', REDIS_PORT: '2' }),
      /redisPort \(REDIS_PORT\), redisPassword \(REDIS_PASSWORD\) set without redisUrl/,
    );
    assert.doesNotMatch(
      problems({ REDIS_PASSWORD: 'hunter2-secret' }),
      /hunter2/,
      'the password is not repeated',
    );
    assert.match(
      problems({ S3_FORCE_PATH_STYLE: 'true' }),
      /s3ForcePathStyle \(S3_FORCE_PATH_STYLE\) needs s3BucketName/,
    );
    assert.match(problems({ REDIS_MODE: 'sentinel', REDIS_URL: 'redis://a' }), /REDIS_MODE/);
    assert.match(problems({ REDIS_SCHEME: 'http', REDIS_HOST: 'a' }), /REDIS_SCHEME/);
  });

  it('file: restarts from the saved payload while the upstream is down; writes atomically, not on 304', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'flags-proxy-backup-'));
    dirs.push(dir);
    await restartWithUpstreamDown({ backupDir: dir }, async () =>
      (await readdir(dir)).includes('flags-proxy-backup-flags-proxy.json'),
    );
    const files = await readdir(dir);
    assert.deepEqual(files, ['flags-proxy-backup-flags-proxy.json'], 'no temporary file is left');

    const run = await startProxy(smallPayload, { backupDir: dir, flagsAppName: 'mtime' });
    try {
      await run.proxy.poller.ready;
      const file = join(dir, 'flags-proxy-backup-mtime.json');
      await waitFor(async () => (await readdir(dir)).includes('flags-proxy-backup-mtime.json'));
      const written = (await stat(file)).mtimeMs;
      const polls = run.upstream.featureRequests().length;
      await waitFor(() => run.upstream.featureRequests().length >= polls + 3);
      assert.equal((await stat(file)).mtimeMs, written, 'a 304 does not rewrite the backup');
    } finally {
      await run.close();
    }
  });

  it('Redis: restarts from the saved payload while the upstream is down', async (t) => {
    const redis = new Redis('redis://127.0.0.1:6379', {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    redis.on('error', () => {});
    try {
      await redis.connect();
    } catch (error) {
      if (process.env.CI === undefined) {
        t.skip(`Redis at 127.0.0.1:6379 is unreachable (${(error as Error).message})`);
        return;
      }
      throw error;
    }
    const prefix = `flags-proxy-test-${randomUUID()}:`;
    try {
      await restartWithUpstreamDown(
        { redisUrl: 'redis://127.0.0.1:6379', redisKeyPrefix: prefix },
        async () => (await redis.exists(`${prefix}flags-proxy-backup-flags-proxy`)) === 1,
      );
      const saved = await redis.get(`${prefix}flags-proxy-backup-flags-proxy`);
      assert.ok(saved !== null);
      assert.deepEqual(
        JSON.parse(saved).features,
        changed.features,
        'the last upstream payload is saved',
      );
    } finally {
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
      await redis.quit();
    }
  });

  it('bootstrap: ready while the upstream fails; the first upstream sync replaces it', async () => {
    const bootstrap = await new FakeUpstream(changed).start();
    const run = await startProxy(
      smallPayload,
      {
        expBootstrap: {
          url: `${bootstrap.url}/client/features`,
          urlHeaders: { Authorization: 'boot-secret' },
        },
      },
      {
        upstream: (upstream) => {
          upstream.mode = 'error500';
        },
      },
    );
    try {
      await run.proxy.poller.ready;
      assert.deepEqual(names(await call(run, 'GET', '/proxy', { headers: withKey() })), [
        'only-upstream',
      ]);
      assert.equal(bootstrap.featureRequests()[0]?.headers.authorization, 'boot-secret');
      run.upstream.mode = 'ok';
      await waitFor(
        async () =>
          names(await call(run, 'GET', '/proxy', { headers: withKey() })).join() ===
          'simple-on,with-variants,json-variant',
      );
    } finally {
      await run.close();
      await bootstrap.stop();
    }
  });

  it('Redis down: the proxy still syncs and serves; the problem is logged', async () => {
    const run = await startProxy(smallPayload, { redisUrl: 'redis://127.0.0.1:1' });
    try {
      await run.proxy.poller.ready;
      assert.equal((await call(run, 'GET', '/proxy/health')).status, 200);
      await waitFor(() =>
        run.log.lines.some((line) => line.level === 'warn' && /backup/.test(line.message)),
      );
    } finally {
      await run.close();
    }
  });
});
