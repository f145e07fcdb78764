import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import SwaggerParser from '@apidevtools/swagger-parser';
import { chromium } from 'playwright-core';
import { smallPayload } from './fixtures/small.js';
import { call, type Listening, type Running, startProxy, withKey } from './helpers/proxy.js';

const CHROMIUM = '/usr/bin/chromium';

/** Every operation the proxy serves, as the document must list them. */
const OPERATIONS = [
  'get /proxy',
  'post /proxy',
  'get /proxy/all',
  'post /proxy/all',
  'get /proxy/health',
  'get /proxy/internal-backstage/prometheus',
  'get /proxy/client/features',
  'post /proxy/client/metrics',
  'post /proxy/all/client/metrics',
  'post /proxy/client/register',
  'post /ofrep/v1/evaluate/flags',
  'post /ofrep/v1/evaluate/flags/{key}',
  'get /ofrep/v1/events',
  'get /proxy/features/{name}',
  'post /proxy/features/{name}',
  // Unleash Edge's routes.
  ...['/api/frontend', '/api/proxy'].flatMap((mount) => [
    `get ${mount}`,
    `post ${mount}`,
    `get ${mount}/all`,
    `post ${mount}/all`,
    `get ${mount}/features/{name}`,
    `post ${mount}/features/{name}`,
    `post ${mount}/client/metrics`,
    `post ${mount}/all/client/metrics`,
    `post ${mount}/client/register`,
    `post ${mount}/all/client/register`,
  ]),
  'get /api/client/features',
  'post /api/client/features',
  'get /api/client/features/{name}',
  'get /api/client/delta',
  'get /api/client/streaming',
  'post /api/client/metrics',
  'post /api/client/metrics/bulk',
  'post /api/client/metrics/edge',
  'post /api/client/register',
  'get /proxy/client/features/{name}',
  'get /internal-backstage/health',
  'get /internal-backstage/ready',
  'get /internal-backstage/tokens',
  'get /internal-backstage/features',
  'get /internal-backstage/metricsbatch',
  'get /internal-backstage/instancedata',
  'get /internal-backstage/metrics',
].sort();

describe('OpenAPI', () => {
  let run: Listening;
  let plain: Running;
  before(async () => {
    // Listening for the browser that renders the UI; the other tests inject.
    run = await startProxy(
      smallPayload,
      {
        enableOAS: true,
        enableAllEndpoint: true,
        enableFeaturesEndpoint: true,
        clientKeysHeaderName: 'X-Client-Key',
      },
      {
        listen: true,
        upstream: (upstream) => {
          upstream.mode = 'error500';
        },
      },
    );
    plain = await startProxy(smallPayload, { enableAllEndpoint: true });
  });
  after(async () => {
    await run.close();
    await plain.close();
  });

  it('serves a valid OpenAPI 3 document listing every route, before the first sync too', async () => {
    assert.equal((await call(run, 'GET', '/proxy/health')).status, 503);
    const answer = await call(run, 'GET', '/docs/openapi.json');
    assert.equal(answer.status, 200);
    assert.match(String(answer.headers['content-type']), /^application\/json/);
    const document = answer.json();
    assert.equal(document.openapi, '3.0.3');
    await SwaggerParser.validate(structuredClone(document));

    const operations = Object.entries(document.paths as Record<string, object>)
      .flatMap(([path, methods]) => Object.keys(methods).map((method) => `${method} ${path}`))
      .sort();
    assert.deepEqual(operations, OPERATIONS);

    assert.deepEqual(document.components.securitySchemes.apiKey, {
      type: 'apiKey',
      in: 'header',
      name: 'x-client-key',
    });
    const getProxy = document.paths['/proxy'].get;
    assert.ok(
      getProxy.parameters.some(
        (p: { name: string; in: string }) => p.name === 'userId' && p.in === 'query',
      ),
    );
    assert.ok(getProxy.responses['200'].content['application/json'].schema.properties.toggles);
    assert.ok(
      document.paths['/proxy'].post.requestBody.content['application/json'].schema.properties
        .context,
    );
    assert.ok(
      document.paths['/proxy/client/metrics'].post.requestBody,
      'validated bodies are documented',
    );
    assert.deepEqual(document.paths['/proxy/health'].get.security, []);
    assert.ok(document.paths['/ofrep/v1/evaluate/flags/{key}'].post.responses['404']);
  });

  it('does not change the evaluation answers (they are sent pre-serialized)', async () => {
    run.upstream.setPayload(smallPayload);
    run.upstream.mode = 'ok';
    await run.proxy.poller.ready;
    await plain.proxy.poller.ready;
    for (const [method, path, body] of [
      ['GET', '/proxy?userId=123', undefined],
      ['GET', '/proxy/all', undefined],
      ['POST', '/proxy', '{"context":{"userId":"123"},"toggles":["simple-on","nope"]}'],
    ] as const) {
      const init = (headers: Record<string, string>) => ({
        headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
        body,
      });
      const documented = await call(run, method, path, init({ 'x-client-key': 'client-key-1' }));
      const undocumented = await call(plain, method, path, init(withKey()));
      assert.equal(documented.status, 200);
      assert.equal(documented.text, undocumented.text, `${method} ${path}`);
    }
  });

  it('answers 404 without enableOAS', async () => {
    await plain.proxy.poller.ready;
    assert.equal((await call(plain, 'GET', '/docs/openapi.json')).status, 404);
    assert.equal((await call(plain, 'GET', '/docs/openapi')).status, 404);
  });

  it('moves under proxyBasePath with every other path', async () => {
    const based = await startProxy(smallPayload, { enableOAS: true, proxyBasePath: 'edge/' });
    try {
      await based.proxy.poller.ready;
      const document = (await call(based, 'GET', '/edge/docs/openapi.json')).json();
      assert.ok(document.paths['/edge/proxy'].get);
      assert.ok(document.paths['/edge/ofrep/v1/evaluate/flags'].post);
      assert.equal((await call(based, 'GET', '/edge/docs/openapi')).status, 200);
      assert.equal((await call(based, 'GET', '/docs/openapi.json')).status, 404);
      const ofrep = await call(based, 'POST', '/edge/ofrep/v1/evaluate/flags/simple-on', {
        headers: withKey({ 'content-type': 'application/json' }),
        body: '{}',
      });
      assert.equal(ofrep.json().value, true);
    } finally {
      await based.close();
    }
  });

  it('renders the endpoint list in the interactive UI with no network', async (t) => {
    if (!existsSync(CHROMIUM)) {
      t.skip(`${CHROMIUM} is absent (install Debian's chromium to run this test)`);
      return;
    }
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    });
    try {
      const context = await browser.newContext();
      const outside: string[] = [];
      await context.route('**/*', (route) => {
        const url = new URL(route.request().url());
        if (url.hostname === '127.0.0.1') return route.continue();
        outside.push(url.href);
        return route.abort();
      });
      const page = await context.newPage();
      const response = await page.goto(`${run.base}/docs/openapi`);
      assert.equal(response?.status(), 200);
      await page.waitForSelector('.opblock', { timeout: 15_000 });
      const listed = await page.$$eval('.opblock', (blocks) =>
        blocks.map((block) => {
          const method = block.querySelector('.opblock-summary-method')?.textContent ?? '';
          const path =
            block.querySelector('.opblock-summary-path')?.getAttribute('data-path') ?? '';
          return `${method.toLowerCase()} ${path}`;
        }),
      );
      assert.deepEqual(listed.sort(), OPERATIONS);
      assert.deepEqual(outside, [], 'the page loads nothing from outside');
    } finally {
      await browser.close();
    }
  });
});
