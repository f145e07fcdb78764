// test-runs: once (a slow end-to-end suite: CI runs it on one Node.js line, scripts/run-tests.mjs)
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import {
  abandonedRequest,
  assertNoPollution,
  fuzzInject,
  type GeneratedRequest,
  Hostile,
  isErrorBody,
  percent,
  prototypeKeys,
  rawRequest,
} from '../../../test/helpers/hostile.js';
import { buildApp } from '../src/app.js';
import { hashSecret } from '../src/auth/secrets.js';
import type { Database } from '../src/db/database.js';
import { TokenStore } from '../src/features/api-tokens/token-store.js';
import { RevisionTracker } from '../src/revision.js';
import {
  ADMIN_TOKEN,
  admin,
  backends,
  DEV_TOKEN,
  PROD_TOKEN,
  startApp,
  testConfig,
} from './helpers.js';

/**
 * Hostile input against every flags-server route: seeded generated requests (replay a failure
 * with FUZZ_SEED) must never get a 5xx, crash the process, pollute a prototype or leave memory
 * behind, and every error is `{ name, message, details: [{ message }] }`.
 */

const SEED = Number(process.env.FUZZ_SEED ?? 4242);
const BODY_LIMIT = 64 * 1024;
const IMPORT_LIMIT = 256 * 1024;
const prototypesBefore = prototypeKeys();
const fixtureText = readFileSync(new URL('./fixtures/import-basic.json', import.meta.url), 'utf8');
/** An Unleash Edge bulk report on the fixture's flags. */
const bulkText = JSON.stringify({
  applications: [
    {
      appName: 'checkout',
      instanceId: 'pod-1',
      environment: 'development',
      connectionId: null,
      interval: 15000,
      started: '2026-03-01T09:00:00Z',
      strategies: ['default'],
    },
  ],
  metrics: [
    {
      featureName: 'dark-mode',
      appName: 'checkout',
      environment: 'development',
      timestamp: '2026-03-01T10:05:00Z',
      yes: 3,
      no: 1,
      variants: { dark: 2 },
    },
  ],
});

type Generated = GeneratedRequest;

/** A JSON fixture with one part replaced, removed, or a poisonous key slipped in. */
function mutated(h: Hostile, text: string): string {
  const value = JSON.parse(text) as Record<string, unknown>;
  const paths: [Record<string, unknown> | unknown[], string | number][] = [];
  const walk = (node: unknown) => {
    if (node === null || typeof node !== 'object') return;
    for (const key of Object.keys(node)) {
      paths.push([node as Record<string, unknown>, Array.isArray(node) ? Number(key) : key]);
      walk((node as Record<string, unknown>)[key]);
    }
  };
  walk(value);
  for (let i = 0; i < 1 + h.int(3); i++) {
    const [parent, key] = h.pick(paths);
    const roll = h.random();
    const target = parent as Record<string | number, unknown>;
    if (roll < 0.6) target[key] = JSON.parse(h.json(2));
    else if (roll < 0.8) delete target[key];
    else target[key] = h.pick(['', '\u0000', 'x'.repeat(5000), -1, 1e308, [], {}, null]);
  }
  let result = JSON.stringify(value);
  if (h.chance(0.2)) {
    const at = result.indexOf('{', h.int(result.length));
    if (at >= 0)
      result = `${result.slice(0, at + 1)}"${h.pick(['__proto__', 'constructor'])}":{"x":1,"prototype":{"x":1}},${result.slice(at + 1)}`;
  }
  return result;
}

