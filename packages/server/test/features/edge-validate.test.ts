import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { edgeValidatedTokensSchema, MAX_TOKEN_LENGTH, MAX_VALIDATE_TOKENS } from '@flags/schemas';
import { Ajv } from 'ajv';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import type { Database } from '../../src/db/database.js';
import { ADMIN_TOKEN, admin, backends, createProject, DEV_TOKEN, testConfig } from '../helpers.js';

const ajv = new Ajv({ strict: false });
const isAnswer = ajv.compile(edgeValidatedTokensSchema);

/** Requests per address and minute in these tests; each test asks from its own address. */
const LIMIT = 6;

for (const backend of backends) {
  describe(`POST /edge/validate on ${backend.name}`, () => {
    let cleanup: () => Promise<void>;
    let db: Database;
    let app: FastifyInstance;
    let now = new Date('2026-06-01T00:00:00Z');

    before(async () => {
      ({ db, cleanup } = await backend.open());
      app = await buildApp(testConfig({ edgeValidatePerMinute: LIMIT }), {
        db,
        logger: false,
        now: () => now,
      });
      await createProject(app, 'mobile');
    });
    after(async () => {
      await app.close();
      await cleanup();
    });

    const create = async (payload: object): Promise<string> => {
      const response = await app.inject({
        method: 'POST',
        url: '/api/admin/api-tokens',
        headers: admin,
        payload: { tokenName: 'edge test', ...payload },
      });
      assert.equal(response.statusCode, 201, response.body);
      return response.json().secret;
    };
    const validate = (payload: unknown, remoteAddress: string) =>
      app.inject({
        method: 'POST',
        url: '/edge/validate',
        remoteAddress,
        ...(typeof payload === 'string'
          ? { payload, headers: { 'content-type': 'application/json' } }
          : { payload: payload as object }),
      });

    it('confirms the known client and frontend tokens among those asked, as sent; nothing else', async () => {
      const client = await create({ type: 'client', environment: 'production' });
      const backendToken = await create({ type: 'backend', projects: ['mobile'] });
      const frontend = await create({ type: 'frontend', projects: ['default', 'mobile'] });
      const adminToken = await create({ type: 'admin' });
      const revoked = await create({ type: 'client', environment: 'development' });
      const deleted = await app.inject({
        method: 'DELETE',
        url: `/api/admin/api-tokens/${encodeURIComponent(revoked)}`,
        headers: admin,
      });
      assert.equal(deleted.statusCode, 200);
      const expiring = await create({
        type: 'frontend',
        environment: 'production',
        expiresAt: '2026-06-02T00:00:00Z',
      });
      const asked = [
        'garbage',
        client,
        ADMIN_TOKEN,
        frontend,
        revoked,
        `${client.slice(0, -1)}0`,
        adminToken,
        backendToken,
        '*:development.unknown',
        expiring,
        DEV_TOKEN,
        client,
        '',
      ];
      const expected = [
        { token: client, type: 'client', environment: 'production', projects: ['*'] },
        {
          token: frontend,
          type: 'frontend',
          environment: 'development',
          projects: ['default', 'mobile'],
        },
        { token: backendToken, type: 'client', environment: 'development', projects: ['mobile'] },
        { token: expiring, type: 'frontend', environment: 'production', projects: ['*'] },
        { token: DEV_TOKEN, type: 'client', environment: 'development', projects: ['*'] },
      ];
      const before = await validate({ tokens: asked }, '10.0.0.1');
      assert.equal(before.statusCode, 200, before.body);
      assert.ok(isAnswer(before.json()), JSON.stringify(isAnswer.errors));
      assert.deepEqual(before.json(), { tokens: expected });
      assert.match(frontend, /^\[\]:development\./);

      now = new Date('2026-06-03T00:00:00Z');
      const expired = await validate({ tokens: asked }, '10.0.0.1');
      assert.deepEqual(expired.json(), {
        tokens: expected.filter((entry) => entry.token !== expiring),
      });
    });

    it('takes no token, and answers an empty list with an empty list', async () => {
      const response = await validate({ tokens: [] }, '10.0.0.2');
      assert.equal(response.statusCode, 200);
      assert.deepEqual(response.json(), { tokens: [] });
      const adminOnly = await validate({ tokens: [ADMIN_TOKEN] }, '10.0.0.2');
      assert.deepEqual(adminOnly.json(), { tokens: [] });
    });

    it(`leaves a token over ${MAX_TOKEN_LENGTH} characters out of its answer, as unleash-server does, and answers the rest (#40)`, async () => {
      const tooLong = `*:development.${'x'.repeat(600)}`;
      const longest = `*:development.${'y'.repeat(MAX_TOKEN_LENGTH - 14)}`;
      assert.equal(longest.length, MAX_TOKEN_LENGTH);
      const response = await validate({ tokens: [tooLong, DEV_TOKEN, longest] }, '10.0.0.4');
      assert.equal(response.statusCode, 200, response.body);
      assert.deepEqual(response.json(), {
        tokens: [{ token: DEV_TOKEN, type: 'client', environment: 'development', projects: ['*'] }],
      });
    });

    it('refuses malformed and oversized requests with 400 or 413 JSON', async () => {
      const cases: [unknown, number][] = [
        [{}, 400],
        [{ tokens: { secret: 'x' } }, 400],
        [{ tokens: [{ token: 'x' }] }, 400],
        [{ tokens: Array.from({ length: MAX_VALIDATE_TOKENS + 1 }, (_, i) => `t${i}`) }, 400],
        ['{"tokens": [', 400],
        [{ tokens: ['x'.repeat(300_000)] }, 413],
      ];
      for (const [index, [payload, status]] of cases.entries()) {
        const response = await validate(payload, `10.0.1.${index}`);
        assert.equal(response.statusCode, status, JSON.stringify(payload).slice(0, 80));
        assert.deepEqual(Object.keys(response.json()), ['code', 'name', 'message', 'details']);
      }
      const most = Array.from({ length: MAX_VALIDATE_TOKENS }, (_, i) => `*:development.${i}`);
      const full = await validate({ tokens: [...most.slice(1), DEV_TOKEN] }, '10.0.0.3');
      assert.equal(full.statusCode, 200);
      assert.deepEqual(
        full.json().tokens.map((entry: { token: string }) => entry.token),
        [DEV_TOKEN],
      );
    });

    it('limits requests per client address and minute: then 429 JSON with Retry-After', async () => {
      const statuses: number[] = [];
      for (let i = 0; i <= LIMIT; i++) {
        statuses.push((await validate({ tokens: [DEV_TOKEN] }, '10.0.0.9')).statusCode);
      }
      assert.deepEqual(statuses, [...Array(LIMIT).fill(200), 429]);
      const limited = await validate({ tokens: [DEV_TOKEN] }, '10.0.0.9');
      assert.equal(limited.statusCode, 429);
      assert.equal(limited.json().name, 'RateLimitError');
      assert.ok(Number(limited.headers['retry-after']) > 0, 'Retry-After in seconds');
      assert.ok(!limited.body.includes(DEV_TOKEN));
      const elsewhere = await validate({ tokens: [DEV_TOKEN] }, '10.0.0.10');
      assert.equal(elsewhere.statusCode, 200);
    });
  });
}
