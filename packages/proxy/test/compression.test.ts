import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import {
  brotliCompressSync,
  brotliDecompressSync,
  constants,
  deflateSync,
  gunzipSync,
  gzipSync,
  inflateSync,
} from 'node:zlib';
import { AnswerWriter } from '@flags/serving';
import { request } from 'undici';
import { AnswerCompression, LEVELS } from '../src/http/compression.js';
import { realisticContexts, realisticPayload } from './fixtures/realistic.js';
import { CLIENT_KEY, type Listening, startProxy, waitFor } from './helpers/proxy.js';

/** `compression`: answers over 1 KB in the encoding the caller accepts, over real sockets. */

interface Raw {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: Buffer;
}

async function raw(
  base: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<Raw> {
  const response = await request(`${base}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: {
      authorization: CLIENT_KEY,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
    body,
  });
  return {
    status: response.statusCode,
    headers: response.headers,
    body: Buffer.from(await response.body.arrayBuffer()),
  };
}

/** The same request through `inject` (Fastify's routes; the evaluation front never sees it). */
async function injected(
  run: Listening,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<Raw> {
  const response = await run.proxy.app.inject({
    method: body === undefined ? 'GET' : 'POST',
    url: path,
    headers: {
      authorization: CLIENT_KEY,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
    payload: body,
  });
  const answered: Raw['headers'] = {};
  for (const [name, value] of Object.entries(response.headers))
    answered[name] = typeof value === 'number' ? String(value) : value;
  return { status: response.statusCode, headers: answered, body: response.rawPayload };
}

/** The bytes an answer encodes, decoded with zlib by its `Content-Encoding`. */
function decoded(answer: Raw): Buffer {
  const encoding = answer.headers['content-encoding'];
  if (encoding === 'br') return brotliDecompressSync(answer.body);
  if (encoding === 'gzip') return gunzipSync(answer.body);
  if (encoding === 'deflate') return inflateSync(answer.body);
  assert.equal(encoding, undefined);
  return answer.body;
}

/**
 * `body` compressed in `encoding` at `levels`, as zlib does it; kept copies in brotli with the
 * smallest window that holds the body (10–24 bits, 2^n − 16 bytes).
 */
function compressed(
  encoding: string,
  body: Buffer,
  levels: { brotliQuality: number; zlibLevel: number },
): Buffer {
  if (encoding === 'br') {
    const window = Math.min(24, Math.max(10, Math.ceil(Math.log2(body.length + 16))));
    return brotliCompressSync(body, {
      params: {
        [constants.BROTLI_PARAM_QUALITY]: levels.brotliQuality,
        ...(levels === LEVELS.kept ? { [constants.BROTLI_PARAM_LGWIN]: window } : {}),
      },
    });
  }
  if (encoding === 'gzip') return gzipSync(body, { level: levels.zlibLevel });
  return deflateSync(body, { level: levels.zlibLevel });
}

/** Headers of an answer but the connection's own. */
function answerHeaders(headers: Raw['headers']): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers))
    if (!['date', 'connection', 'keep-alive', 'transfer-encoding'].includes(name))
      kept[name] = String(value);
  return kept;
}

/** A never-seen context's request on each evaluation route: `GET` (query) or `POST` (body). */
function evaluationRequests(session: string): { path: string; body?: string }[] {
  const context = { ...(realisticContexts(1)[0] as object), sessionId: session };
  const query = new URLSearchParams({ userId: 'user-3', sessionId: session });
  return [
    { path: `/proxy?${query}` },
    { path: `/api/frontend?${query}` },
    { path: '/proxy', body: JSON.stringify({ context }) },
    { path: '/api/frontend', body: JSON.stringify(context) },
  ];
}

async function listening(compression: boolean): Promise<Listening> {
  const run = await startProxy(
    realisticPayload(200),
    { compression, metricsInterval: 0 },
    { listen: true },
  );
  await waitFor(() => run.proxy.environments.ready);
  return run;
}

describe('compression', () => {
  let on: Listening;
  let off: Listening;
  before(async () => {
    [on, off] = await Promise.all([listening(true), listening(false)]);
  });
  after(async () => {
    await Promise.all([on.close(), off.close()]);
  });

  it('compresses evaluation answers in the encoding accepted, to the same JSON and ETag', async () => {
    const path = '/proxy?userId=user-1&properties[region]=eu';
    const plain = await raw(on.base, path, {});
    assert.equal(plain.status, 200);
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.ok(plain.body.length > 1024);
    const gzip = await raw(on.base, path, { 'accept-encoding': 'gzip' });
    assert.equal(gzip.headers['content-encoding'], 'gzip');
    assert.deepEqual(
      JSON.parse(gunzipSync(gzip.body).toString()),
      JSON.parse(plain.body.toString()),
    );
    assert.ok(
      gzip.body.length * 3 < plain.body.length,
      `${gzip.body.length} of ${plain.body.length}`,
    );
    assert.equal(gzip.headers.etag, plain.headers.etag);
    assert.match(String(gzip.headers.vary), /accept-encoding/i);
    const br = await raw(on.base, path, { 'accept-encoding': 'br;q=1, gzip;q=0.5' });
    assert.equal(br.headers['content-encoding'], 'br');
    assert.deepEqual(
      JSON.parse(brotliDecompressSync(br.body).toString()),
      JSON.parse(plain.body.toString()),
    );
    // A known ETag is still a 304, without a body.
    const again = await raw(on.base, path, {
      'accept-encoding': 'gzip',
      'if-none-match': String(plain.headers.etag),
    });
    assert.equal(again.status, 304);
    assert.equal(again.body.length, 0);
  });

  it('names every header once in Vary, Accept-Encoding among them', async () => {
    const names = (vary: unknown) =>
      String(vary)
        .toLowerCase()
        .split(/\s*,\s*/);
    const evaluation = await raw(on.base, '/proxy?userId=user-1', { 'accept-encoding': 'gzip' });
    const ofrep = await request(`${on.base}/ofrep/v1/evaluate/flags`, {
      method: 'POST',
      headers: {
        authorization: CLIENT_KEY,
        'accept-encoding': 'gzip',
        'content-type': 'application/json',
      },
      body: JSON.stringify({ context: { targetingKey: 'user-1' } }),
    });
    await ofrep.body.dump();
    assert.equal(evaluation.headers['content-encoding'], 'gzip');
    assert.equal(ofrep.headers['content-encoding'], 'gzip');
    for (const vary of [evaluation.headers.vary, ofrep.headers.vary]) {
      const listed = names(vary);
      assert.ok(listed.includes('accept-encoding'), String(vary));
      assert.deepEqual(listed, [...new Set(listed)], String(vary));
    }
  });

  it('keeps a compressed copy of a kept answer per encoding asked for, never sending one to another', async () => {
    const path = '/proxy?userId=user-7&properties[region]=us';
    const plain = await raw(on.base, path, {});
    const decoded = (answer: Raw): unknown => {
      const encoding = answer.headers['content-encoding'];
      if (encoding === 'br') return JSON.parse(brotliDecompressSync(answer.body).toString());
      if (encoding === 'gzip') return JSON.parse(gunzipSync(answer.body).toString());
      if (encoding === 'deflate') return JSON.parse(inflateSync(answer.body).toString());
      return JSON.parse(answer.body.toString());
    };
    // Several rounds: the answer is kept from its second request on, its copies after that. The
    // first two are rendered, so gzip comes first where it is taken (joined from pieces).
    for (let round = 0; round < 4; round++) {
      for (const [accepted, expected] of [
        ['gzip, deflate, br', round === 0 ? 'gzip' : 'br'],
        ['gzip', 'gzip'],
        ['deflate', 'deflate'],
        ['identity', undefined],
        ['br;q=0, gzip', 'gzip'],
      ] as const) {
        const answer = await raw(on.base, path, { 'accept-encoding': accepted });
        assert.equal(answer.status, 200);
        assert.equal(answer.headers['content-encoding'], expected, `${accepted}, round ${round}`);
        assert.deepEqual(decoded(answer), JSON.parse(plain.body.toString()));
        assert.equal(answer.headers.etag, plain.headers.etag);
        assert.equal(Number(answer.headers['content-length']), answer.body.length);
      }
      const refused = await raw(on.base, path, {
        'accept-encoding': 'gzip',
        'x-no-compression': '1',
      });
      assert.equal(refused.headers['content-encoding'], undefined);
      assert.deepEqual(JSON.parse(refused.body.toString()), JSON.parse(plain.body.toString()));
    }
  });

  it('every encoding decodes to the uncompressed answer, for never-seen contexts and kept ones', async () => {
    const front = on.proxy.app.evaluationFront;
    assert.ok(front, 'the evaluation front stays on with compression');
    let session = 0;
    for (const encoding of ['br', 'gzip', 'deflate']) {
      for (const [index, { path, body }] of evaluationRequests(`decode-${encoding}`).entries()) {
        const what = `${body === undefined ? 'GET' : 'POST'} ${path} (${encoding})`;
        // Never-seen contexts: each request a new session.
        for (let i = 0; i < 3; i++) {
          const fresh = evaluationRequests(`fresh-${session++}`)[index] as {
            path: string;
            body?: string;
          };
          const answer = await raw(
            on.base,
            fresh.path,
            { 'accept-encoding': encoding },
            fresh.body,
          );
          const plain = await raw(on.base, fresh.path, {}, fresh.body);
          assert.equal(answer.headers['content-encoding'], encoding, what);
          assert.ok(decoded(answer).equals(plain.body), what);
          assert.equal(answer.headers.etag, plain.headers.etag, what);
        }
        // One context over and over: rendered, then kept (from its second request on).
        const plain = await raw(on.base, path, {}, body);
        for (let i = 0; i < 4; i++) {
          const answer = await raw(on.base, path, { 'accept-encoding': encoding }, body);
          assert.equal(answer.headers['content-encoding'], encoding, what);
          assert.ok(decoded(answer).equals(plain.body), `${what}, request ${i + 1}`);
          assert.equal(answer.headers.etag, plain.headers.etag, what);
          assert.equal(Number(answer.headers['content-length']), answer.body.length, what);
        }
      }
    }
  });

  it('compresses as the routes do in the evaluation front: fast for fresh answers, smaller for kept ones', async () => {
    const front = on.proxy.app.evaluationFront;
    assert.ok(front);
    for (const encoding of ['br', 'gzip', 'deflate']) {
      for (const { path, body } of evaluationRequests(`levels-${encoding}`)) {
        const what = `${body === undefined ? 'GET' : 'POST'} ${path} (${encoding})`;
        const headers = { 'accept-encoding': encoding };
        const answeredBefore: number = front.answered;
        // 1: rendered by the front; 2: rendered by the routes (and kept); 3, 4: kept.
        const first = await raw(on.base, path, headers, body);
        const second = await injected(on, path, headers, body);
        const third = await raw(on.base, path, headers, body);
        const fourth = await injected(on, path, headers, body);
        assert.equal(front.answered - answeredBefore, 2, what);
        const plain = decoded(first);
        // Gzip is joined from pieces (joined-gzip.test.ts), the others compressed whole.
        if (encoding === 'gzip')
          assert.ok(!first.body.equals(compressed(encoding, plain, LEVELS.dynamic)), what);
        else assert.ok(first.body.equals(compressed(encoding, plain, LEVELS.dynamic)), what);
        assert.ok(second.body.equals(first.body), what);
        assert.ok(third.body.equals(compressed(encoding, plain, LEVELS.kept)), what);
        assert.ok(fourth.body.equals(third.body), what);
        assert.deepEqual(answerHeaders(second.headers), answerHeaders(first.headers), what);
        assert.deepEqual(answerHeaders(fourth.headers), answerHeaders(third.headers), what);
        assert.equal(first.headers.vary, 'Accept-Encoding, Authorization', what);
      }
    }
  });

  it('sends answers under 1 KB as they are, and compresses those from 1 KB on', async () => {
    const named = (toggles: string[]) => JSON.stringify({ context: { userId: 'user-1' }, toggles });
    const small = await raw(
      on.base,
      '/proxy',
      { 'accept-encoding': 'gzip' },
      named(['search.flag-1', 'checkout.flag-0']),
    );
    assert.equal(small.status, 200);
    assert.ok(small.body.length < 1024, String(small.body.length));
    assert.equal(small.headers['content-encoding'], undefined);
    // Unknown names answer ~100 bytes each: enough of them pass the threshold.
    const many = Array.from({ length: 20 }, (_, i) => `unknown-flag-${i}`);
    const large = await raw(on.base, '/proxy', { 'accept-encoding': 'gzip' }, named(many));
    const plain = await raw(on.base, '/proxy', {}, named(many));
    assert.ok(plain.body.length >= 1024, String(plain.body.length));
    assert.equal(large.headers['content-encoding'], 'gzip');
    assert.ok(gunzipSync(large.body).equals(plain.body));
  });

  it('sends small answers as they are, and nothing compressed when it is off (the default)', async () => {
    const small = await raw(on.base, '/proxy/health', { 'accept-encoding': 'gzip' });
    assert.equal(small.status, 200);
    assert.equal(small.headers['content-encoding'], undefined);
    const plain = await raw(off.base, '/proxy?userId=user-1', { 'accept-encoding': 'gzip, br' });
    assert.equal(plain.status, 200);
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.ok(JSON.parse(plain.body.toString()).toggles.length > 0);
    assert.equal(off.proxy.config.compression, false);
  });
});

describe('AnswerCompression', () => {
  /** JSON of `count` flags as the answers write them, and bytes that do not compress at all. */
  const bodies = (): { what: string; body: Buffer }[] => [
    ...[16, 200, 1000, 5000].map((count) => ({
      what: `${count} flags`,
      body: Buffer.from(
        JSON.stringify({
          toggles: Array.from({ length: count }, (_, i) => ({
            name: `team-${i % 17}.flag-${i}`,
            enabled: true,
            variant: { name: i % 3 ? 'control' : `v${i}`, enabled: i % 3 === 0 },
            impressionData: i % 5 === 0,
          })),
        }),
      ),
    })),
    // Output larger than the body: many output chunks, joined.
    { what: 'random bytes', body: randomBytes(40_000) },
  ];
  const decode = (encoding: string, bytes: Buffer): Buffer =>
    encoding === 'br'
      ? brotliDecompressSync(bytes)
      : encoding === 'gzip'
        ? gunzipSync(bytes)
        : inflateSync(bytes);

  it('encodes every body so that it decodes byte for byte, fresh and kept, small and large', () => {
    const compression = new AnswerCompression(new AnswerWriter());
    for (const { what, body } of bodies()) {
      for (const encoding of ['br', 'gzip', 'deflate']) {
        const headers = { 'accept-encoding': encoding };
        for (const kept of [false, true]) {
          const encoded = compression.encode(headers, body, kept);
          const label = `${what}, ${encoding}, ${kept ? 'kept' : 'fresh'}`;
          assert.equal(encoded?.encoding, encoding, label);
          assert.ok(decode(encoding, encoded.body).equals(body), label);
          assert.ok(
            encoded.body.equals(compressed(encoding, body, kept ? LEVELS.kept : LEVELS.dynamic)),
            label,
          );
        }
      }
    }
  });

  it('gives kept brotli copies a window that holds the body, no larger', () => {
    const compression = new AnswerCompression(new AnswerWriter());
    for (const { what, body } of bodies()) {
      const encoded = compression.encode({ 'accept-encoding': 'br' }, body, true);
      assert.ok(encoded !== undefined, what);
      // RFC 7932 §9.1: the first bits of the stream give the window (0: 16 bits; else 17–24
      // in three more bits, or 10–15 in seven); decoding with it proves it holds the body.
      const window = brotliWindowBits(encoded.body);
      assert.ok(2 ** window - 16 >= body.length, `${what}: ${window} bits`);
      assert.ok(window === 10 || 2 ** (window - 1) - 16 < body.length, `${what}: ${window} bits`);
    }
  });
});

/** The window size a brotli stream declares (RFC 7932 §9.1, WBITS). */
function brotliWindowBits(stream: Buffer): number {
  const first = stream[0] as number;
  if ((first & 1) === 0) return 16;
  const three = (first >> 1) & 0b111;
  if (three !== 0) return 17 + three;
  const seven = (first >> 4) & 0b111;
  // Seven zero bits mean 17; otherwise 8 + the three bits (10–15).
  return seven === 0 ? 17 : 8 + seven;
}
