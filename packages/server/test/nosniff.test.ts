import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildUi } from '../../../scripts/build-ui.js';
import { openPglite } from '../src/db/database.js';
import { ADMIN_TOKEN, DEV_TOKEN, startApp } from './helpers.js';

/**
 * Every answer tells browsers to take its Content-Type as sent (`X-Content-Type-Options:
 * nosniff`): JSON, the HTML dashboard, 304s and every error, whichever part of the server wrote it.
 */
describe('X-Content-Type-Options', () => {
  it('is nosniff on JSON, HTML, empty and error answers', async () => {
    // The HTML dashboard inlines the web UI's bundle.
    await buildUi();
    const db = await openPglite();
    const app = await startApp(db, { signupsPerMinute: 1, bodyLimitBytes: 1024 });
    try {
      const features = await app.inject({
        url: '/api/client/features',
        headers: { authorization: DEV_TOKEN },
      });
      const answers = {
        json: await app.inject({ url: '/health' }),
        features,
        gzip: await app.inject({
          url: '/api/client/features',
          headers: { authorization: DEV_TOKEN, 'accept-encoding': 'gzip' },
        }),
        notModified: await app.inject({
          url: '/api/client/features',
          headers: { authorization: DEV_TOKEN, 'if-none-match': String(features.headers.etag) },
        }),
        accepted: await app.inject({
          method: 'POST',
          url: '/api/client/register',
          headers: { authorization: DEV_TOKEN },
          payload: { appName: 'nosniff' },
        }),
        html: await app.inject({ url: '/insights' }),
        insights: await app.inject({
          url: '/api/admin/insights',
          headers: { authorization: ADMIN_TOKEN },
        }),
        unauthorized: await app.inject({ url: '/api/client/features' }),
        forbidden: await app.inject({
          url: '/api/admin/insights',
          headers: { authorization: DEV_TOKEN },
        }),
        notFound: await app.inject({ url: '/nowhere' }),
        badJson: await app.inject({
          method: 'POST',
          url: '/api/client/register',
          headers: { authorization: DEV_TOKEN, 'content-type': 'application/json' },
          payload: '{',
        }),
        invalid: await app.inject({
          url: '/api/admin/insights?from=yesterday',
          headers: { authorization: ADMIN_TOKEN },
        }),
        tooLarge: await app.inject({
          method: 'POST',
          url: '/api/client/register',
          headers: { authorization: DEV_TOKEN, 'content-type': 'application/json' },
          payload: JSON.stringify({ appName: 'x'.repeat(2048) }),
        }),
        mediaType: await app.inject({
          method: 'POST',
          url: '/api/client/register',
          headers: { authorization: DEV_TOKEN, 'content-type': 'text/plain' },
          payload: 'appName=x',
        }),
        rateLimited: await (async () => {
          const signup = () =>
            app.inject({ method: 'POST', url: '/invite/unknown/signup', payload: {} });
          await signup();
          return signup();
        })(),
      };
      const statuses = Object.fromEntries(
        Object.entries(answers).map(([name, response]) => [name, response.statusCode]),
      );
      assert.deepEqual(statuses, {
        json: 200,
        features: 200,
        gzip: 200,
        notModified: 304,
        accepted: 202,
        html: 200,
        insights: 200,
        unauthorized: 401,
        forbidden: 403,
        notFound: 404,
        badJson: 400,
        invalid: 400,
        tooLarge: 413,
        mediaType: 415,
        rateLimited: 429,
      });
      for (const [name, response] of Object.entries(answers)) {
        assert.equal(response.headers['x-content-type-options'], 'nosniff', name);
      }
    } finally {
      await app.close();
      await db.close();
    }
  });
  // The 503 of a server shutting down: closing.test.ts, which drives that answer over a socket.
});
