// test-runs: once (a slow end-to-end suite: CI runs it on one Node.js line, scripts/run-tests.mjs)
import assert from 'node:assert/strict';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { createProxy, type ProxyApp } from '@flags/proxy';
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
import { KeyChecker } from '../src/auth/client-keys.js';
import { smallPayload } from './fixtures/small.js';
import { FakeUpstream } from './helpers/fake-upstream.js';
import { API_TOKEN, CLIENT_KEY, waitFor } from './helpers/proxy.js';
import { RecordingLogger } from './helpers/recording-logger.js';

/**
 * Hostile input against every proxy route: generated requests (seeded, so a failure can be
 * replayed with FUZZ_SEED) must never get a 5xx, crash the process, pollute a prototype or leave
 * memory behind; every error is the JSON error shape (except the contract's plain-text 401 and
 * the OFREP protocol's own error shape).
 */

const SEED = Number(process.env.FUZZ_SEED ?? 20261122);
const REQUESTS = Number(process.env.FUZZ_REQUESTS ?? 10_000);
const BODY_LIMIT = 64 * 1024;
const SERVER_TOKEN = 'server-side-token-secret';

let upstream: FakeUpstream;
let proxy: ProxyApp;
let port: number;
const prototypesBefore = prototypeKeys();

before(async () => {
  upstream = await new FakeUpstream(smallPayload).start();
  proxy = await createProxy({
    flagsUrl: upstream.url,
    flagsApiToken: API_TOKEN,
    clientKeys: [CLIENT_KEY],
    expServerSideSdkConfig: { tokens: [SERVER_TOKEN] },
    enableAllEndpoint: true,
    enableOAS: true,
    refreshInterval: 60_000,
    metricsInterval: 60_000,
    maxBodyBytes: BODY_LIMIT,
    // The answer cache keeps up to its budget on purpose; a small one keeps the leak check sharp.
    answerCacheBytes: 1024 * 1024,
    logger: new RecordingLogger(),
  });
  await proxy.app.listen({ port: 0, host: '127.0.0.1' });
  port = (proxy.app.server.address() as AddressInfo).port;
  await waitFor(() => proxy.state.ready);
});

after(async () => {
  await proxy.app.close();
  await upstream.stop();
});

type Generated = GeneratedRequest;

const PATHS = [
  '/proxy',
  '/proxy/all',
  '/proxy/health',
  '/proxy/client/features',
  '/proxy/client/metrics',
  '/proxy/all/client/metrics',
  '/proxy/client/register',
  '/proxy/internal-backstage/prometheus',
  '/proxy/docs/openapi.json',
  '/proxy/docs/openapi',
  '/proxy/docs/openapi/static/index.html',
  '/proxy/docs/openapi/%2e%2e/%2e%2e/package.json',
  '/ofrep/v1/evaluate/flags',
  '/ofrep/v1/evaluate/flags/simple-on',
  '/ofrep/v1/evaluate/flags/%00',
  '/proxy/../proxy',
  '/proxy//all',
  '/nowhere',
];

function generate(h: Hostile): Generated {
  const roll = h.random();
  let method: string;
  let path: string;
  if (roll < 0.35) [method, path] = ['GET', '/proxy'];
  else if (roll < 0.45) [method, path] = ['GET', '/proxy/all'];
  else if (roll < 0.62) [method, path] = ['POST', '/proxy'];
  else if (roll < 0.67) [method, path] = ['POST', '/proxy/all'];
  else if (roll < 0.72) [method, path] = ['POST', '/proxy/client/metrics'];
  else if (roll < 0.75) [method, path] = ['POST', '/proxy/client/register'];
  else if (roll < 0.8)
    [method, path] = [
      'POST',
      h.pick([
        '/ofrep/v1/evaluate/flags',
        `/ofrep/v1/evaluate/flags/${h.pick(['simple-on', 'nope', percent(h.text(8))])}`,
      ]),
    ];
  else if (roll < 0.83) [method, path] = ['GET', '/proxy/client/features'];
  else if (roll < 0.86)
    [method, path] = ['GET', h.pick(['/proxy/health', '/proxy/internal-backstage/prometheus'])];
  else
    [method, path] = [
      h.pick(['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD']),
      h.pick(PATHS),
    ];
  const auth = h.random();
  const headers: Record<string, string> = h.headers();
  if (path === '/proxy/client/features') headers.authorization = SERVER_TOKEN;
  else if (auth < 0.85) headers.authorization = CLIENT_KEY;
  else if (auth < 0.9) headers.authorization = `${CLIENT_KEY}x`;
  else if (auth < 0.95) headers.authorization = h.text(20).replace(/[^\x20-\x7e]/g, '');
  if (path.startsWith('/ofrep') && h.chance(0.3)) {
    delete headers.authorization;
    headers[h.pick(['authorization', 'x-api-key'])] = h.pick([
      `Bearer ${CLIENT_KEY}`,
      CLIENT_KEY,
      'Bearer ',
    ]);
  }
  const query = h.chance(method === 'GET' ? 0.9 : 0.2) ? `?${h.query()}` : '';
  let payload: string | undefined;
  if (method !== 'GET' && method !== 'HEAD' && method !== 'OPTIONS') {
    const body = h.body(BODY_LIMIT);
    payload = body.payload;
    if (body.contentType !== undefined) headers['content-type'] = body.contentType;
  }
  return { method, url: `${path}${query}`, headers, payload };
}