function generate(h: Hostile): Generated {
  const roll = h.random();
  const id = () =>
    h.chance(0.5)
      ? percent(h.text(10))
      : h.pick(['1', '0', '-1', '999999999999', 'NaN', 'default', '__proto__', '%00']);
  let method: string;
  let path: string;
  let client = false;
  if (roll < 0.15) [method, path, client] = ['GET', '/api/client/features', true];
  else if (roll < 0.2) [method, path, client] = ['GET', `/api/client/features/${id()}`, true];
  else if (roll < 0.27)
    [method, path, client] = [
      'POST',
      h.pick([
        '/api/client/metrics',
        '/api/client/register',
        '/api/client/metrics/bulk',
        '/api/client/metrics/edge',
      ]),
      true,
    ];
  else if (roll < 0.47)
    [method, path] = [
      'POST',
      h.pick(['/api/admin/features-batch/import', '/api/admin/features-batch/validate']),
    ];
  else if (roll < 0.5) [method, path] = ['POST', '/api/admin/features-batch/export'];
  else if (roll < 0.6)
    [method, path] = [
      'POST',
      h.pick([
        '/api/admin/api-tokens',
        '/api/admin/environments',
        '/api/admin/projects',
        '/api/admin/segments',
        '/api/admin/strategies',
        '/api/admin/user-admin',
        '/api/admin/invite-link/tokens',
      ]),
    ];
  else if (roll < 0.7)
    [method, path] = [
      'GET',
      h.pick([
        '/api/admin/api-tokens',
        '/api/admin/context',
        '/api/admin/environments',
        '/api/admin/projects',
        '/api/admin/segments',
        '/api/admin/strategies',
        '/api/admin/roles',
        '/api/admin/user-admin',
        '/api/admin/invite-link/tokens',
        '/api/admin/insights',
        '/health',
        '/insights',
      ]),
    ];
  else if (roll < 0.8)
    [method, path] = h.pick<[string, string]>([
      ['GET', `/api/admin/roles/${id()}`],
      ['GET', `/api/admin/user-admin/${id()}`],
      ['GET', `/api/admin/invite-link/tokens/${id()}`],
      ['PUT', `/api/admin/invite-link/tokens/${id()}`],
      // Not a small number: that is a token id, and ids 1-3 are this app's own configured tokens.
      [
        'DELETE',
        `/api/admin/api-tokens/${h.pick(['0', '-1', '999999999999', 'NaN', '__proto__', '%00', percent(h.text(10))])}`,
      ],
      ['DELETE', `/api/admin/projects/${id()}/features/${id()}`],
      ['GET', `/invite/${id()}/validate`],
      ['POST', `/invite/${id()}/signup`],
    ]);
  else
    [method, path] = [
      h.pick(['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD']),
      h.pick([
        '/api/client/features',
        '/api/admin/features-batch/import',
        '/api/admin/projects',
        '/health',
        '/api/admin',
        '/edge/validate',
        '/nowhere',
        '/api/../api/admin/projects',
      ]),
    ];
  const headers = h.headers();
  const auth = h.random();
  if (auth < 0.85) headers.authorization = client ? h.pick([DEV_TOKEN, PROD_TOKEN]) : ADMIN_TOKEN;
  else if (auth < 0.9) headers.authorization = client ? ADMIN_TOKEN : DEV_TOKEN;
  else if (auth < 0.95) headers.authorization = `Bearer ${h.text(20).replace(/[^\x20-\x7e]/g, '')}`;
  const query = h.chance(method === 'GET' ? 0.7 : 0.1) ? `?${h.query()}` : '';
  let payload: string | undefined;
  if (method !== 'GET' && method !== 'HEAD' && method !== 'OPTIONS') {
    const fixture =
      path.includes('features-batch/im') || path.includes('features-batch/val')
        ? fixtureText
        : path.endsWith('/metrics/bulk')
          ? bulkText
          : undefined;
    if (fixture !== undefined && h.chance(0.5)) {
      payload = mutated(h, fixture);
      headers['content-type'] = 'application/json';
    }
    if (payload === undefined) {
      const body = h.body(path.includes('features-batch') ? IMPORT_LIMIT : BODY_LIMIT);
      payload = body.payload;
      if (body.contentType !== undefined) headers['content-type'] = body.contentType;
    }
  }
  return { method, url: `${path}${query}`, headers, payload };
}

function checkAnswer(request: Generated, status: number, body: string): string | undefined {
  if (status >= 500) return `status ${status}: ${body.slice(0, 300)}`;
  if (status < 400 || request.method === 'HEAD') return undefined;
  return isErrorBody(body) ? undefined : `${status} error body ${body.slice(0, 200)}`;
}

