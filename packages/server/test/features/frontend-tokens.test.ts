import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { apiTokensSchema } from '@flags/schemas';
import { Ajv } from 'ajv';
import type { FastifyInstance } from 'fastify';
import type { Database } from '../../src/db/database.js';
import { ADMIN_TOKEN, admin, backends, createProject, DEV_TOKEN, startApp } from '../helpers.js';

const FRONTEND_TOKEN = 'default:development.test-frontend-secret';

const ajv = new Ajv({ strict: false, validateFormats: false });
const isTokenList = ajv.compile(apiTokensSchema);

for (const backend of backends) {
  describe(`frontend tokens on ${backend.name}`, () => {
    let cleanup: () => Promise<void>;
    let db: Database;
    let app: FastifyInstance;

    before(async () => {
      ({ db, cleanup } = await backend.open());
      app = await startApp(db, { frontendTokens: [FRONTEND_TOKEN] });
      await createProject(app, 'mobile');
    });
    after(async () => {
      await app.close();
      await cleanup();
    });

    const create = (payload: object) =>
      app.inject({ method: 'POST', url: '/api/admin/api-tokens', headers: admin, payload });

    it('are created with one environment and a project list or *, and listed masked', async () => {
      const all = await create({ tokenName: 'web', type: 'frontend', environment: 'production' });
      assert.equal(all.statusCode, 201, all.body);
      assert.match(all.json().secret, /^\*:production\.[0-9a-f]{56}$/);
      assert.deepEqual(
        { ...(all.json() as Record<string, unknown>), id: 0, secret: '', createdAt: '' },
        {
          id: 0,
          secret: '',
          tokenName: 'web',
          type: 'frontend',
          environment: 'production',
          project: '*',
          projects: ['*'],
          createdAt: '',
          expiresAt: null,
        },
      );
      const several = await create({
        tokenName: 'apps',
        type: 'FRONTEND',
        projects: ['default', 'mobile'],
      });
      assert.equal(several.statusCode, 201, several.body);
      assert.match(several.json().secret, /^\[\]:development\.[0-9a-f]{56}$/);
      assert.equal(several.json().project, '[]');
      assert.deepEqual(several.json().projects, ['default', 'mobile']);

      const listed = await app.inject({ url: '/api/admin/api-tokens', headers: admin });
      assert.ok(isTokenList(listed.json()), JSON.stringify(isTokenList.errors));
      const frontend = listed
        .json()
        .tokens.filter((token: { type: string }) => token.type === 'frontend')
        .map((token: { tokenName: string; secret: string }) => [token.tokenName, token.secret]);
      assert.deepEqual(frontend, [
        ['frontend (configured)', 'default:development.test…'],
        ['web', `*:production.${all.json().secret.slice(13, 17)}…`],
        ['apps', `[]:development.${several.json().secret.slice(15, 19)}…`],
      ]);
    });

    it('refuses all environments, unknown environments and unknown projects with 400', async () => {
      const cases = [
        [{ environment: '*' }, 'A frontend token cannot be scoped to all environments.'],
        [{ environment: 'staging' }, 'Environment "staging" does not exist.'],
        [{ projects: ['ghost'] }, 'Projects do not exist: ghost.'],
      ] as const;
      for (const [scope, message] of cases) {
        const response = await create({ tokenName: 'x', type: 'frontend', ...scope });
        assert.equal(response.statusCode, 400, JSON.stringify(scope));
        assert.deepEqual(response.json(), {
          code: 'BAD_DATA',
          name: 'BadDataError',
          message,
          details: [{ message }],
        });
      }
    });

    it('stores a backend token (any case) as a client token', async () => {
      for (const type of ['backend', 'BACKEND']) {
        const response = await create({ tokenName: `sdk-${type}`, type });
        assert.equal(response.statusCode, 201, response.body);
        assert.equal(response.json().type, 'client');
        const use = await app.inject({
          url: '/api/client/features',
          headers: { authorization: response.json().secret },
        });
        assert.equal(use.statusCode, 200);
      }
    });

    it('admits each kind of token on its own API only: 403 elsewhere, 401 when unknown', async () => {
      const register = { appName: 'web' };
      const metrics = { appName: 'web', bucket: null };
      const bulk = { applications: [], metrics: [] };
      const cases: [string, string, object | undefined, string, number][] = [
        ['GET', '/api/client/features', undefined, FRONTEND_TOKEN, 403],
        ['GET', '/api/client/features/x', undefined, FRONTEND_TOKEN, 403],
        ['POST', '/api/client/register', register, FRONTEND_TOKEN, 403],
        ['POST', '/api/client/metrics', metrics, FRONTEND_TOKEN, 403],
        ['POST', '/api/client/metrics/bulk', bulk, FRONTEND_TOKEN, 403],
        ['GET', '/api/admin/api-tokens', undefined, FRONTEND_TOKEN, 403],
        ['GET', '/api/client/features', undefined, ADMIN_TOKEN, 403],
        ['POST', '/api/client/register', register, ADMIN_TOKEN, 403],
        ['POST', '/api/client/metrics', metrics, ADMIN_TOKEN, 403],
        ['GET', '/api/admin/api-tokens', undefined, DEV_TOKEN, 403],
        ['GET', '/api/client/features', undefined, DEV_TOKEN, 200],
        ['POST', '/api/client/register', register, DEV_TOKEN, 202],
        ['GET', '/api/frontend', undefined, DEV_TOKEN, 403],
        ['GET', '/api/frontend', undefined, ADMIN_TOKEN, 403],
        ['GET', '/api/frontend', undefined, `Bearer ${DEV_TOKEN}`, 403],
        ['GET', '/api/frontend', undefined, 'default:development.unknown', 401],
        ['GET', '/api/frontend', undefined, FRONTEND_TOKEN, 200],
        ['GET', '/api/frontend', undefined, `Bearer ${FRONTEND_TOKEN}`, 200],
      ];
      for (const [method, url, payload, authorization, status] of cases) {
        const response = await app.inject({
          method: method as 'GET' | 'POST',
          url,
          headers: { authorization },
          ...(payload ? { payload } : {}),
        });
        const label = `${method} ${url} with ${authorization}`;
        assert.equal(response.statusCode, status, `${label}: ${response.body}`);
        if (status === 403) assert.equal(response.json().name, 'ForbiddenError', label);
      }
      const forbidden = async (url: string, authorization: string) =>
        (await app.inject({ url, headers: { authorization } })).json().message;
      assert.equal(
        await forbidden('/api/client/features', FRONTEND_TOKEN),
        'A frontend token cannot be used on the client API; use a client token.',
      );
      assert.equal(
        await forbidden('/api/frontend', DEV_TOKEN),
        'A client token cannot be used on the frontend API; use a frontend token.',
      );
      assert.equal(
        await forbidden('/api/frontend', ADMIN_TOKEN),
        'An admin token cannot be used on the frontend API; use a frontend token.',
      );
      assert.equal(
        await forbidden('/api/admin/api-tokens', FRONTEND_TOKEN),
        'A frontend token cannot be used on the admin API; use an admin token.',
      );
      const admitted = await app.inject({
        url: '/api/frontend',
        headers: { authorization: FRONTEND_TOKEN },
      });
      assert.deepEqual(admitted.json(), { toggles: [] });
    });

    it('are deleted at start once no longer configured', async () => {
      await app.close();
      // Configured as an empty list: an unset variable would leave them alone.
      app = await startApp(db, { frontendTokens: [] });
      const listed = await app.inject({ url: '/api/admin/api-tokens', headers: admin });
      const names = listed.json().tokens.map((token: { tokenName: string }) => token.tokenName);
      assert.ok(!names.includes('frontend (configured)'), names.join(', '));
      assert.ok(names.includes('web'), 'tokens created through the API stay');
    });
  });
}
