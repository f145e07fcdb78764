import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { adminRequest } from '../../scripts/demo/seed.js';
import { freePort, type SpawnedEntry, spawnEntry, waitUntilHealthy } from '../helpers/processes.js';

// Issue #40, as it was shown: flags-server and flags-proxy as real processes, a flood of
// 600-character made-up Unleash-format tokens against the proxy, and valid tokens created on the
// server meanwhile, each used for the first time through the proxy. flags-server answered 400 to
// every `/edge/validate` batch holding one of the long tokens, and the proxy then answered the
// valid tokens of that batch 401: 10 of 10 were refused on first use.

const SERVER_MAIN = fileURLToPath(new URL('../../packages/server/src/main.ts', import.meta.url));
const PROXY_MAIN = fileURLToPath(new URL('../../packages/proxy/src/main.ts', import.meta.url));
const ADMIN = `*:*.${randomBytes(16).toString('hex')}`;
const CLIENT = `*:development.${randomBytes(28).toString('hex')}`;
const VALID_TOKENS = 10;
/** Concurrent requests of the flood (each sends its next as soon as it has an answer). */
const FLOOD_CONCURRENCY = 20;

/** A made-up token in Unleash's format, 600 characters long. */
function madeUpToken(): string {
  const prefix = '*:development.';
  return (
    prefix +
    randomBytes(300)
      .toString('hex')
      .slice(0, 600 - prefix.length)
  );
}

describe('a flood of 600-character made-up tokens against flags-proxy in front of flags-server', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'flags-token-flood-'));
  let server: SpawnedEntry;
  let proxy: SpawnedEntry;
  let serverUrl: string;
  let proxyUrl: string;

  before(async () => {
    const serverPort = await freePort();
    server = spawnEntry(SERVER_MAIN, {
      SERVER_PORT: String(serverPort),
      SERVER_HOST: '127.0.0.1',
      FLAGS_ADMIN_TOKENS: ADMIN,
      FLAGS_CLIENT_TOKENS: CLIENT,
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
    });
    serverUrl = `http://127.0.0.1:${serverPort}`;
    await waitUntilHealthy(`${serverUrl}/health`, server.child, {
      timeoutMs: 60_000,
      output: server.output,
    });
    const proxyPort = await freePort();
    // Unleash Edge's variables: the upstream's root and a client token.
    proxy = spawnEntry(PROXY_MAIN, {
      UPSTREAM_URL: serverUrl,
      TOKENS: CLIENT,
      PORT: String(proxyPort),
    });
    proxyUrl = `http://127.0.0.1:${proxyPort}`;
    await waitUntilHealthy(`${proxyUrl}/proxy/health`, proxy.child, { output: proxy.output });
  });

  after(async () => {
    for (const entry of [proxy, server]) {
      if (entry === undefined || entry.child.exitCode !== null) continue;
      entry.child.kill('SIGTERM');
      await entry.exited;
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('lets every freshly created valid token through on its first use', async () => {
    const frontend = async (token: string): Promise<number> => {
      const response = await fetch(`${proxyUrl}/api/frontend`, {
        headers: { authorization: token },
      });
      await response.arrayBuffer();
      return response.status;
    };
    let flooding = true;
    const floodStatuses = new Map<number, number>();
    const flood = Array.from({ length: FLOOD_CONCURRENCY }, async () => {
      while (flooding) {
        const status = await frontend(madeUpToken());
        floodStatuses.set(status, (floodStatuses.get(status) ?? 0) + 1);
      }
    });
    const firstUse: number[] = [];
    try {
      // The flood is under way before the first valid token is created.
      await new Promise((resolve) => setTimeout(resolve, 500));
      for (let i = 0; i < VALID_TOKENS; i++) {
        const created = (await adminRequest(serverUrl, ADMIN, 'POST', '/api/admin/api-tokens', {
          tokenName: `flood-victim-${i}`,
          type: 'frontend',
          environment: 'development',
          projects: ['*'],
        })) as { secret: string };
        firstUse.push(await frontend(created.secret));
      }
    } finally {
      flooding = false;
      await Promise.all(flood);
    }
    const floodAnswers = [...floodStatuses.values()].reduce((sum, count) => sum + count, 0);
    console.log(
      `first uses of ${VALID_TOKENS} valid tokens: ${JSON.stringify(firstUse)}; ` +
        `flood: ${floodAnswers} requests, answers ${JSON.stringify(Object.fromEntries(floodStatuses))}`,
    );
    assert.ok(floodAnswers >= VALID_TOKENS * FLOOD_CONCURRENCY, 'the flood ran throughout');
    // Every made-up token is refused, none breaks the proxy.
    for (const status of floodStatuses.keys())
      assert.ok(status === 401 || status === 403, `${status}`);
    assert.deepEqual(
      firstUse,
      firstUse.map(() => 200),
    );
  });
});
