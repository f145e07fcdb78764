import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { ProxyOptions } from '@flags/proxy';
import { Redis } from 'ioredis';
import { smallPayload } from './fixtures/small.js';
import { changed, deadUpstreamUrl } from './helpers/backup.js';
import { type Answer, call, type Running, startProxy, waitFor, withKey } from './helpers/proxy.js';

/**
 * A switch-over from Unleash Edge while the upstream is down: Edge's backup (written by Edge in
 * its own format, here by hand from that format into `fixtures/edge-backup`) is what the proxy
 * serves at start. Edge's documents: `[[environment, features], …]` and its validated tokens.
 */
const FIXTURES = new URL('./fixtures/edge-backup/', import.meta.url);
const STARTUP_TOKEN = '*:development.startup-token-of-this-proxy-0123456789abcdef';
/** In the fixture's tokens: a frontend token of `default` in development, Validated by Edge. */
const EDGE_FRONTEND =
  'default:development.9a8b7c6d5e4f30211a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d';
/** In the fixture's tokens with status `Invalid`: never taken. */
const EDGE_INVALID = 'default:development.ffffffffffffffffffffffffffffffffffffffffffffffffffffffff';
/** In the fixture's tokens: a backend (`client`) token of production. */
const EDGE_PRODUCTION = '*:production.0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a';

const toggles = (answer: Answer): string[] =>
  answer.json().toggles.map((toggle: { name: string }) => toggle.name);

async function fixture(name: string): Promise<string> {
  return readFile(new URL(name, FIXTURES), 'utf8');
}

/** A proxy whose upstream is down from the start, with the given backup store. */
async function startWithUpstreamDown(options: ProxyOptions): Promise<Running> {
  const run = await startProxy(smallPayload, {
    flagsApiToken: STARTUP_TOKEN,
    ...options,
    flagsUrl: await deadUpstreamUrl(),
  });
  await run.proxy.poller.ready;
  return run;
}

/** What a proxy started from Edge's backup must serve, with the upstream down. */
async function assertServesEdgeBackup(run: Running): Promise<void> {
  assert.ok(run.log.text().includes('serving the Unleash Edge backup payload'));
  // The plain client key reads the startup token's environment: Edge's development payload.
  assert.deepEqual(toggles(await call(run, 'GET', '/proxy', { headers: withKey() })), [
    'edge-saved-on',
    'edge-saved-segment',
    'edge-other-project',
  ]);
  // A frontend token Edge had validated is known without the upstream, with its projects.
  const frontend = await call(run, 'GET', '/api/frontend', {
    headers: { authorization: EDGE_FRONTEND },
  });
  assert.equal(frontend.status, 200);
  const segment = frontend
    .json()
    .toggles.find((toggle: { name: string }) => toggle.name === 'edge-saved-segment');
  assert.deepEqual(segment?.variant?.payload, { type: 'string', value: 'saved by edge' });
  assert.deepEqual(
    frontend.json().toggles.map((toggle: { name: string }) => toggle.name),
    ['edge-saved-on', 'edge-saved-segment'],
  );
  // A token Edge had marked invalid is not taken (the upstream is down, so it stays unknown).
  const invalid = await call(run, 'GET', '/api/frontend', {
    headers: { authorization: EDGE_INVALID },
  });
  assert.notEqual(invalid.status, 200);
  // Edge's production backend token brings in production with Edge's payload for it.
  const production = await call(run, 'GET', '/api/client/features', {
    headers: { authorization: EDGE_PRODUCTION },
  });
  assert.equal(production.status, 200);
  assert.deepEqual(
    production.json().features.map((feature: { name: string }) => feature.name),
    ['edge-production-only'],
  );
}

describe('Unleash Edge’s backups, read at start', () => {
  const dirs: string[] = [];
  after(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  async function edgeFolder(): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), 'flags-proxy-edge-backup-'));
    dirs.push(dir);
    await cp(FIXTURES, dir, { recursive: true });
    return dir;
  }

  it('files: Edge’s unleash_features.json and unleash_tokens.json in BACKUP_FOLDER', async () => {
    const run = await startWithUpstreamDown({ backupDir: await edgeFolder() });
    try {
      await assertServesEdgeBackup(run);
    } finally {
      await run.close();
    }
  });

  it('files: a backup of our own wins over Edge’s', async () => {
    const dir = await edgeFolder();
    await writeFile(
      join(dir, 'flags-proxy-backup-flags-proxy-development.json'),
      JSON.stringify(changed),
    );
    const run = await startWithUpstreamDown({ backupDir: dir });
    try {
      assert.deepEqual(toggles(await call(run, 'GET', '/proxy', { headers: withKey() })), [
        'only-upstream',
      ]);
      assert.ok(run.log.text().includes('serving the backup payload'));
    } finally {
      await run.close();
    }
  });

  it('files: a malformed Edge document is logged and skipped, never fatal', async () => {
    const dir = await edgeFolder();
    await writeFile(join(dir, 'unleash_features.json'), '[["development", {"features": 7}]');
    const run = await startProxy(smallPayload, {
      flagsApiToken: STARTUP_TOKEN,
      backupDir: dir,
      flagsUrl: await deadUpstreamUrl(),
    });
    try {
      await waitFor(() => run.log.text().includes('reading Unleash Edge’s backup failed'));
      // Nothing to serve until the upstream answers: not ready, yet answering.
      assert.equal((await call(run, 'GET', '/proxy', { headers: withKey() })).status, 503);
      // Edge's tokens (a document of their own) were still read.
      assert.ok(run.log.text().includes('read Unleash Edge’s tokens'));
    } finally {
      await run.close();
    }
  });

  it('Redis: Edge’s unleash-features and unleash-tokens keys', async () => {
    const redis = new Redis('redis://127.0.0.1:6379', { lazyConnect: true });
    await redis.connect();
    // Edge's keys have no prefix: a database of their own, claimed so that no other run uses it.
    const claim = `flags-proxy-test-edge-keys-${randomUUID()}`;
    let db: number | undefined;
    for (let candidate = 15; candidate > 0 && db === undefined; candidate -= 1) {
      await redis.select(candidate);
      if ((await redis.set('flags-proxy-test-edge-keys', claim, 'EX', 600, 'NX')) === 'OK')
        db = candidate;
    }
    assert.ok(db !== undefined, 'a free Redis database for Edge’s keys');
    const prefix = `flags-proxy-test-${randomUUID()}:`;
    try {
      await redis.set('unleash-features', await fixture('unleash_features.json'));
      await redis.set('unleash-tokens', await fixture('unleash_tokens.json'));
      const run = await startWithUpstreamDown({
        redisUrl: `redis://127.0.0.1:6379/${db}`,
        redisKeyPrefix: prefix,
      });
      try {
        await assertServesEdgeBackup(run);
      } finally {
        await run.close();
      }
    } finally {
      const ours = await redis.keys(`${prefix}*`);
      await redis.del('unleash-features', 'unleash-tokens', 'flags-proxy-test-edge-keys', ...ours);
      await redis.quit();
    }
  });
});