/** Which body a status may carry on a path (the contract's exceptions to the JSON error shape). */
function checkAnswer(request: Generated, status: number, body: string): string | undefined {
  if (status >= 500) return `status ${status}`;
  if (status < 400 || request.method === 'HEAD') return undefined;
  if (status === 401) return body === 'Unauthorized' ? undefined : `401 body ${body}`;
  if (request.url.startsWith('/ofrep/') && request.method === 'POST') {
    // OFREP's own error shape: { key?, errorCode, errorDetails }.
    try {
      const parsed = JSON.parse(body) as { errorCode?: unknown; errorDetails?: unknown };
      if (typeof parsed.errorCode === 'string' && typeof parsed.errorDetails === 'string')
        return undefined;
    } catch {}
    return `${status} OFREP error body ${body.slice(0, 200)}`;
  }
  return isErrorBody(body) ? undefined : `${status} error body ${body.slice(0, 200)}`;
}

describe('proxy fuzz', () => {
  it(`answers ${REQUESTS} generated hostile requests without a 5xx, a crash, pollution or a leak`, async () => {
    const h = new Hostile(SEED);
    const result = await fuzzInject(proxy.app, REQUESTS, () => generate(h), checkAnswer);
    console.log(`proxy fuzz (seed ${SEED}): ${result.summary}`);
    const { problems, growthMb } = result;
    assert.deepEqual(problems, []);
    assertNoPollution(prototypesBefore);
    assert.ok(growthMb < 16, `heap grew by ${growthMb.toFixed(1)} MB`);
    // Still serving normally afterwards.
    const check = await proxy.app.inject({ url: '/proxy', headers: { authorization: CLIENT_KEY } });
    assert.equal(check.statusCode, 200);
  });

  it('enforces header and body limits over a real socket: 431 and 413', async () => {
    const h = new Hostile(SEED + 1);
    const counts = { 431: 0, 413: 0, 400: 0, ok: 0 };
    const statuses = new Map<number, number>();
    const note = (status: number) => statuses.set(status, (statuses.get(status) ?? 0) + 1);
    for (let i = 0; i < 300; i++) {
      const kind = i % 6;
      if (kind === 0) {
        // Headers far above Node's 16 kB limit → 431.
        const size = 20_000 + h.int(60_000);
        const answer = await rawRequest(
          port,
          `GET /proxy HTTP/1.1\r\nHost: x\r\nAuthorization: ${CLIENT_KEY}\r\nX-Big: ${'b'.repeat(size)}\r\nConnection: close\r\n\r\n`,
        );
        note(answer.status);
        assert.equal(answer.status, 431, `header of ${size} bytes`);
        counts[431]++;
      } else if (kind === 1) {
        // Headers well below it, many of them, some repeated → answered normally.
        const lines = Array.from(
          { length: 1 + h.int(80) },
          (_, n) => `X-H${n % 7}: ${'v'.repeat(h.int(60))}`,
        );
        const answer = await rawRequest(
          port,
          `GET /proxy?userId=${i} HTTP/1.1\r\nHost: x\r\nAuthorization: ${CLIENT_KEY}\r\nAuthorization: other\r\n${lines.join('\r\n')}\r\nConnection: close\r\n\r\n`,
        );
        note(answer.status);
        assert.ok(answer.status === 200 || answer.status === 401, `status ${answer.status}`);
        counts.ok++;
      } else if (kind === 2) {
        // Binary-ish (Latin-1) header values: a wrong key, never a crash.
        const bytes = Buffer.concat([
          Buffer.from('GET /proxy HTTP/1.1\r\nHost: x\r\nAuthorization: '),
          Buffer.from(Array.from({ length: 1 + h.int(40) }, () => 0x80 + h.int(0x7f))),
          Buffer.from('\r\nX-Bin: '),
          Buffer.from(Array.from({ length: 1 + h.int(200) }, () => 0x80 + h.int(0x7f))),
          Buffer.from('\r\nConnection: close\r\n\r\n'),
        ]);
        const answer = await rawRequest(port, bytes);
        note(answer.status);
        assert.equal(answer.status, 401);
        counts.ok++;
      } else if (kind === 3) {
        // Control characters in a header: Node's parser refuses the request with 400.
        const answer = await rawRequest(
          port,
          `GET /proxy HTTP/1.1\r\nHost: x\r\nX-Ctl: a${String.fromCharCode(1 + h.int(8))}b\r\nConnection: close\r\n\r\n`,
        );
        note(answer.status);
        assert.equal(answer.status, 400);
        counts[400]++;
      } else if (kind === 4) {
        // A body above maxBodyBytes → 413 with the JSON error shape.
        const body = `{"context":{"userId":"${'u'.repeat(BODY_LIMIT + h.int(BODY_LIMIT))}"}}`;
        const answer = await rawRequest(
          port,
          `POST /proxy HTTP/1.1\r\nHost: x\r\nAuthorization: ${CLIENT_KEY}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
        );
        note(answer.status);
        assert.equal(answer.status, 413);
        assert.ok(isErrorBody(answer.body), answer.body);
        counts[413]++;
      } else {
        // A body shorter than its Content-Length, then the client goes away: no crash, no answer owed.
        await abandonedRequest(
          port,
          `POST /proxy HTTP/1.1\r\nHost: x\r\nAuthorization: ${CLIENT_KEY}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"context":`,
        );
        counts.ok++;
      }
    }
    const still = await rawRequest(
      port,
      `GET /proxy/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
    );
    console.log(
      `proxy socket fuzz: 300 raw requests; statuses ${JSON.stringify(Object.fromEntries(statuses))}`,
    );
    assert.equal(still.status, 200);
    assertNoPollution(prototypesBefore);
  });
});

describe('client keys', () => {
  it('are compared with crypto.timingSafeEqual over equal-length buffers, against every key of that length', () => {
    const crypto = createRequire(import.meta.url)('node:crypto') as typeof import('node:crypto');
    const original = crypto.timingSafeEqual;
    const calls: [number, number][] = [];
    crypto.timingSafeEqual = ((a: NodeJS.ArrayBufferView, b: NodeJS.ArrayBufferView) => {
      calls.push([a.byteLength, b.byteLength]);
      return original(a, b);
    }) as typeof original;
    syncBuiltinESMExports();
    try {
      const checker = new KeyChecker(['key-aaaa', 'key-bbbb', 'longer-key-cccc']);
      assert.equal(checker.accepts('key-bbbb'), true);
      assert.deepEqual(
        calls,
        [
          [8, 8],
          [8, 8],
        ],
        'both 8-byte keys compared, even after the match',
      );
      calls.length = 0;
      assert.equal(checker.accepts('key-zzzz'), false);
      assert.equal(calls.length, 2);
      calls.length = 0;
      assert.equal(checker.accepts('short'), false);
      assert.equal(checker.accepts(['key-aaaa', 'key-aaaa']), false, 'a repeated header is no key');
      assert.deepEqual(calls, [], 'no configured key of that length: nothing to compare');
    } finally {
      crypto.timingSafeEqual = original;
      syncBuiltinESMExports();
    }
  });

  it('and tokens never appear in any log line, even at debug level', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const log = pino({ level: 'debug' }, sink);
    const fake = await new FakeUpstream(smallPayload).start();
    const secrets = [CLIENT_KEY, API_TOKEN, SERVER_TOKEN, 'wrong-key-guess-1234'];
    const debugProxy = await createProxy({
      flagsUrl: fake.url,
      flagsApiToken: API_TOKEN,
      clientKeys: [CLIENT_KEY],
      expServerSideSdkConfig: { tokens: [SERVER_TOKEN] },
      enableAllEndpoint: true,
      refreshInterval: 20,
      metricsInterval: 50,
      logger: log,
    });
    try {
      await waitFor(() => debugProxy.state.ready);
      for (const key of [CLIENT_KEY, 'wrong-key-guess-1234', SERVER_TOKEN, '']) {
        for (const [method, url, body] of [
          ['GET', '/proxy?userId=1', undefined],
          ['POST', '/proxy/all', '{"context":{"userId":"2"}}'],
          ['GET', '/proxy/client/features', undefined],
          [
            'POST',
            '/proxy/client/register',
            '{"appName":"a","instanceId":"i","interval":1,"started":"2024-01-01T00:00:00Z","strategies":[]}',
          ],
          ['POST', '/ofrep/v1/evaluate/flags', '{"context":{}}'],
          ['POST', '/proxy', '{"broken'],
        ] as const) {
          await debugProxy.app.inject({
            method,
            url,
            headers: { authorization: key, 'x-api-key': key, 'content-type': 'application/json' },
            ...(body === undefined ? {} : { payload: body }),
          });
        }
      }
      // Upstream failures are logged too: a refused token, then a server error.
      fake.mode = 'unauthorized';
      await waitFor(() => lines.some((line) => line.includes('rejected the API token')));
      fake.mode = 'error500';
      await waitFor(() => lines.some((line) => line.includes('answered 500')));
    } finally {
      await debugProxy.app.close();
      await fake.stop();
    }
    const leaks = lines.filter((line) => secrets.some((secret) => line.includes(secret)));
    console.log(
      `secrets in logs: ${lines.length} debug log lines written, ${leaks.length} contain a key or token`,
    );
    assert.ok(lines.length > 20, 'debug logging was on');
    assert.deepEqual(leaks, []);
  });
});
