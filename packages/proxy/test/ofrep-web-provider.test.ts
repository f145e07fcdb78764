import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { ClientFeatures } from '@flags/schemas';
import { build } from 'esbuild';
import { type Browser, chromium } from 'playwright-core';
import { CLIENT_KEY, type Listening, startProxy, waitFor } from './helpers/proxy.js';

/** What the page script puts on `window`. */
interface PageApi {
  startFlags(baseUrl: string, key: string): Promise<void>;
  flag(name: string): boolean;
  configurationChanges: number;
}
declare const window: PageApi;

/**
 * Issue 16, acceptance 2: the real `@openfeature/ofrep-web-provider` with `@openfeature/web-sdk`,
 * bundled into a real Chromium page on another origin, sees a flag change through the proxy's
 * `eventStreams`, with no context change and no polling (`pollInterval` 0, the default).
 */

const CHROMIUM = '/usr/bin/chromium';

function payload(bannerOn: boolean): ClientFeatures {
  return {
    version: 2,
    features: [
      { name: 'always', enabled: true, strategies: [{ name: 'default' }] },
      { name: 'banner', enabled: bannerOn, strategies: [{ name: 'default' }] },
    ],
  };
}

/** What the page runs: the SDK and the provider as an application would set them up. */
const PAGE_SCRIPT = `
import { OpenFeature, ProviderEvents } from '@openfeature/web-sdk';
import { OFREPWebProvider } from '@openfeature/ofrep-web-provider';

window.startFlags = async (baseUrl, key) => {
  window.configurationChanges = 0;
  await OpenFeature.setContext({ targetingKey: 'user-1', plan: 'free' });
  await OpenFeature.setProviderAndWait(
    new OFREPWebProvider({ baseUrl, headers: [['Authorization', key]], cacheMode: 'disabled' }),
  );
  const client = OpenFeature.getClient();
  client.addHandler(ProviderEvents.ConfigurationChanged, () => window.configurationChanges++);
  window.flag = (name) => client.getBooleanValue(name, false);
};
`;

async function bundlePage(): Promise<string> {
  const result = await build({
    stdin: {
      contents: PAGE_SCRIPT,
      resolveDir: dirname(fileURLToPath(import.meta.url)),
      loader: 'js',
    },
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: 'es2020',
    write: false,
    logLevel: 'silent',
  });
  return (result.outputFiles[0] as { text: string }).text;
}

describe('the OFREP web provider in Chromium', () => {
  let run: Listening;
  let browser: Browser | undefined;
  let appServer: Server | undefined;
  before(async () => {
    run = await startProxy(
      payload(false),
      { metricsInterval: 0, refreshInterval: 50 },
      {
        listen: true,
      },
    );
    await run.proxy.poller.ready;
  });
  after(async () => {
    await browser?.close();
    appServer?.close();
    await run.close();
  });

  it('sees a flag change through the event stream, without polling or a context change', async (t) => {
    if (!existsSync(CHROMIUM)) {
      t.skip(`${CHROMIUM} is absent (install Debian's chromium to run this test)`);
      return;
    }
    const script = await bundlePage();
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    });
    // The application is served by a server of its own (another origin: the proxy is
    // cross-origin to it, CORS and all), on loopback like the proxy, as browsers allow.
    const html = `<!doctype html><html><body><script>${script.replace(/<\/script/gi, '<\\/script')}</script></body></html>`;
    appServer = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
    });
    await new Promise<void>((resolve) => appServer?.listen(0, '127.0.0.1', resolve));
    const appOrigin = `http://127.0.0.1:${(appServer.address() as AddressInfo).port}`;
    const context = await browser.newContext();
    const page = await context.newPage();
    const bulkRequests: string[] = [];
    const streamRequests: string[] = [];
    page.on('request', (request) => {
      const url = new URL(request.url());
      if (request.method() === 'POST' && url.pathname === '/ofrep/v1/evaluate/flags')
        bulkRequests.push(url.search);
      if (url.pathname === '/ofrep/v1/events') streamRequests.push(request.resourceType());
    });
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(`${appOrigin}/`);
    await page.evaluate(
      ([base, key]) => window.startFlags(base as string, key as string),
      [run.base, CLIENT_KEY],
    );
    const flag = (name: string) => page.evaluate((n) => window.flag(n), name);
    assert.equal(await flag('always'), true);
    assert.equal(await flag('banner'), false);
    await waitFor(() => streamRequests.length > 0, 10_000);
    assert.deepEqual(streamRequests, ['eventsource']);
    // Whether or not the stream is open yet when the change lands, it is told: its credential
    // names the revision the first answer was made from.
    assert.equal(bulkRequests.length, 1, 'one evaluation at start');

    run.upstream.setPayload(payload(true));
    await waitFor(async () => (await flag('banner')) === true, 15_000);
    assert.equal(await page.evaluate(() => window.configurationChanges), 1);
    // The one evaluation after the start is the event's refetch (it names the revision).
    assert.equal(bulkRequests.length, 2);
    assert.match(bulkRequests[1] ?? '', /^\?flagConfigEtag=/);

    run.upstream.setPayload(payload(false));
    await waitFor(async () => (await flag('banner')) === false, 15_000);
    assert.equal(bulkRequests.length, 3, 'no polling: one evaluation per change');
    // One stream all along: the provider keeps it while it evaluates again.
    assert.deepEqual(streamRequests, ['eventsource']);
    assert.deepEqual(errors, []);
  });
});
