import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { apiTokenSchema, apiTokensSchema } from '@flags/schemas';
import { Ajv } from 'ajv';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import type { Database } from '../../src/db/database.js';
import {
  ADMIN_TOKEN,
  admin,
  backends,
  DEV_TOKEN,
  dump,
  PROD_TOKEN,
  testConfig,
} from '../helpers.js';

const ajv = new Ajv({ strict: false, validateFormats: false });
const isToken = ajv.compile(apiTokenSchema);
const isTokenList = ajv.compile(apiTokensSchema);

for (const backend of backends) {
  describe(`API tokens on ${backend.name}`, () => {
    let cleanup: () => Promise<void>;
    let db: Database;
    let app: FastifyInstance;
    let now = new Date('2026-01-01T00:00:00Z');

    before(async () => {
      const opened = await backend.open();
      cleanup = opened.cleanup;
      db = opened.db;
      app = await buildApp(testConfig(), { db, logger: false, now: () => now });
    });
    after(async () => {
      await app.close();
      await cleanup();
    });

    const create = (payload: object) =>
      app.inject({ method: 'POST', url: '/api/admin/api-tokens', headers: admin, payload });

    it('answers 401 without a token or with an unknown one, 403 for the wrong kind', async () => {
      const cases: [string, string, Record<string, string>, number][] = [
        ['GET', '/api/client/features', {}, 401],
        ['GET', '/api/client/features', { authorization: '*:development.unknown' }, 401],
        ['GET', '/api/client/features', { authorization: admin.authorization }, 403],
        ['GET', '/api/admin/api-tokens', {}, 401],
        ['GET', '/api/admin/api-tokens', { authorization: 'nope' }, 401],
        ['GET', '/api/admin/api-tokens', { authorization: DEV_TOKEN }, 403],
        ['GET', '/api/client/features', { authorization: `Bearer ${DEV_TOKEN}` }, 200],
        ['GET', '/api/admin/api-tokens', { authorization: `Bearer ${admin.authorization}` }, 200],
      ];
      for (const [method, url, headers, status] of cases) {
        const response = await app.inject({ method: method as 'GET', url, headers });
        assert.equal(response.statusCode, status, `${url} ${JSON.stringify(headers)}`);
        if (status >= 400) {
          const body = response.json();
          assert.deepEqual(Object.keys(body), ['code', 'name', 'message', 'details']);
          assert.equal(body.details[0].message, body.message);
        }
      }
    });

    it('creates, lists and deletes tokens; a deleted token stops working', async () => {
      const created = await create({ tokenName: 'ci', type: 'client', environment: 'production' });
      assert.equal(created.statusCode, 201);
      const token = created.json();
      assert.match(token.secret, /^\*:production\.[0-9a-f]{56}$/);
      assert.equal(token.environment, 'production');
      assert.deepEqual(token.projects, ['*']);
      const listed = await app.inject({ url: '/api/admin/api-tokens', headers: admin });
      const secrets = listed.json().tokens.map((t: { secret: string }) => t.secret);
      assert.ok(secrets.includes(`*:production.${token.secret.slice(13, 17)}…`));
      assert.ok(secrets.includes('*:development.test…'));
      const use = () =>
        app.inject({ url: '/api/client/features', headers: { authorization: token.secret } });
      assert.equal((await use()).statusCode, 200);
      const deleted = await app.inject({
        method: 'DELETE',
        url: `/api/admin/api-tokens/${encodeURIComponent(token.secret)}`,
        headers: admin,
      });
      assert.equal(deleted.statusCode, 200);
      assert.equal((await use()).statusCode, 401);
      const again = await app.inject({
        method: 'DELETE',
        url: `/api/admin/api-tokens/${encodeURIComponent(token.secret)}`,
        headers: admin,
      });
      assert.equal(again.statusCode, 200);
    });

    it('takes a DELETE that says JSON and sends no body, as admin UIs and scripts send it', async () => {
      const created = await create({ tokenName: 'ui', type: 'client', environment: 'production' });
      const secret: string = created.json().secret;
      const url = `/api/admin/api-tokens/${encodeURIComponent(secret)}`;
      const json = { ...admin, 'content-type': 'application/json' };
      const deleted = await app.inject({ method: 'DELETE', url, headers: json });
      assert.equal(deleted.statusCode, 200, deleted.body);
      const use = await app.inject({
        url: '/api/client/features',
        headers: { authorization: secret },
      });
      assert.equal(use.statusCode, 401);
      // A body that is there is still read as JSON: malformed is a 400 and deletes nothing.
      const other = await create({ tokenName: 'kept', type: 'client', environment: 'production' });
      const otherUrl = `/api/admin/api-tokens/${encodeURIComponent(other.json().secret)}`;
      const bad = await app.inject({
        method: 'DELETE',
        url: otherUrl,
        headers: json,
        payload: '{',
      });
      assert.equal(bad.statusCode, 400);
      const kept = await app.inject({
        url: '/api/client/features',
        headers: { authorization: other.json().secret },
      });
      assert.equal(kept.statusCode, 200);
      // An empty body where one is required stays a 400.
      const empty = await app.inject({
        method: 'POST',
        url: '/api/admin/api-tokens',
        headers: json,
        payload: '',
      });
      assert.equal(empty.statusCode, 400);
    });

    it('shows a secret once: the create answer carries it, lists show the masked form', async () => {
      const created = await create({ tokenName: 'once', type: 'admin' });
      assert.equal(created.statusCode, 201);
      const token = created.json();
      assert.ok(isToken(token), JSON.stringify(isToken.errors));
      assert.match(token.secret, /^\*:\*\.[0-9a-f]{56}$/);
      const listed = await app.inject({ url: '/api/admin/api-tokens', headers: admin });
      assert.equal(listed.statusCode, 200);
      assert.ok(isTokenList(listed.json()), JSON.stringify(isTokenList.errors));
      const entry = listed.json().tokens.find((t: { id: number }) => t.id === token.id);
      assert.deepEqual(entry, { ...token, secret: `*:*.${token.secret.slice(4, 8)}…` });
      // No secret is ever listed whole: neither created ones nor configured ones (admin included).
      for (const secret of [token.secret, ADMIN_TOKEN, DEV_TOKEN, PROD_TOKEN]) {
        assert.ok(!listed.body.includes(secret), `${secret} is not in the list`);
      }
      assert.ok(listed.body.includes('"secret":"test…"'), listed.body);
      // The id names the token when the secret is not at hand.
      const deleted = await app.inject({
        method: 'DELETE',
        url: `/api/admin/api-tokens/${token.id}`,
        headers: admin,
      });
      assert.equal(deleted.statusCode, 200);
      const use = await app.inject({
        url: '/api/admin/projects',
        headers: { authorization: token.secret },
      });
      assert.equal(use.statusCode, 401);
    });

    it('stores the SHA-256 of each secret, never the secret', async () => {
      const created = await create({
        tokenName: 'hashed',
        type: 'client',
        environment: 'development',
      });
      const { secret } = created.json();
      const state = JSON.stringify(await dump(db));
      for (const plain of [secret, ADMIN_TOKEN, DEV_TOKEN, PROD_TOKEN]) {
        assert.ok(
          !state.includes(plain.slice(plain.indexOf('.') + 1)),
          'no plaintext secret stored',
        );
      }
      const [row] = await db.query<{ secret_hash: string }>(
        'SELECT secret_hash FROM api_tokens WHERE token_name = $1',
        ['hashed'],
      );
      assert.equal(row!.secret_hash, createHash('sha256').update(secret).digest('hex'));
      const use = await app.inject({
        url: '/api/client/features',
        headers: { authorization: secret },
      });
      assert.equal(use.statusCode, 200);
    });

    it('creates admin tokens that work on the admin API only', async () => {
      const created = await create({ tokenName: 'ops', type: 'admin' });
      assert.equal(created.statusCode, 201);
      const secret = created.json().secret;
      assert.match(secret, /^\*:\*\.[0-9a-f]{56}$/);
      assert.equal(
        (await app.inject({ url: '/api/admin/projects', headers: { authorization: secret } }))
          .statusCode,
        200,
      );
      assert.equal(
        (await app.inject({ url: '/api/client/features', headers: { authorization: secret } }))
          .statusCode,
        403,
      );
    });

    it('rejects bad token requests with 400', async () => {
      const cases = [
        { tokenName: 'x', type: 'client', environment: 'staging' },
        { tokenName: 'x', type: 'client', environment: '*' },
        { tokenName: 'x', type: 'client', environment: 'development', projects: ['ghost'] },
        { tokenName: 'x', type: 'admin', environment: 'development' },
        { tokenName: 'x', type: 'superuser' },
        { type: 'client' },
      ];
      for (const payload of cases) {
        const response = await create(payload);
        assert.equal(response.statusCode, 400, JSON.stringify(payload));
        assert.equal(response.json().name, 'BadDataError');
      }
    });

    it('treats an expired token as unknown', async () => {
      const created = await create({
        tokenName: 'short',
        type: 'client',
        environment: 'development',
        expiresAt: '2026-01-02T00:00:00Z',
      });
      const secret = created.json().secret;
      const use = () =>
        app.inject({ url: '/api/client/features', headers: { authorization: secret } });
      assert.equal((await use()).statusCode, 200);
      now = new Date('2026-01-03T00:00:00Z');
      assert.equal((await use()).statusCode, 401);
    });

    it('answers a non-JSON body with a JSON 415', async () => {
      const response = await app.inject({
        method: 'POST',
        url: '/api/admin/features-batch/import',
        headers: { ...admin, 'content-type': 'text/plain' },
        payload: 'project=default',
      });
      assert.equal(response.statusCode, 415);
      assert.equal(response.json().name, 'ContentTypeError');
    });

    it('answers unknown paths with a JSON 404', async () => {
      const response = await app.inject({ url: '/api/nothing-here' });
      assert.equal(response.statusCode, 404);
      assert.equal(response.json().name, 'NotFoundError');
    });
  });
}
