import assert from 'node:assert/strict';
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { buildUi } from '../../../../scripts/build-ui.js';
import { accessibilityViolations } from '../../../../test/helpers/chromium.js';
import { buildApp } from '../../src/app.js';
import type { Database } from '../../src/db/database.js';
import { openPglite } from '../../src/db/database.js';
import { runSnapshot } from '../../src/features/insights/snapshot-job.js';
import { CAPTURES, seedInsightsHistory, TODAY } from '../fixtures/insights-history.js';
import { ADMIN_TOKEN, testConfig } from '../helpers.js';

const CHROMIUM = '/usr/bin/chromium';
const OUTPUT_DIR = fileURLToPath(new URL('../../../../test-output/', import.meta.url));
const SCREENSHOT = `${OUTPUT_DIR}insights-dashboard.png`;
const noChromium = existsSync(CHROMIUM)
  ? false
  : `${CHROMIUM} is not installed (apt-get install chromium); the browser check needs it`;
if (noChromium) console.log(`# dashboard browser test skipped: ${noChromium}`);

describe('insights dashboard page', () => {
  let db: Database;
  let app: FastifyInstance;
  let base: string;
  // Every line the server logs, at debug level where each request line is written.
  const logLines: string[] = [];
  const logSink = new Writable({
    write(chunk, _encoding, done) {
      logLines.push(String(chunk));
      done();
    },
  });

  before(async () => {
    // The page inlines the web UI's dashboard.js bundle.
    await buildUi();
    db = await openPglite();
    app = await buildApp(testConfig({ logLevel: 'debug' }), {
      db,
      logger: pino({ level: 'debug' }, logSink),
      now: () => TODAY,
    });
    await seedInsightsHistory(db);
    for (const at of CAPTURES) await runSnapshot(db, at);
    base = await app.listen({ port: 0, host: '127.0.0.1' });
  });
  after(async () => {
    await app.close();
    await db.close();
  });

  it('serves one static page without a token, locked down by its CSP', async () => {
    const response = await fetch(`${base}/insights?from=%3Cscript%3Ealert(1)%3C/script%3E`);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/html/);
    const csp = response.headers.get('content-security-policy') ?? '';
    assert.match(csp, /script-src 'sha256-[A-Za-z0-9+/=]+'/);
    assert.match(csp, /connect-src 'self'/);
    assert.equal(response.headers.get('referrer-policy'), 'no-referrer');
    const html = await response.text();
    assert.ok(!html.includes('alert(1)'), 'the query is never reflected into the page');
    for (const series of [
      'userTrends',
      'flagTrends',
      'projectFlagTrends',
      'metricsSummaryTrends',
      'environmentTypeTrends',
    ]) {
      assert.ok(html.includes(`data-series="${series}"`), series);
    }
    assert.ok(!/https?:\/\/(?!www\.w3\.org)/.test(html), 'no external resources');
  });

  it('refuses the admin token in the query string, and logs that request without it', async () => {
    const secret = 'query-string-admin-token-0123';
    const response = await fetch(`${base}/insights?from=2026-11-01&token=${secret}`);
    assert.equal(response.status, 400);
    const body = (await response.json()) as { name: string; message: string };
    assert.equal(body.name, 'BadDataError');
    assert.match(body.message, /#token=/);
    const requestLines = logLines.filter((line) => line.includes('"incoming request"'));
    assert.ok(
      requestLines.some((line) => line.includes('"url":"/insights?<redacted>"')),
      requestLines.join(''),
    );
    assert.ok(!logLines.join('').includes(secret));
  });

  it(
    'draws the five series in headless Chromium and saves a screenshot',
    { skip: noChromium },
    async () => {
      const { chromium } = await import('playwright-core');
      const browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
      });
      try {
        const page = await browser.newPage({ viewport: { width: 1200, height: 1000 } });
        const problems: string[] = [];
        page.on('pageerror', (error) => problems.push(error.message));
        page.on('console', (message) => {
          if (message.type() === 'error') problems.push(message.text());
        });

        // Without a token the page asks for one.
        await page.goto(`${base}/insights`);
        await page.waitForSelector('body[data-state="needs-token"]');
        assert.match((await page.textContent('#status')) ?? '', /admin API token/);

        // A wrong token shows the server's error.
        await page.fill('#token', 'not-a-token');
        await page.click('button[type=submit]');
        await page.waitForSelector('body[data-state="error"]');
        assert.match((await page.textContent('#status')) ?? '', /token/i);

        // The browser logs the expected 401; only what follows must be clean.
        problems.length = 0;

        // #token= (a fragment never reaches a server) is stored in sessionStorage and removed
        // from the address bar; the API calls send it in the Authorization header only.
        const requests: { url: string; authorization: string | undefined }[] = [];
        page.on('request', (request) =>
          requests.push({ url: request.url(), authorization: request.headers().authorization }),
        );
        logLines.length = 0;
        // From another document: a fragment-only change of the current URL would not reload.
        await page.goto('about:blank');
        await page.goto(`${base}/insights?from=2026-11-01&to=2026-11-20#token=${ADMIN_TOKEN}`);
        await page.waitForSelector('body[data-state="ready"]');
        assert.ok(!page.url().includes(ADMIN_TOKEN), page.url());
        assert.equal(new URL(page.url()).hash, '');
        assert.ok(requests.length >= 2, JSON.stringify(requests));
        for (const request of requests) assert.ok(!request.url.includes(ADMIN_TOKEN), request.url);
        const apiCalls = requests.filter((request) =>
          request.url.startsWith(`${base}/api/admin/insights?`),
        );
        assert.equal(apiCalls.length, 1);
        assert.equal(apiCalls[0]!.authorization, ADMIN_TOKEN);
        // The server logged both requests (page and API call) and the token in neither.
        const requestLines = logLines.filter((line) => line.includes('"incoming request"'));
        // (The page's query is left out whole: old links put the token there.)
        assert.ok(
          requestLines.some((line) => line.includes('"url":"/insights?<redacted>"')),
          requestLines.join(''),
        );
        assert.ok(
          requestLines.some((line) => line.includes('"url":"/api/admin/insights?from=2026-11-01')),
          requestLines.join(''),
        );
        assert.ok(!logLines.join('').includes(ADMIN_TOKEN), logLines.join(''));
        assert.equal(
          await page.evaluate(() =>
            (
              globalThis as unknown as { sessionStorage: { getItem(key: string): string | null } }
            ).sessionStorage.getItem('flags.insights.token'),
          ),
          ADMIN_TOKEN,
        );

        const count = (selector: string) => page.locator(selector).count();
        // 4 days × 3 lines; 4 days × 3 stacks; 3 weeks × 3 projects; 3 weeks × 3 projects; 3 weeks × 3 types.
        assert.equal(await count('[data-series="userTrends"] svg circle.point'), 12);
        assert.equal(await count('[data-series="flagTrends"] svg rect.bar'), 12);
        assert.equal(await count('[data-series="projectFlagTrends"] svg circle.point'), 9);
        assert.equal(await count('[data-series="metricsSummaryTrends"] svg rect.bar'), 9);
        assert.equal(await count('[data-series="environmentTypeTrends"] svg rect.bar'), 9);
        for (const series of ['userTrends', 'projectFlagTrends']) {
          assert.equal(await count(`[data-series="${series}"] svg path`), 3, series);
        }

        // The marks carry the numbers of the API.
        const titles = await page.locator('svg title').allTextContents();
        assert.ok(titles.includes('2026-11-20 · total: 4 users'), titles.join('\n'));
        assert.ok(titles.includes('2026-47 · web: 67%'));
        assert.ok(titles.includes('2026-46 · default: 150 requests'));
        assert.ok(titles.includes('2026-45 · production: 2 updates'));
        // Bars scale with their values: the week-46 default bar is the tallest request bar.
        const heights = await page
          .locator('[data-series="metricsSummaryTrends"] rect.bar')
          .evaluateAll((bars) => bars.map((bar) => Number(bar.getAttribute('height'))));
        const tallest = Math.max(...heights);
        assert.ok(tallest > 100, `tallest bar ${tallest}`);
        assert.equal(heights.filter((height) => height === tallest).length, 1);
        assert.match((await page.textContent('#users-summary')) ?? '', /^4 users, 2 active/);
        assert.match((await page.textContent('#health-summary')) ?? '', /default 5\.7 d/);
        assert.deepEqual(problems, []);
        assert.deepEqual(await accessibilityViolations(page), [], 'axe-core: serious or critical');

        mkdirSync(OUTPUT_DIR, { recursive: true });
        await page.screenshot({ path: SCREENSHOT, fullPage: true });
        assert.ok(statSync(SCREENSHOT).size > 10_000);
      } finally {
        await browser.close();
      }
    },
  );
});