for (const backend of backends) {
  const requests = Number(
    process.env.FUZZ_REQUESTS ?? (backend.name === 'pglite' ? 10_000 : 3_000),
  );

  describe(`server fuzz on ${backend.name}`, () => {
    let db: Database;
    let cleanup: () => Promise<void>;
    let app: FastifyInstance;
    let port: number;

    before(async () => {
      ({ db, cleanup } = await backend.open());
      app = await startApp(db, {
        bodyLimitBytes: BODY_LIMIT,
        importBodyLimitBytes: IMPORT_LIMIT,
        // Every fuzzed signup reaches the handler (the limit has a test of its own).
        signupsPerMinute: 100_000,
      });
      // What the import fixture refers to, so mutated imports get as far as the database.
      await app.inject({
        method: 'POST',
        url: '/api/admin/segments',
        headers: admin,
        payload: { name: 'beta-testers', constraints: [] },
      });
      await app.listen({ port: 0, host: '127.0.0.1' });
      port = (app.server.address() as AddressInfo).port;
    });

    after(async () => {
      await app.close();
      await cleanup();
    });

    it(`answers ${requests} generated hostile requests without a 5xx, a crash, pollution or a leak`, async () => {
      const h = new Hostile(SEED);
      const result = await fuzzInject(app, requests, () => generate(h), checkAnswer);
      console.log(`server fuzz on ${backend.name} (seed ${SEED}): ${result.summary}`);
      const { problems, growthMb } = result;
      assert.deepEqual(problems, []);
      assertNoPollution(prototypesBefore);
      assert.ok(growthMb < 24, `heap grew by ${growthMb.toFixed(1)} MB`);
      const check = await app.inject({
        url: '/api/client/features',
        headers: { authorization: DEV_TOKEN },
      });
      assert.equal(check.statusCode, 200);
    });

    it('enforces header and body limits over a real socket: 431 and 413', async () => {
      const h = new Hostile(SEED + 1);
      const statuses = new Map<number, number>();
      const note = (status: number) => statuses.set(status, (statuses.get(status) ?? 0) + 1);
      for (let i = 0; i < 240; i++) {
        const kind = i % 6;
        if (kind === 0) {
          const size = 20_000 + h.int(60_000);
          const answer = await rawRequest(
            port,
            `GET /api/admin/projects HTTP/1.1\r\nHost: x\r\nAuthorization: ${ADMIN_TOKEN}\r\nX-Big: ${'b'.repeat(size)}\r\nConnection: close\r\n\r\n`,
          );
          note(answer.status);
          assert.equal(answer.status, 431);
        } else if (kind === 1) {
          const lines = Array.from(
            { length: 1 + h.int(80) },
            (_, n) => `X-H${n % 7}: ${'v'.repeat(h.int(60))}`,
          );
          const answer = await rawRequest(
            port,
            `GET /api/client/features HTTP/1.1\r\nHost: x\r\nAuthorization: ${DEV_TOKEN}\r\nAuthorization: other\r\n${lines.join('\r\n')}\r\nConnection: close\r\n\r\n`,
          );
          note(answer.status);
          assert.ok(answer.status === 200 || answer.status === 401, `status ${answer.status}`);
        } else if (kind === 2) {
          const bytes = Buffer.concat([
            Buffer.from('GET /api/admin/projects HTTP/1.1\r\nHost: x\r\nAuthorization: '),
            Buffer.from(Array.from({ length: 1 + h.int(40) }, () => 0x80 + h.int(0x7f))),
            Buffer.from('\r\nConnection: close\r\n\r\n'),
          ]);
          const answer = await rawRequest(port, bytes);
          note(answer.status);
          assert.equal(answer.status, 401);
          assert.ok(isErrorBody(answer.body), answer.body);
        } else if (kind === 3) {
          const answer = await rawRequest(
            port,
            `GET /health HTTP/1.1\r\nHost: x\r\nX-Ctl: a${String.fromCharCode(1 + h.int(8))}b\r\nConnection: close\r\n\r\n`,
          );
          note(answer.status);
          assert.equal(answer.status, 400);
        } else if (kind === 4) {
          const [path, limit] = h.chance(0.5)
            ? ['/api/admin/features-batch/import', IMPORT_LIMIT]
            : ['/api/admin/segments', BODY_LIMIT];
          const body = `{"name":"${'n'.repeat(limit + h.int(limit))}"}`;
          const answer = await rawRequest(
            port,
            `POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: ${ADMIN_TOKEN}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
          );
          note(answer.status);
          assert.equal(answer.status, 413);
          assert.ok(isErrorBody(answer.body), answer.body);
        } else {
          await abandonedRequest(
            port,
            `POST /api/admin/features-batch/import HTTP/1.1\r\nHost: x\r\nAuthorization: ${ADMIN_TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"project":`,
          );
        }
      }
      const still = await rawRequest(
        port,
        'GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
      );
      console.log(
        `server socket fuzz on ${backend.name}: 240 raw requests; statuses ${JSON.stringify(Object.fromEntries(statuses))}`,
      );
      assert.equal(still.status, 200);
    });
  });
}

describe('server API tokens', () => {
  it('are found by the hash of the presented secret; the store holds no secret', async () => {
    const [backend] = backends;
    const { db, cleanup } = await backend!.open();
    const app = await startApp(db);
    try {
      const store = new TokenStore(db, new RevisionTracker(db, 0), () => new Date());
      const token = await store.lookup(ADMIN_TOKEN);
      assert.equal(token?.type, 'admin');
      assert.ok(!JSON.stringify(token).includes(ADMIN_TOKEN), JSON.stringify(token));
      assert.equal(await store.lookup(`${ADMIN_TOKEN.slice(0, -1)}X`), undefined);
      assert.equal(await store.lookup(''), undefined);
      assert.equal(await store.lookup(hashSecret(ADMIN_TOKEN)), undefined, 'a hash is no token');
    } finally {
      await app.close();
      await cleanup();
    }
  });

  it('never appear in any log line, even at debug level', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const [backend] = backends;
    const { db, cleanup } = await backend!.open();
    const config = testConfig({ logLevel: 'debug' });
    const app = await buildApp(config, { db, logger: pino({ level: 'debug' }, sink) });
    const wrong = 'default:development.wrong-guess-0123456789';
    let created = '';
    let inviteSecret = '';
    try {
      const answer = await app.inject({
        method: 'POST',
        url: '/api/admin/api-tokens',
        headers: admin,
        payload: { tokenName: 'fuzz', type: 'client', environment: 'development', projects: ['*'] },
      });
      created = (answer.json() as { secret?: string }).secret ?? '';
      const invite = await app.inject({
        method: 'POST',
        url: '/api/admin/invite-link/tokens',
        headers: admin,
        payload: { name: 'fuzz', expiresAt: new Date(Date.now() + 3_600_000).toISOString() },
      });
      inviteSecret = (invite.json() as { secret?: string }).secret ?? '';
      for (const [method, url, payload] of [
        ['GET', `/invite/${inviteSecret}/validate`, undefined],
        ['POST', `/invite/${inviteSecret}/signup`, '{"name":"x"}'],
        ['GET', `/api/admin/invite-link/tokens/${inviteSecret}`, undefined],
        ['PUT', `/api/admin/invite-link/tokens/${inviteSecret}`, '{"enabled":true}'],
      ] as const) {
        await app.inject({
          method,
          url,
          headers: { ...admin, 'content-type': 'application/json' },
          ...(payload === undefined ? {} : { payload }),
        });
      }
      for (const token of [
        ADMIN_TOKEN,
        DEV_TOKEN,
        PROD_TOKEN,
        wrong,
        `Bearer ${ADMIN_TOKEN}`,
        created,
      ]) {
        for (const [method, url, payload] of [
          ['GET', '/api/client/features', undefined],
          ['GET', '/api/admin/api-tokens', undefined],
          ['POST', '/api/client/metrics', '{"appName":"a","bucket":{}}'],
          ['POST', '/api/admin/features-batch/import', '{"broken'],
          ['POST', '/api/admin/features-batch/validate', fixtureText],
          ['DELETE', `/api/admin/api-tokens/${encodeURIComponent(wrong)}`, undefined],
        ] as const) {
          await app.inject({
            method,
            url,
            headers: { authorization: token, 'content-type': 'application/json' },
            ...(payload === undefined ? {} : { payload }),
          });
        }
      }
    } finally {
      await app.close();
      await cleanup();
    }
    const secrets = [ADMIN_TOKEN, DEV_TOKEN, PROD_TOKEN, wrong, created, inviteSecret].filter(
      (s) => s !== '',
    );
    // Configured client tokens may be logged masked (`*:development.test…`), never whole.
    const secretParts = secrets.map((secret) => secret.slice(secret.indexOf('.') + 1));
    const leaks = lines.filter((line) => secretParts.some((secret) => line.includes(secret)));
    console.log(
      `server secrets in logs: ${lines.length} debug log lines written, ${leaks.length} contain a token`,
    );
    assert.ok(created.length > 20, 'a token was created');
    assert.ok(inviteSecret.length > 20, 'a signup token was created');
    assert.ok(lines.length > 50, 'debug logging was on');
    assert.deepEqual(leaks, []);
  });
});
