import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { Cluster, Redis } from 'ioredis';
import S3rver from 's3rver';
import { smallPayload } from './fixtures/small.js';
import { deadUpstreamUrl, restartWithUpstreamDown } from './helpers/backup.js';
import { call, startProxy, waitFor, withKey } from './helpers/proxy.js';

const run = promisify(execFile);

/** A TCP port free now, whose cluster-bus port (+10000) is free too. */
async function freeClusterPort(): Promise<number> {
  const free = (port: number) =>
    new Promise<number | undefined>((resolve) => {
      const server = createServer();
      server.once('error', () => resolve(undefined));
      server.listen(port, '127.0.0.1', () => {
        const { port: taken } = server.address() as { port: number };
        server.close(() => resolve(taken));
      });
    });
  for (;;) {
    const port = await free(0);
    if (port !== undefined && port < 55535 && (await free(port + 10000)) !== undefined) return port;
  }
}

/**
 * A real three-node Redis Cluster (Debian's `redis-server --cluster-enabled yes`, no replicas),
 * each node in a temporary directory of its own; `stop()` ends the processes and removes them.
 */
async function startCluster(): Promise<{ urls: string[]; stop(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'flags-proxy-redis-cluster-'));
  const nodes: ChildProcess[] = [];
  const ports: number[] = [];
  const stop = async () => {
    await Promise.all(
      nodes.map(
        (node) =>
          new Promise<void>((resolve) => {
            if (node.exitCode !== null) return resolve();
            node.once('exit', () => resolve());
            node.kill('SIGTERM');
          }),
      ),
    );
    await rm(dir, { recursive: true, force: true });
  };
  try {
    for (let index = 0; index < 3; index += 1) {
      const port = await freeClusterPort();
      ports.push(port);
      // A node per port, nothing saved to disk: the test needs no durability.
      const node = spawn(
        'redis-server',
        [
          '--port',
          String(port),
          '--bind',
          '127.0.0.1',
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          join(dir, `nodes-${port}.conf`),
          '--dir',
          dir,
          '--save',
          '',
          '--appendonly',
          'no',
        ],
        { stdio: 'ignore' },
      );
      nodes.push(node);
    }
    for (const port of ports) {
      await waitFor(async () => {
        const probe = new Redis(port, '127.0.0.1', {
          lazyConnect: true,
          retryStrategy: () => null,
        });
        probe.on('error', () => {});
        try {
          await probe.connect();
          return (await probe.ping()) === 'PONG';
        } catch {
          return false;
        } finally {
          probe.disconnect();
        }
      });
    }
    await run('redis-cli', [
      '--cluster',
      'create',
      ...ports.map((port) => `127.0.0.1:${port}`),
      '--cluster-replicas',
      '0',
      '--cluster-yes',
    ]);
    for (const port of ports) {
      await waitFor(async () => {
        const { stdout } = await run('redis-cli', ['-p', String(port), 'cluster', 'info']);
        return stdout.includes('cluster_state:ok');
      });
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return { urls: ports.map((port) => `redis://127.0.0.1:${port}`), stop };
}

describe('backup stores', () => {
  it('Redis Cluster (REDIS_MODE=cluster, three nodes): a restart with the upstream down serves the saved payload', async () => {
    const cluster = await startCluster();
    const client = new Cluster(
      cluster.urls.map((url) => ({ host: '127.0.0.1', port: Number(new URL(url).port) })),
    );
    try {
      const prefix = `flags-proxy-test-${randomUUID()}:`;
      const key = `${prefix}flags-proxy-backup-flags-proxy`;
      await restartWithUpstreamDown(
        { redisMode: 'cluster', redisUrl: cluster.urls.join(','), redisKeyPrefix: prefix },
        async () => (await client.exists(key)) === 1,
      );
      // The key lives on the shard its hash slot names, reached through any node.
      assert.ok((await client.get(key)) !== null);
    } finally {
      client.disconnect();
      await cluster.stop();
    }
  });

  describe('S3, on a local S3-compatible server', () => {
    // s3rver (npm) keeps objects in a directory and speaks S3's REST API, path-style; it checks
    // no signature or credential, so these tests show the objects written and read, not AWS's
    // access control. It takes no object name starting with `/` (Edge's own names), so Edge's
    // objects are read here under their names without it, the name the proxy tries second.
    const bucket = 'flags-backups';
    let server: S3rver;
    let dir: string;
    const saved = new Map<string, string | undefined>();
    let s3: S3Client;
    before(async () => {
      dir = await mkdtemp(join(tmpdir(), 'flags-proxy-s3rver-'));
      server = new S3rver({
        address: '127.0.0.1',
        port: 0,
        directory: dir,
        silent: true,
        configureBuckets: [{ name: bucket, configs: [] }],
      });
      const { port } = await server.run();
      // The standard AWS settings, as a deployment sets them.
      const aws = {
        AWS_ENDPOINT_URL_S3: `http://127.0.0.1:${port}`,
        AWS_REGION: 'eu-north-1',
        AWS_ACCESS_KEY_ID: 'S3RVER',
        AWS_SECRET_ACCESS_KEY: 'S3RVER',
      };
      for (const [name, value] of Object.entries(aws)) {
        saved.set(name, process.env[name]);
        process.env[name] = value;
      }
      s3 = new S3Client({ forcePathStyle: true });
    });
    after(async () => {
      s3.destroy();
      await server.close();
      await rm(dir, { recursive: true, force: true });
      for (const [name, value] of saved) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    });

    const exists = async (key: string, inBucket = bucket) => {
      try {
        await s3.send(new GetObjectCommand({ Bucket: inBucket, Key: key }));
        return true;
      } catch {
        return false;
      }
    };

    it('S3_BUCKET_NAME: a restart with the upstream down serves the saved payload', async () => {
      const app = `s3-${randomUUID()}`;
      await restartWithUpstreamDown(
        { s3BucketName: bucket, s3ForcePathStyle: true, flagsAppName: app },
        () => exists(`flags-proxy-backup-${app}.json`),
      );
    });

    it('reads Edge’s unleash-features.json and unleash-tokens.json objects', async () => {
      const edgeBucket = `edge-${randomUUID()}`;
      const { CreateBucketCommand } = await import('@aws-sdk/client-s3');
      await s3.send(new CreateBucketCommand({ Bucket: edgeBucket }));
      const fixtures = new URL('./fixtures/edge-backup/', import.meta.url);
      for (const [file, name] of [
        ['unleash_features.json', 'unleash-features.json'],
        ['unleash_tokens.json', 'unleash-tokens.json'],
      ] as const) {
        const body = await readFile(new URL(file, fixtures), 'utf8');
        await s3.send(new PutObjectCommand({ Bucket: edgeBucket, Key: name, Body: body }));
      }
      const proxy = await startProxy(smallPayload, {
        flagsApiToken: '*:development.startup-token-of-this-proxy-0123456789abcdef',
        s3BucketName: edgeBucket,
        s3ForcePathStyle: true,
        flagsUrl: await deadUpstreamUrl(),
      });
      try {
        await proxy.proxy.poller.ready;
        const answer = await call(proxy, 'GET', '/proxy', { headers: withKey() });
        assert.deepEqual(
          answer.json().toggles.map((toggle: { name: string }) => toggle.name),
          ['edge-saved-on', 'edge-saved-segment', 'edge-other-project'],
        );
        assert.ok(proxy.log.text().includes('serving the Unleash Edge backup payload'));
        // What it served is saved as its own backup beside Edge's.
        await waitFor(() => exists('flags-proxy-backup-flags-proxy-development.json', edgeBucket));
      } finally {
        await proxy.close();
      }
    });
  });
});
