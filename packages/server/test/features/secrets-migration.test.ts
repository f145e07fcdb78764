import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { buildApp } from '../../src/app.js';
import { maskToken } from '../../src/config/load.js';
import type { Database } from '../../src/db/database.js';
import { migrate } from '../../src/db/migrate.js';
import { migrations } from '../../src/db/migrations/index.js';
import { backends, dump, testConfig } from '../helpers.js';

const DAY = 24 * 3_600_000;
const hex = (bytes: number) => randomBytes(bytes).toString('hex');

/** A database as version 11 left it: secrets in plaintext. */
async function atVersion11(db: Database): Promise<void> {
  await migrate(
    db,
    migrations.filter((migration) => migration.version <= 11),
  );
}

async function insertToken(
  db: Database,
  token: { secret: string; name: string; type: 'admin' | 'client'; environment: string | null },
): Promise<void> {
  await db.query(
    `INSERT INTO api_tokens (secret, token_name, type, environment, projects)
     VALUES ($1, $2, $3, $4, '["*"]')`,
    [token.secret, token.name, token.type, token.environment],
  );
}

for (const backend of backends) {
  describe(`migration 12 (hashed secrets) on ${backend.name}`, () => {
    it('converts plaintext rows: old tokens and links still work, lists are masked, no plaintext remains', async () => {
      const { db, cleanup } = await backend.open();
      const apiClient = `default:production.${hex(28)}`;
      const apiAdmin = `*:*.${hex(28)}`;
      const configuredAdmin = `*:*.configured-${hex(20)}`;
      const noLongerConfigured = `*:development.${hex(28)}`;
      const link = hex(16);
      try {
        await atVersion11(db);
        await insertToken(db, {
          secret: apiClient,
          name: 'checkout',
          type: 'client',
          environment: 'production',
        });
        await insertToken(db, { secret: apiAdmin, name: 'ops', type: 'admin', environment: null });
        await insertToken(db, {
          secret: configuredAdmin,
          name: 'admin (configured)',
          type: 'admin',
          environment: null,
        });
        // Created from FLAGS_CLIENT_TOKENS by an older version, and no longer configured.
        await insertToken(db, {
          secret: noLongerConfigured,
          name: 'client (configured)',
          type: 'client',
          environment: 'development',
        });
        const [ada] = await db.query<{ id: number }>(
          "INSERT INTO users (name, email) VALUES ('Ada', 'ada@example.com') RETURNING id",
        );
        await db.query('INSERT INTO role_user (role_id, user_id) VALUES (3, $1)', [ada!.id]);
        await db.query(
          `INSERT INTO public_signup_tokens (secret, name, expires_at, role_id)
           VALUES ($1, 'invite', $2, 3)`,
          [link, new Date(Date.now() + 10 * DAY)],
        );
        await db.query('INSERT INTO public_signup_tokens_user (secret, user_id) VALUES ($1, $2)', [
          link,
          ada!.id,
        ]);

        const app = await buildApp(
          testConfig({ adminTokens: [configuredAdmin], clientTokens: [] }),
          { db, logger: false },
        );
        try {
          const features = await app.inject({
            url: '/api/client/features',
            headers: { authorization: apiClient },
          });
          assert.equal(features.statusCode, 200, 'an API-created client token still works');
          const revoked = await app.inject({
            url: '/api/client/features',
            headers: { authorization: noLongerConfigured },
          });
          assert.equal(revoked.statusCode, 401, 'a configured token no longer configured is gone');
          const listed = await app.inject({
            url: '/api/admin/api-tokens',
            headers: { authorization: apiAdmin },
          });
          assert.equal(listed.statusCode, 200, 'an API-created admin token still works');
          assert.deepEqual(
            listed
              .json()
              .tokens.map((t: { secret: string }) => t.secret)
              .sort(),
            [apiClient, apiAdmin, configuredAdmin].map(maskToken).sort(),
          );
          const configured = await app.inject({
            url: '/api/admin/projects',
            headers: { authorization: configuredAdmin },
          });
          assert.equal(configured.statusCode, 200, 'a configured token still works');

          assert.equal((await app.inject({ url: `/invite/${link}/validate` })).statusCode, 200);
          const links = await app.inject({
            url: '/api/admin/invite-link/tokens',
            headers: { authorization: apiAdmin },
          });
          const [listedLink] = links.json().tokens;
          assert.equal(listedLink.secret, `${link.slice(0, 4)}…`);
          assert.equal(listedLink.url, null);
          assert.deepEqual(
            listedLink.users.map((user: { email: string }) => user.email),
            ['ada@example.com'],
          );
          const signup = await app.inject({
            method: 'POST',
            url: `/invite/${link}/signup`,
            payload: { name: 'Bo', email: 'bo@example.com' },
          });
          assert.equal(signup.statusCode, 202, signup.body);
          const byId = await app.inject({
            url: `/api/admin/invite-link/tokens/${listedLink.id}`,
            headers: { authorization: apiAdmin },
          });
          assert.deepEqual(
            byId.json().users.map((user: { email: string }) => user.email),
            ['ada@example.com', 'bo@example.com'],
          );
        } finally {
          await app.close();
        }

        const state = JSON.stringify(await dump(db));
        for (const secret of [apiClient, apiAdmin, configuredAdmin, noLongerConfigured, link]) {
          const part = secret.slice(secret.indexOf('.') + 1);
          assert.ok(!state.includes(part), `no table holds ${maskToken(secret)} in plaintext`);
        }
      } finally {
        await cleanup();
      }
    });
  });
}
