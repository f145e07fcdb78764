import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { adminRequest } from '../../scripts/demo/seed.js';
import { launchChromium, noChromium } from '../helpers/chromium.js';
import { startUiServer, type UiServer } from '../helpers/ui-server.js';
import { waitFor } from '../helpers/wait.js';

const ADMIN = '*:*.e2e-insights-events-admin';
/** Screenshots for a person to look at (not compared by the test). */
const SHOTS = '/tmp/flags-ui-';

const today = () => new Date().toISOString().slice(0, 10);
const tomorrow = () => new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);

/** Insights with the session (no admin token asked), and the event log's filters. */
describe('insights and the event log in Chromium', { skip: noChromium }, () => {
  let server: UiServer | undefined;
  let serverUrl: string;
  let browser: Browser;

  const admin = (method: string, path: string, body?: unknown) =>
    adminRequest(serverUrl, ADMIN, method, path, body);

  before(async () => {
    server = await startUiServer(ADMIN);
    serverUrl = server.url;
    for (const [username, rootRole] of [
      ['ada', 'Admin'],
      ['vic', 'Viewer'],
    ]) {
      await admin('POST', '/api/admin/user-admin', {
        username,
        name: username === 'ada' ? 'Ada Admin' : 'Vic Viewer',
        password: `${username}-password-long-enough`,
        rootRole,
      });
    }
    await admin('POST', '/api/admin/projects', { id: 'payments', name: 'Payments' });
    // By the admin token: a flag in each project, one toggled.
    await admin('POST', '/api/admin/projects/default/features', { name: 'search-v2' });
    await admin('POST', '/api/admin/projects/payments/features', { name: 'refunds' });
    await admin(
      'POST',
      '/api/admin/projects/payments/features/refunds/environments/development/on',
    );
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    await server?.close();
  });

  async function signIn(username: string, path = '/'): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await page.goto(`${serverUrl}${path}`);
    await page.getByLabel('User name').fill(username);
    await page.getByLabel('Password').fill(`${username}-password-long-enough`);
    await page.getByRole('button', { name: 'Log in' }).click();
    return page;
  }

  it('shows Insights inside the UI with the session: no admin token asked, five charts drawn', async () => {
    for (const username of ['ada', 'vic']) {
      const page = await signIn(username);
      const calls: (string | undefined)[] = [];
      page.on('request', (request) => {
        if (request.url().includes('/api/admin/insights')) {
          calls.push(request.headers().authorization);
        }
      });
      await page.getByRole('link', { name: 'Insights' }).click();
      await page.getByRole('heading', { name: 'Insights', level: 1 }).waitFor();
      const users = page.getByRole('region', { name: 'Users' });
      await users.locator('svg circle.point').first().waitFor();
      assert.deepEqual(calls, [undefined], 'one call, with the cookie and no token');
      const before = calls.length;
      assert.equal(await page.getByText(/admin (API )?token/i).count(), 1, 'only the footnote');
      assert.equal(await page.locator('input[type=password]').count(), 0);
      for (const title of [
        'Users',
        'Flags',
        'Project health by week',
        'Flag requests by week and project',
        'Configuration updates by week and environment type',
      ]) {
        const chart = page.getByRole('region', { name: title });
        assert.equal(await chart.getByRole('img').count(), 1, title);
      }
      assert.match((await users.locator('p').textContent()) ?? '', /^\d+ users, \d+ active/);
      // The range is in the address; a reload keeps it.
      await page.getByLabel('From').fill(today());
      await waitFor(
        async () => new URL(page.url()).searchParams.get('from') === today(),
        10_000,
        'the range in the address',
      );
      await page.reload();
      await users.waitFor();
      assert.equal(await page.getByLabel('From').inputValue(), today());
      if (username === 'ada')
        await page.screenshot({ path: `${SHOTS}insights.png`, fullPage: true });
      // The stand-alone dashboard, opened in the same browser, uses the session too.
      await page.goto(`${serverUrl}/insights`);
      await page.waitForSelector('body[data-state="ready"]');
      assert.equal(await page.locator('#token').inputValue(), '');
      assert.ok(calls.length > before, 'the dashboard called the API');
      assert.deepEqual(
        calls.filter((authorization) => authorization !== undefined),
        [],
        'no token sent, ever',
      );
      await page.context().close();
    }
  });

  it('filters the event log by type, user, project, flag and date, in the address', async () => {
    const page = await signIn('ada', '/events');
    await page.getByRole('heading', { name: 'Event log' }).waitFor();
    // Ada's own change, through the page's session.
    const status = await page.evaluate(async () => {
      const response = await fetch('/api/admin/projects/payments/features', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'chargebacks' }),
      });
      return response.status;
    });
    assert.equal(status, 201);
    const filters = page.getByRole('search', { name: 'Filter events' });
    const summaries = () => page.locator('ol.events summary').allTextContents();
    const shown = async () => (await summaries()).map((text) => text.replace(/\s+/g, ' ').trim());
    await waitFor(
      async () => (await shown()).some((line) => line.includes('chargebacks')),
      10_000,
      'the new event (live)',
    );

    await filters.getByRole('combobox', { name: 'Type' }).selectOption('feature-created');
    await waitFor(async () => (await shown()).length === 3, 10_000, 'three flags created');
    assert.ok((await shown()).every((line) => line.startsWith('feature-created')));

    await filters.getByRole('combobox', { name: 'Project' }).selectOption('payments');
    await waitFor(async () => (await shown()).length === 2, 10_000, 'two in payments');

    const adaName = (await shown()).find((line) => line.includes('chargebacks'))!;
    const by = /by (.+?),/.exec(adaName)?.[1];
    assert.ok(by, adaName);
    await filters.getByRole('textbox', { name: 'User' }).fill(by);
    await filters.getByRole('textbox', { name: 'User' }).press('Enter');
    await waitFor(
      async () => (await shown()).join('|').includes('chargebacks') && (await shown()).length === 1,
      10_000,
      'only Ada’s flag',
    );
    await page.screenshot({ path: `${SHOTS}event-log-filtered.png`, fullPage: true });
    const address = new URL(page.url());
    assert.equal(address.searchParams.get('type'), 'feature-created');
    assert.equal(address.searchParams.get('project'), 'payments');
    assert.equal(address.searchParams.get('createdBy'), by);

    // The flag filter: the toggle of refunds, whoever made it.
    await page.getByRole('button', { name: 'Clear filters' }).click();
    await filters.getByRole('textbox', { name: 'Flag' }).fill('refunds');
    await filters.getByRole('textbox', { name: 'Flag' }).press('Enter');
    await waitFor(
      async () =>
        (await shown()).join('|') ===
        (await shown()).filter((line) => line.includes('refunds')).join('|'),
      10_000,
      'only refunds',
    );
    assert.ok((await shown()).some((line) => line.startsWith('feature-environment-enabled')));
    const ofRefunds = (await shown()).length;

    // Dates: from tomorrow nothing; to today everything; a reload keeps the filters.
    await filters.getByLabel('From', { exact: true }).fill(tomorrow());
    await page.getByText('No events match.').waitFor();
    await filters.getByLabel('From', { exact: true }).fill(today());
    await filters.getByLabel('To', { exact: true }).fill(today());
    await waitFor(async () => (await shown()).length === ofRefunds, 10_000, 'all of today');
    await page.reload();
    await waitFor(
      async () => (await shown()).length === ofRefunds,
      10_000,
      'the same after a reload',
    );
    assert.equal(await filters.getByRole('textbox', { name: 'Flag' }).inputValue(), 'refunds');
    assert.equal(await filters.getByLabel('To', { exact: true }).inputValue(), today());
    await page.context().close();
  });
});
