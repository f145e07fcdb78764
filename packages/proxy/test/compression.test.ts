import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import { request } from 'undici';
import { realisticPayload } from './fixtures/realistic.js';
import { CLIENT_KEY, type Listening, startProxy, waitFor } from './helpers/proxy.js';

/** `compression`: answers over 1 KB in the encoding the caller accepts, over real sockets. */

interface Raw {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: Buffer;
}

async function raw(base: string, path: string, headers: Record<string, string>): Promise<Raw> {
  const response = await request(`${base}${path}`, {
    headers: { authorization: CLIENT_KEY, ...headers },
  });
  return {
    status: response.statusCode,
    headers: response.headers,
    body: Buffer.from(await response.body.arrayBuffer()),
  };
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
    // Several rounds: the answer is kept from its second request on, its copies after that.
    for (let round = 0; round < 4; round++) {
      for (const [accepted, expected] of [
        ['gzip, deflate, br', 'br'],
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
