import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createProxy, type ProxyApp, type ProxyOptions } from '@flags/proxy';
import { request } from 'undici';
import { rawRequest } from '../../../test/helpers/hostile.js';
import { realisticContexts, realisticPayload } from './fixtures/realistic.js';
import { EdgeUpstream, onFeature } from './helpers/edge-upstream.js';
import { CLIENT_KEY, type Listening, startProxy, waitFor } from './helpers/proxy.js';

/**
 * The evaluation front answers `GET /proxy`, `/api/frontend` and `/api/proxy` before Fastify,
 * over real sockets only (`inject` never reaches it). Every request here goes over a socket and
 * through `inject` alike, three times (a never-seen context, its second sighting, then the kept
 * answer), and the two answers must be the same: status, headers (all but the connection's own),
 * body. Each case also says whether the front answers it or hands it to Fastify.
 */

interface Seen {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

/** Headers that belong to the connection or the moment, not to the answer. */
const TRANSPORT = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding']);

function answerHeaders(headers: Record<string, unknown>): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (!TRANSPORT.has(name)) kept[name] = String(value);
  }
  return kept;
}

type Method = 'GET' | 'HEAD' | 'POST';

async function overSocket(
  base: string,
  method: Method,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<Seen> {
  const response = await request(`${base}${path}`, { method, headers, body });
  return {
    status: response.statusCode,
    headers: answerHeaders(response.headers),
    body: await response.body.text(),
  };
}

async function injected(
  app: ProxyApp['app'],
  method: Method,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<Seen> {
  const response = await app.inject({ method, url: path, headers, payload: body });
  return {
    status: response.statusCode,
    headers: answerHeaders(response.headers),
    body: response.payload,
  };
}

interface Case {
  readonly name: string;
  readonly path: string;
  readonly headers?: Record<string, string>;
  readonly method?: Method;
  /** A `POST` body. */
  readonly body?: string;
  /** How many of the three requests the front answers (0: Fastify answers them all). */
  readonly answered: number;
  readonly status: number;
}

/**
 * Sends each case three times over a socket and by `inject`; asserts equal answers, the expected
 * status, and how many the front answered.
 */
async function compare(run: { base: string; app: ProxyApp['app'] }, cases: readonly Case[]) {
  const front = run.app.evaluationFront;
  assert.ok(front, 'the front is installed');
  for (const item of cases) {
    const answeredBefore: number = front.answered;
    for (let round = 0; round < 3; round++) {
      const method = item.method ?? 'GET';
      const headers = item.headers ?? {};
      const socket = await overSocket(run.base, method, item.path, headers, item.body);
      const inject = await injected(run.app, method, item.path, headers, item.body);
      assert.deepEqual(socket, inject, `${item.name}, request ${round + 1}`);
      assert.equal(socket.status, item.status, `${item.name}: status`);
    }
    assert.equal(
      front.answered - answeredBefore,
      item.answered,
      `${item.name}: answered by the front`,
    );
  }
}

function contextQuery(index: number, session: string): string {
  const context = realisticContexts(index + 1)[index] as ReturnType<typeof realisticContexts>[0];
  const query = new URLSearchParams({
    userId: context.userId,
    sessionId: session,
    remoteAddress: context.remoteAddress,
  });
  for (const [name, value] of Object.entries(context.properties))
    query.append(`properties[${name}]`, value);
  return query.toString();
}

const key = { authorization: CLIENT_KEY };
/** The key and the type SDKs send with a `POST` body. */
const json = { ...key, 'content-type': 'application/json' };

describe('evaluation front (configured client key, default options)', () => {
  let run: Listening;
  let etag: string;
  before(async () => {
    run = await startProxy(realisticPayload(200), { metricsInterval: 0 }, { listen: true });
    await waitFor(async () => (await run.proxy.app.inject('/proxy/health')).statusCode === 200);
    const first = await run.proxy.app.inject({
      url: `/proxy?${contextQuery(0, 'etag')}`,
      headers: key,
    });
    etag = first.headers.etag as string;
  });
  after(() => run.close());

  it('answers the evaluation GETs as the routes do, kept or rendered', async () => {
    await compare({ base: run.base, app: run.proxy.app }, [
      {
        name: '/proxy',
        path: `/proxy?${contextQuery(1, 'a')}`,
        headers: key,
        answered: 3,
        status: 200,
      },
      {
        name: '/api/frontend',
        path: `/api/frontend?${contextQuery(2, 'b')}`,
        headers: key,
        answered: 3,
        status: 200,
      },
      {
        name: '/api/proxy',
        path: `/api/proxy?${contextQuery(3, 'c')}`,
        headers: key,
        answered: 3,
        status: 200,
      },
      {
        name: 'Bearer key',
        path: `/api/frontend?${contextQuery(4, 'd')}`,
        headers: { authorization: `Bearer ${CLIENT_KEY}` },
        answered: 3,
        status: 200,
      },
      {
        name: 'encoded and odd parameters',
        path: '/proxy?userId=%E2%9C%93%20x&properties%5Bplan%5D=pro&=x&&plan&properties[__proto__]=1&constructor=2&currentTime=2030-01-01',
        headers: key,
        answered: 3,
        status: 200,
      },
      {
        name: 'matching If-None-Match',
        path: `/proxy?${contextQuery(0, 'etag')}`,
        headers: { ...key, 'if-none-match': etag },
        answered: 3,
        status: 304,
      },
      {
        name: 'other If-None-Match',
        path: `/proxy?${contextQuery(0, 'etag')}`,
        headers: { ...key, 'if-none-match': 'W/"other", "more"' },
        answered: 3,
        status: 200,
      },
      {
        name: 'browser Origin',
        path: `/api/frontend?${contextQuery(5, 'e')}`,
        headers: { ...key, origin: 'https://app.example' },
        answered: 3,
        status: 200,
      },
    ]);
  });

  it('hands every other request to the routes', async () => {
    await compare({ base: run.base, app: run.proxy.app }, [
      { name: 'no key', path: `/proxy?${contextQuery(6, 'f')}`, answered: 0, status: 401 },
      {
        name: 'unknown key',
        path: `/api/frontend?${contextQuery(6, 'f')}`,
        headers: { authorization: 'nope' },
        answered: 0,
        status: 403,
      },
      {
        name: 'repeated parameter',
        path: '/proxy?userId=a&userId=b',
        headers: key,
        answered: 0,
        status: 400,
      },
      {
        name: 'properties as a value',
        path: '/proxy?properties=x',
        headers: key,
        answered: 0,
        status: 400,
      },
      {
        name: 'trailing slash',
        path: `/proxy/?${contextQuery(7, 'g')}`,
        headers: key,
        answered: 0,
        status: 200,
      },
      {
        name: 'double slash',
        path: `//api/frontend?${contextQuery(7, 'g')}`,
        headers: key,
        answered: 0,
        status: 200,
      },
      {
        name: 'encoded path',
        path: `/prox%79?${contextQuery(7, 'g')}`,
        headers: key,
        answered: 0,
        status: 200,
      },
      {
        name: 'HEAD',
        method: 'HEAD',
        path: `/proxy?${contextQuery(8, 'h')}`,
        headers: key,
        answered: 0,
        status: 200,
      },
      {
        name: 'all toggles',
        path: `/proxy/all?${contextQuery(8, 'h')}`,
        headers: key,
        answered: 0,
        status: 501,
      },
      { name: 'health', path: '/proxy/health', answered: 0, status: 200 },
    ]);
  });

  it('answers the evaluation POSTs as the routes do, kept, rendered or refused', async () => {
    const context = (index: number, session: string) => ({
      ...(realisticContexts(index + 1)[index] as object),
      sessionId: session,
    });
    const etagOf = async (url: string, payload: string) =>
      (await run.proxy.app.inject({ method: 'POST', url, headers: json, payload })).headers
        .etag as string;
    const bare = JSON.stringify(context(0, 'post-etag'));
    const wrapped = JSON.stringify({ context: context(0, 'post-etag') });
    const apiEtag = await etagOf('/api/frontend', bare);
    const proxyEtag = await etagOf('/proxy', wrapped);
    await compare({ base: run.base, app: run.proxy.app }, [
      {
        name: 'POST /proxy { context }',
        method: 'POST',
        path: '/proxy',
        headers: json,
        body: JSON.stringify({ context: context(1, 'pa') }),
        answered: 3,
        status: 200,
      },
      {
        name: 'POST /api/frontend with a bare context, in name order',
        method: 'POST',
        path: '/api/frontend',
        headers: { ...key, 'content-type': 'Application/JSON; charset=UTF-8' },
        body: JSON.stringify(context(2, 'pb')),
        answered: 3,
        status: 200,
      },
      {
        name: 'POST /api/proxy with named toggles, known and unknown',
        method: 'POST',
        path: '/api/proxy?ignored=1',
        headers: json,
        body: JSON.stringify({
          context: context(3, 'pc'),
          toggles: ['search.flag-1', 'nope', 'checkout.flag-0'],
        }),
        answered: 3,
        status: 200,
      },
      {
        name: 'POST /api/frontend naming its ETag',
        method: 'POST',
        path: '/api/frontend',
        headers: { ...json, 'if-none-match': apiEtag },
        body: bare,
        answered: 3,
        status: 304,
      },
      {
        name: 'POST /proxy naming its ETag (Unleash Proxy never answered 304 to a POST)',
        method: 'POST',
        path: '/proxy',
        headers: { ...json, 'if-none-match': proxyEtag },
        body: wrapped,
        answered: 3,
        status: 200,
      },
      {
        name: 'POST of a body that is not JSON',
        method: 'POST',
        path: '/proxy',
        headers: json,
        body: '{"context": ',
        answered: 3,
        status: 400,
      },
      {
        name: 'POST of a list',
        method: 'POST',
        path: '/api/frontend',
        headers: json,
        body: '[1]',
        answered: 3,
        status: 400,
      },
      {
        name: 'POST of a context that is not an object',
        method: 'POST',
        path: '/proxy',
        headers: json,
        body: '{"context":"x"}',
        answered: 3,
        status: 400,
      },
      {
        name: 'POST with toggles that are not a list',
        method: 'POST',
        path: '/proxy',
        headers: json,
        body: '{"toggles":"a"}',
        answered: 3,
        status: 400,
      },
      {
        name: 'POST with a __proto__ key',
        method: 'POST',
        path: '/proxy',
        headers: json,
        body: '{"context":{"__proto__":{"x":1}}}',
        answered: 3,
        status: 400,
      },
      {
        name: 'POST with a context field that is not a string',
        method: 'POST',
        path: '/proxy',
        headers: json,
        body: '{"context":{"userId":{"a":1}}}',
        answered: 3,
        status: 400,
      },
    ]);
  });

  it('answers a POST without a context (an empty or blank body) as the routes do', async () => {
    // No userId or sessionId: the realistic rollouts draw at random, so only the shape compares.
    const front = run.proxy.app.evaluationFront;
    assert.ok(front);
    for (const body of ['', ' \n\t ']) {
      const answeredBefore: number = front.answered;
      const socket = await overSocket(run.base, 'POST', '/proxy', json, body);
      const inject = await injected(run.proxy.app, 'POST', '/proxy', json, body);
      assert.equal(front.answered - answeredBefore, 1, JSON.stringify(body));
      assert.equal(socket.status, 200, JSON.stringify(body));
      assert.equal(inject.status, 200, JSON.stringify(body));
      assert.deepEqual(Object.keys(socket.headers).sort(), Object.keys(inject.headers).sort());
      assert.ok(Array.isArray(JSON.parse(socket.body).toggles));
    }
  });

  it("answers a POST whose body comes in the headers' packet, after them or in pieces", async () => {
    const front = run.proxy.app.evaluationFront;
    assert.ok(front);
    const { port } = new URL(run.base);
    const body = JSON.stringify({
      context: { userId: 'user-7', sessionId: 'pieces', properties: { plan: 'pro' } },
    });
    const head =
      `POST /proxy HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${CLIENT_KEY}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      'Connection: close\r\n\r\n';
    const expected = await injected(run.proxy.app, 'POST', '/proxy', json, body);
    assert.equal(expected.status, 200);
    const cut = Math.floor(body.length / 2);
    for (const pieces of [
      [head + body],
      [head, body],
      [head, body.slice(0, cut), body.slice(cut)],
    ]) {
      const answeredBefore: number = front.answered;
      const answer = await rawRequest(Number(port), pieces);
      assert.equal(answer.status, 200, `${pieces.length} piece(s)`);
      assert.equal(answer.body, expected.body, `${pieces.length} piece(s)`);
      assert.equal(front.answered - answeredBefore, 1, `${pieces.length} piece(s)`);
    }
  });

  it('refuses odd POST bodies as the routes do', async () => {
    // Valid bodies cut short or with one character changed: mostly refusals, whose status and
    // body must match; the few that still parse may lose the ids and draw at random, so for a
    // 200 only the status and header names compare.
    const valid = JSON.stringify({
      context: { userId: 'user-9', sessionId: 'odd', properties: { plan: 'pro', seats: '3' } },
      toggles: ['search.flag-1'],
    });
    const odd = ['{', '"', ':', ',', '[', ']', '}', '\\', '0', 'n', ' ', '\u00e9', '\ud83d'];
    const bodies: string[] = [];
    for (let i = 1; i < valid.length; i += 7) {
      bodies.push(valid.slice(0, i));
      bodies.push(`${valid.slice(0, i)}${odd[i % odd.length]}${valid.slice(i + 1)}`);
    }
    const front = run.proxy.app.evaluationFront;
    assert.ok(front);
    const answeredBefore: number = front.answered;
    for (const body of bodies) {
      const socket = await overSocket(run.base, 'POST', '/api/frontend', json, body);
      const inject = await injected(run.proxy.app, 'POST', '/api/frontend', json, body);
      assert.equal(socket.status, inject.status, body);
      assert.deepEqual(
        Object.keys(socket.headers).sort(),
        Object.keys(inject.headers).sort(),
        body,
      );
      if (socket.status !== 200) assert.equal(socket.body, inject.body, body);
    }
    assert.equal(front.answered - answeredBefore, bodies.length);
    assert.ok(bodies.length > 20);
  });

  it('hands the other POSTs to the routes', async () => {
    await compare({ base: run.base, app: run.proxy.app }, [
      {
        name: 'POST of another type',
        method: 'POST',
        path: '/proxy',
        headers: { ...key, 'content-type': 'text/plain' },
        body: '{}',
        answered: 0,
        status: 415,
      },
      {
        name: 'POST without a type',
        method: 'POST',
        path: '/proxy',
        headers: key,
        body: JSON.stringify({ context: { userId: 'user-7', sessionId: 'no-type' } }),
        answered: 0,
        status: 200,
      },
      {
        name: 'POST over the body limit',
        method: 'POST',
        path: '/proxy',
        headers: json,
        body: JSON.stringify({ context: { userId: 'x'.repeat(1_100_000) } }),
        answered: 0,
        status: 413,
      },
      {
        name: 'POST without a key',
        method: 'POST',
        path: '/proxy',
        headers: { 'content-type': 'application/json' },
        body: '{}',
        answered: 0,
        status: 401,
      },
      {
        name: 'POST of one flag',
        method: 'POST',
        path: '/proxy/features/search.flag-1',
        headers: json,
        body: '{}',
        answered: 0,
        status: 404,
      },
    ]);
  });

  it('hands a request to the routes when it fails before answering', async () => {
    const front = run.proxy.app.evaluationFront;
    assert.ok(front);
    const serve = front.serve;
    front.serve = () => {
      throw new Error('a bug in the front');
    };
    try {
      const path = `/proxy?${contextQuery(10, 'fails')}`;
      const answer = await overSocket(run.base, 'GET', path, key);
      assert.deepEqual(answer, await injected(run.proxy.app, 'GET', path, key));
      assert.equal(answer.status, 200);
    } finally {
      front.serve = serve;
    }
  });

  it('counts its answers in the duration histogram as the routes do', async () => {
    const earlier = await run.proxy.app.inject('/proxy/internal-backstage/prometheus');
    const count = (text: string) =>
      Number(
        /flags_proxy_http_request_duration_seconds_count\{route="\/proxy",method="GET",status="200"\} (\d+)/.exec(
          text,
        )?.[1] ?? 0,
      );
    for (let i = 0; i < 5; i++)
      await overSocket(run.base, 'GET', `/proxy?${contextQuery(9, `m${i}`)}`, key);
    const posts = (text: string) =>
      Number(
        /flags_proxy_http_request_duration_seconds_count\{route="\/proxy",method="POST",status="200"\} (\d+)/.exec(
          text,
        )?.[1] ?? 0,
      );
    for (let i = 0; i < 3; i++) {
      await overSocket(
        run.base,
        'POST',
        '/proxy',
        json,
        JSON.stringify({ context: { userId: 'user-3', sessionId: `post-m${i}` } }),
      );
    }
    const afterwards = await run.proxy.app.inject('/proxy/internal-backstage/prometheus');
    assert.equal(count(afterwards.payload) - count(earlier.payload), 5);
    assert.equal(posts(afterwards.payload) - posts(earlier.payload), 3);
  });
});

describe('evaluation front with other options', () => {
  it('writes the fixed cross-origin headers of other CORS settings, under a base path, with no cache', async () => {
    const run = await startProxy(
      realisticPayload(20),
      {
        metricsInterval: 0,
        answerCacheBytes: 0,
        proxyBasePath: '/edge',
        cors: { credentials: true, exposedHeaders: ['ETag', 'X-Extra'] },
      } as ProxyOptions,
      { listen: true },
    );
    try {
      await waitFor(
        async () => (await run.proxy.app.inject('/edge/proxy/health')).statusCode === 200,
      );
      await compare({ base: run.base, app: run.proxy.app }, [
        {
          name: 'credentials',
          path: `/edge/proxy?${contextQuery(1, 'a')}`,
          headers: { ...key, origin: 'https://a.example' },
          answered: 3,
          status: 200,
        },
        {
          name: 'outside the base path',
          path: `/proxy?${contextQuery(1, 'a')}`,
          headers: key,
          answered: 0,
          status: 404,
        },
      ]);
    } finally {
      await run.close();
    }
  });

  it('is left out where answers depend on more than it reads', async () => {
    for (const options of [
      { cors: { origin: ['https://a.example'] } },
      { trustProxy: true },
      { expCustomEnrichers: [(context: object) => context] },
    ] as ProxyOptions[]) {
      const run = await startProxy(realisticPayload(5), { metricsInterval: 0, ...options });
      try {
        assert.equal(run.proxy.app.evaluationFront, undefined, JSON.stringify(options));
      } finally {
        await run.close();
      }
    }
  });

  it('hands requests to the routes before the first sync (503)', async () => {
    const run = await startProxy(
      realisticPayload(5),
      { metricsInterval: 0 },
      {
        listen: true,
        upstream: (upstream) => {
          upstream.mode = 'error500';
        },
      },
    );
    try {
      await compare({ base: run.base, app: run.proxy.app }, [
        { name: 'not ready', path: '/proxy?userId=1', headers: key, answered: 0, status: 503 },
      ]);
    } finally {
      await run.close();
    }
  });
});

describe('evaluation front with Unleash-format tokens', () => {
  const SECRET = 'b'.repeat(32);
  const DEV_CLIENT = `*:development.dev-client-${SECRET}`;
  const DEV_FRONTEND = `*:development.dev-frontend-${SECRET}`;
  const WEB_FRONTEND = `web:development.web-frontend-${SECRET}`;
  let upstream: EdgeUpstream;
  let proxy: ProxyApp;
  let base: string;
  before(async () => {
    upstream = new EdgeUpstream(
      new Map([
        [
          'development',
          {
            version: 2,
            features: [onFeature('zeta'), onFeature('alpha', 'web'), onFeature('beta', 'web')],
          },
        ],
      ]),
    );
    upstream.tokens.set(DEV_CLIENT, {
      type: 'client',
      environment: 'development',
      projects: ['*'],
    });
    upstream.tokens.set(DEV_FRONTEND, {
      type: 'frontend',
      environment: 'development',
      projects: ['*'],
    });
    await upstream.start();
    proxy = await createProxy({
      flagsUrl: upstream.url,
      flagsApiToken: [DEV_CLIENT],
      pretrustedTokens: [WEB_FRONTEND],
      clientKeys: [CLIENT_KEY],
      refreshInterval: 50,
      metricsInterval: 0,
    });
    await proxy.app.listen({ port: 0, host: '127.0.0.1' });
    const address = proxy.app.server.address() as { port: number };
    base = `http://127.0.0.1:${address.port}`;
    await waitFor(async () => (await proxy.app.inject('/proxy/health')).statusCode === 200);
  });
  after(async () => {
    await proxy.app.close();
    await upstream.stop();
  });

  it('answers a request without a context (flags that need none)', async () => {
    await compare({ base, app: proxy.app }, [
      { name: 'no query', path: '/proxy', headers: key, answered: 3, status: 200 },
      { name: 'empty query', path: '/api/frontend?', headers: key, answered: 3, status: 200 },
      {
        name: 'a query without values',
        path: '/api/proxy?&&=',
        headers: key,
        answered: 3,
        status: 200,
      },
    ]);
  });

  it('answers a project-scoped pretrusted token with its projects only', async () => {
    await compare({ base, app: proxy.app }, [
      {
        name: 'web token',
        path: '/api/frontend?userId=1',
        headers: { authorization: WEB_FRONTEND },
        answered: 3,
        status: 200,
      },
    ]);
    const answer = await overSocket(base, 'GET', '/api/frontend?userId=2', {
      authorization: WEB_FRONTEND,
    });
    assert.deepEqual(
      JSON.parse(answer.body).toggles.map((toggle: { name: string }) => toggle.name),
      ['alpha', 'beta'],
    );
  });

  it('answers a token validated upstream once the validation is known, and refuses client tokens', async () => {
    const path = '/api/frontend?userId=3';
    const headers = { authorization: DEV_FRONTEND };
    // The first request asks the upstream (through the route's hook); the rest are known.
    const first = await overSocket(base, 'GET', path, headers);
    assert.equal(first.status, 200);
    await compare({ base, app: proxy.app }, [
      { name: 'validated token', path, headers, answered: 3, status: 200 },
      {
        name: 'client token',
        path,
        headers: { authorization: DEV_CLIENT },
        answered: 0,
        status: 403,
      },
    ]);
  });
});
