import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/load.js';
import { type Database, openPglite } from '../../src/db/database.js';
import { type Backend, backends, testConfig } from '../helpers.js';

/** One database that outlives server starts: a PGlite data directory, or a PostgreSQL schema. */
async function persistentDatabase(backend: Backend) {
  if (backend.name === 'pglite') {
    const dir = mkdtempSync(join(tmpdir(), 'flags-configured-'));
    return {
      open: () => openPglite(dir),
      close: (db: Database) => db.close(),
      cleanup: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  const { db, cleanup } = await backend.open();
  return { open: async () => db, close: async () => {}, cleanup };
}

const ADMIN_KEPT = `*:*.kept-admin-${'k'.repeat(24)}`;
const ADMIN_REMOVED = `removed-admin-${'r'.repeat(24)}`;
const CLIENT_KEPT = `*:development.kept-client-${'k'.repeat(24)}`;
const CLIENT_REMOVED = `default:production.removed-client-${'r'.repeat(24)}`;
const FRONTEND = `default:development.frontend-${'f'.repeat(24)}`;

interface LogLine {
  level: number;
  msg: string;
  token?: string;
  variable?: string;
}

/** A pino logger whose lines land in `lines`. */
function capturingLogger(level: string) {
  const lines: LogLine[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, logger: pino({ level }, sink) };
}

for (const backend of backends) {
  describe(`configured tokens on ${backend.name}`, () => {
    it('are deleted at start once no longer configured; tokens created through the API stay', async () => {
      const storage = await persistentDatabase(backend);
      try {
        let db = await storage.open();
        let app = await buildApp(
          testConfig({
            adminTokens: [ADMIN_KEPT, ADMIN_REMOVED],
            clientTokens: [CLIENT_KEPT, CLIENT_REMOVED],
          }),
          { db, logger: false },
        );
        const status = async (url: string, authorization: string) =>
          (await app.inject({ url, headers: { authorization } })).statusCode;
        const created: string[] = [];
        try {
          for (const payload of [
            { tokenName: 'api-admin', type: 'admin' },
            { tokenName: 'api-client', type: 'client', environment: 'production' },
          ]) {
            const response = await app.inject({
              method: 'POST',
              url: '/api/admin/api-tokens',
              headers: { authorization: ADMIN_REMOVED },
              payload,
            });
            assert.equal(response.statusCode, 201);
            created.push(response.json().secret);
          }
          assert.equal(await status('/api/admin/projects', ADMIN_REMOVED), 200);
          assert.equal(await status('/api/client/features', CLIENT_REMOVED), 200);
        } finally {
          await app.close();
          await storage.close(db);
        }

        db = await storage.open();
        app = await buildApp(
          testConfig({ adminTokens: [ADMIN_KEPT], clientTokens: [CLIENT_KEPT] }),
          {
            db,
            logger: false,
          },
        );
        try {
          assert.equal(await status('/api/admin/projects', ADMIN_REMOVED), 401);
          assert.equal(await status('/api/client/features', CLIENT_REMOVED), 401);
          assert.equal(await status('/api/admin/projects', ADMIN_KEPT), 200);
          assert.equal(await status('/api/client/features', CLIENT_KEPT), 200);
          assert.equal(await status('/api/admin/projects', created[0]!), 200);
          assert.equal(await status('/api/client/features', created[1]!), 200);
          const listed = await app.inject({
            url: '/api/admin/api-tokens',
            headers: { authorization: ADMIN_KEPT },
          });
          assert.deepEqual(
            listed
              .json()
              .tokens.map((token: { tokenName: string }) => token.tokenName)
              .sort(),
            ['admin (configured)', 'api-admin', 'api-client', 'client (configured)'],
          );
        } finally {
          await app.close();
          await storage.close(db);
        }
      } finally {
        await storage.cleanup();
      }
    });

    it('a replica started without a token variable deletes none of that variable’s tokens', async () => {
      const storage = await persistentDatabase(backend);
      try {
        let db = await storage.open();
        let app = await buildApp(
          testConfig({
            adminTokens: [ADMIN_KEPT],
            clientTokens: [CLIENT_KEPT, CLIENT_REMOVED],
            frontendTokens: [FRONTEND],
          }),
          { db, logger: false },
        );
        await app.close();
        await storage.close(db);

        // A second server on the same database, given FLAGS_ADMIN_TOKENS only (as the environment
        // gives it: FLAGS_CLIENT_TOKENS unset, FLAGS_FRONTEND_TOKENS empty).
        const config = loadConfig(
          { FLAGS_ADMIN_TOKENS: ADMIN_KEPT, FLAGS_FRONTEND_TOKENS: '' },
          { logLevel: 'silent', dataDir: undefined },
        );
        db = await storage.open();
        const { lines, logger } = capturingLogger('info');
        app = await buildApp(config, { db, logger });
        try {
          const status = async (url: string, authorization: string) =>
            (await app.inject({ url, headers: { authorization } })).statusCode;
          assert.equal(await status('/api/admin/projects', ADMIN_KEPT), 200);
          assert.equal(await status('/api/client/features', CLIENT_KEPT), 200);
          assert.equal(await status('/api/client/features', CLIENT_REMOVED), 200);
          assert.equal(await status('/api/frontend', FRONTEND), 200);
          assert.deepEqual(
            lines.filter((line) => /deleted/.test(line.msg)),
            [],
            'no token deleted',
          );
        } finally {
          await app.close();
          await storage.close(db);
        }
      } finally {
        await storage.cleanup();
      }
    });

    it('a variable that is set deletes only its own kind’s tokens it no longer lists, with a warning naming it', async () => {
      const storage = await persistentDatabase(backend);
      try {
        let db = await storage.open();
        let app = await buildApp(
          testConfig({
            adminTokens: [ADMIN_KEPT, ADMIN_REMOVED],
            clientTokens: [CLIENT_KEPT, CLIENT_REMOVED],
            frontendTokens: [FRONTEND],
          }),
          { db, logger: false },
        );
        await app.close();
        await storage.close(db);

        db = await storage.open();
        const { lines, logger } = capturingLogger('info');
        app = await buildApp(testConfig({ adminTokens: undefined, clientTokens: [CLIENT_KEPT] }), {
          db,
          logger,
        });
        try {
          const status = async (url: string, authorization: string) =>
            (await app.inject({ url, headers: { authorization } })).statusCode;
          assert.equal(await status('/api/client/features', CLIENT_REMOVED), 401);
          assert.equal(await status('/api/client/features', CLIENT_KEPT), 200);
          assert.equal(await status('/api/admin/projects', ADMIN_REMOVED), 200);
          assert.equal(await status('/api/frontend', FRONTEND), 200);
          const deletions = lines.filter((line) => /deleted/.test(line.msg));
          assert.deepEqual(
            deletions.map(({ level, token, variable }) => ({ level, token, variable })),
            [{ level: 40, token: 'default:production.remo…', variable: 'FLAGS_CLIENT_TOKENS' }],
          );
          assert.match(deletions[0]!.msg, /FLAGS_CLIENT_TOKENS/);
        } finally {
          await app.close();
          await storage.close(db);
        }
      } finally {
        await storage.cleanup();
      }
    });
  });
}

describe('configured tokens at start', () => {
  it('warn (without the secret) for each token whose secret part is shorter than 32 characters', async () => {
    const lines: { level: number; msg: string; token?: string }[] = [];
    let raw = '';
    const sink = new Writable({
      write(chunk, _encoding, done) {
        raw += chunk;
        for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    });
    const short = ['short-admin-token', '*:development.short-client-secret'];
    const long = [`*:*.${'a'.repeat(32)}`, `*:production.${'b'.repeat(32)}`];
    const { db, cleanup } = await backends[0]!.open();
    const app = await buildApp(
      testConfig({
        adminTokens: [short[0]!, long[0]!],
        clientTokens: [short[1]!, long[1]!],
        logLevel: 'warn',
      }),
      { db, logger: pino({ level: 'warn' }, sink) },
    );
    try {
      const warnings = lines.filter((line) => line.level === 40);
      assert.deepEqual(warnings.map((line) => line.token).sort(), ['*:development.shor…', 'shor…']);
      for (const warning of warnings) assert.match(warning.msg, /shorter than 32 characters/);
      for (const secret of [...short, ...long]) {
        assert.ok(!raw.includes(secret.slice(secret.indexOf('.') + 1)), 'no secret in the log');
      }
    } finally {
      await app.close();
      await cleanup();
    }
  });

  it('say nothing about short secrets the caller declares public (the demo), and warn about the others', async () => {
    const { lines, logger } = capturingLogger('warn');
    const { db, cleanup } = await backends[0]!.open();
    const app = await buildApp(
      testConfig({ adminTokens: ['short-public'], clientTokens: ['*:development.short-private'] }),
      { db, logger, publicSecrets: new Set(['short-public']) },
    );
    try {
      assert.deepEqual(
        lines.filter((line) => line.level === 40).map((line) => line.token),
        ['*:development.shor…'],
      );
    } finally {
      await app.close();
      await cleanup();
    }
  });
});
