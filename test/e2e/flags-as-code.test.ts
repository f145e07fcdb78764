import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { run } from '@flags/cli';
import { buildApp, type Database, loadConfig, openDatabase } from '@flags/server';
import type { FastifyInstance } from 'fastify';
import { parse } from 'yaml';
import { adminRequest } from '../../scripts/demo/seed.js';
import {
  type FrontendToggle,
  frontendQuery,
  type GeneratedContext,
  generateContexts,
  generateFlagSet,
} from '../helpers/differential.js';
import {
  startUnleashServer,
  UNLEASH_ENVIRONMENTS,
  UNLEASH_VERSION,
  type UnleashServer,
  unleashServerSkip,
} from '../helpers/unleash-server.js';

/**
 * The `flags` command end to end, over HTTP only: pull, plan, apply and drift against
 * flags-server, and against the real unleash-server (pull from it, apply to flags-server and the
 * two serve the same answers; apply to it).
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const ADMIN_TOKEN = '*:*.flags-as-code-admin-secret-0123456789abcdef';
const FRONTEND_TOKENS = {
  development: '*:development.flags-as-code-frontend-dev-0123456789',
  production: '*:production.flags-as-code-frontend-prod-012345678',
} as const;
const SEED = 4909;
const flagSet = generateFlagSet(SEED, 60);

interface FlagsServer {
  readonly url: string;
  close(): Promise<void>;
}

async function startFlagsServer(): Promise<FlagsServer> {
  const db: Database = await openDatabase({ databaseUrl: undefined, dataDir: undefined });
  const config = loadConfig(
    {},
    {
      adminTokens: [ADMIN_TOKEN],
      frontendTokens: Object.values(FRONTEND_TOKENS),
      logLevel: 'silent',
      dataDir: undefined,
    },
  );
  const app: FastifyInstance = await buildApp(config, { db, logger: false });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  return {
    url,
    async close() {
      await app.close();
      await db.close();
    },
  };
}

/** Runs `flags` in this process; answers its exit status and what it printed. */
async function flags(args: string[], env: Record<string, string> = {}) {
  let stdout = '';
  let stderr = '';
  const code = await run(args, {
    env,
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
  });
  return { code, stdout, stderr };
}

const admin = (server: { url: string }, method: string, path: string, body?: unknown) =>
  adminRequest(server.url, ADMIN_TOKEN, method, path, body);

async function frontend(
  url: string,
  token: string,
  context: GeneratedContext,
): Promise<FrontendToggle[]> {
  const response = await fetch(`${url}/api/frontend?${frontendQuery(context)}`, {
    headers: { authorization: token },
  });
  assert.equal(response.status, 200);
  const { toggles } = (await response.json()) as { toggles: FrontendToggle[] };
  return toggles.sort((a, b) => a.name.localeCompare(b.name));
}

/** Seeds a server with the flag set: segments, then one import per environment. */
async function seed(url: string, token: string): Promise<void> {
  for (const segment of flagSet.segments) {
    await adminRequest(url, token, 'POST', '/api/admin/segments', segment);
  }
  for (const environment of UNLEASH_ENVIRONMENTS) {
    await adminRequest(url, token, 'POST', '/api/admin/features-batch/import', {
      project: 'default',
      environment,
      data: flagSet.documents[environment],
    });
  }
}

describe('flags as code against flags-server', () => {
  let source: FlagsServer;
  let target: FlagsServer;
  const work = mkdtempSync(join(tmpdir(), 'flags-as-code-'));
  const dir = join(work, 'flags');
  const on = (server: FlagsServer) => ['--url', server.url, '--token', ADMIN_TOKEN, '--dir', dir];

  before(async () => {
    source = await startFlagsServer();
    target = await startFlagsServer();
    await seed(source.url, ADMIN_TOKEN);
  });
  after(async () => {
    await source?.close();
    await target?.close();
    rmSync(work, { recursive: true, force: true });
  });

  it('pull writes one file per flag and the definitions; apply copies them to an empty server; plan then finds nothing', async () => {
    const pulled = await flags(['pull', ...on(source)]);
    assert.equal(pulled.code, 0, pulled.stderr);
    const file = parse(
      readFileSync(
        join(dir, 'flags/default', `${flagSet.documents.development.features[0]!.name}.yaml`),
        'utf8',
      ),
    ) as { name: string; environments: Record<string, unknown> };
    assert.equal(file.name, flagSet.documents.development.features[0]!.name);
    assert.deepEqual(Object.keys(file.environments).sort(), ['development', 'production']);

    const planned = await flags(['plan', '--detailed-exitcode', '--output', 'json', ...on(target)]);
    assert.equal(planned.code, 2, planned.stderr);
    const { actions } = JSON.parse(planned.stdout) as {
      actions: { kind: string; action: string }[];
    };
    assert.equal(
      actions.filter((action) => action.kind === 'flag' && action.action === 'create').length,
      flagSet.documents.development.features.length,
    );
    assert.deepEqual(
      actions.filter((action) => action.kind === 'segment').length,
      flagSet.segments.length,
    );

    const applied = await flags(['apply', ...on(target)]);
    assert.equal(applied.code, 0, applied.stdout + applied.stderr);

    const again = await flags(['plan', '--detailed-exitcode', ...on(target)]);
    assert.equal(again.code, 0, again.stdout + again.stderr);
    assert.match(again.stdout, /No changes/);

    const contexts = generateContexts(SEED, 100);
    for (const environment of UNLEASH_ENVIRONMENTS) {
      for (const context of contexts) {
        assert.deepEqual(
          await frontend(target.url, FRONTEND_TOKENS[environment], context),
          await frontend(source.url, FRONTEND_TOKENS[environment], context),
        );
      }
    }
  });
});
