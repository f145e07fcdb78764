import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { buildApp } from '../src/app.js';
import type { LogLevel } from '../src/config/options.js';
import { openPglite } from '../src/db/database.js';
import { admin, DEV_TOKEN, testConfig } from './helpers.js';

const SECRET = 'Sekr3t-in-the-url-0123456789';

/**
 * Requests whose URL carries a secret, matched by a route or not (a wrong method or a typo is
 * still the secret), with the URL each is logged under.
 */
const secretRequests: readonly { method: string; url: string; logged: string }[] = [
  // The dashboard's old link form and an invite link opened on the server itself.
  { method: 'GET', url: `/insights?token=${SECRET}`, logged: '/insights?<redacted>' },
  {
    method: 'GET',
    url: `/insights?from=2026-11-01&token=${SECRET}`,
    logged: '/insights?<redacted>',
  },
  { method: 'GET', url: `/insights/?token=${SECRET}`, logged: '/insights/?<redacted>' },
  { method: 'GET', url: `/new-user?invite=${SECRET}`, logged: '/new-user?<redacted>' },
  { method: 'GET', url: `/new-user/?invite=${SECRET}`, logged: '/new-user/?<redacted>' },
  // Public signup: the secret is a path segment.
  { method: 'GET', url: `/invite/${SECRET}/validate`, logged: '/invite/:token/validate' },
  { method: 'GET', url: `/invite/${SECRET}`, logged: '/invite/:token' },
  { method: 'PATCH', url: `/invite/${SECRET}/signup`, logged: '/invite/:token/signup' },
  { method: 'GET', url: `/invite/${SECRET}/nope?x=${SECRET}`, logged: '/invite/:token/…' },
  { method: 'GET', url: `//invite//${SECRET}/validate`, logged: '/invite/:token/validate' },
  { method: 'GET', url: `/INVITE/${SECRET}/validate`, logged: '/invite/:token/validate' },
  { method: 'GET', url: `/invite%2F${SECRET}%2Fvalidate`, logged: '/invite/:token/validate' },
  // Admin paths naming a token.
  {
    method: 'DELETE',
    url: `/api/admin/api-tokens/${SECRET}`,
    logged: '/api/admin/api-tokens/:token',
  },
  { method: 'GET', url: `/api/admin/api-tokens/${SECRET}`, logged: '/api/admin/api-tokens/:token' },
  {
    method: 'GET',
    url: `/api/admin/invite-link/tokens/${SECRET}/more`,
    logged: '/api/admin/invite-link/tokens/:token/…',
  },
  // A credential-named query parameter is redacted on any path, the rest of the query kept.
  {
    method: 'GET',
    url: `/api/admin/insights?from=2026-11-01&token=${SECRET}`,
    logged: '/api/admin/insights?from=2026-11-01&token=<redacted>',
  },
  {
    method: 'GET',
    url: `/health?Access_Token=${SECRET}&apiKey=${SECRET}`,
    logged: '/health?Access_Token=<redacted>&apiKey=<redacted>',
  },
];

/** The app at `level` with its log lines captured, as `main` builds it apart from the stream. */
async function withLoggedApp(
  level: LogLevel,
  run: (app: Awaited<ReturnType<typeof buildApp>>) => Promise<void>,
): Promise<Record<string, unknown>[]> {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  const db = await openPglite();
  const app = await buildApp(testConfig({ logLevel: level }), {
    db,
    logger: pino({ level }, sink),
  });
  try {
    await run(app);
  } finally {
    await app.close();
    await db.close();
  }
  return lines
    .join('')
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));
}

describe('request log lines', () => {
  for (const level of ['trace', 'debug'] as const) {
    it(`at ${level}, never hold a secret from a URL`, async () => {
      const lines = await withLoggedApp(level, async (app) => {
        for (const { method, url } of secretRequests) {
          await app.inject({ method: method as 'GET', url, headers: admin });
        }
      });
      const text = lines.map((line) => JSON.stringify(line)).join('\n');
      assert.ok(!text.includes(SECRET), text);
      const logged = lines
        .filter((line) => line.msg === 'incoming request')
        .map((line) => (line.req as { url: string }).url);
      assert.deepEqual(
        logged,
        secretRequests.map((request) => request.logged),
      );
    });
  }

  it('keep the URL of requests without a secret as it came', async () => {
    const urls = [
      '/api/client/features?project=default&namePrefix=dark&tag=simple:x',
      '/api/admin/insights?from=2026-11-01&to=2026-11-20',
      '/invitations/abc',
    ];
    const lines = await withLoggedApp('debug', async (app) => {
      for (const url of urls) {
        await app.inject({ url, headers: { authorization: DEV_TOKEN } });
      }
    });
    assert.deepEqual(
      lines
        .filter((line) => line.msg === 'incoming request')
        .map((line) => (line.req as { url: string }).url),
      urls,
    );
  });

  it('at info, are not written at all (and nothing else holds the secret)', async () => {
    const lines = await withLoggedApp('info', async (app) => {
      for (const { method, url } of secretRequests) {
        await app.inject({ method: method as 'GET', url, headers: admin });
      }
    });
    assert.equal(lines.filter((line) => line.msg === 'incoming request').length, 0);
    assert.ok(!JSON.stringify(lines).includes(SECRET));
  });
});
