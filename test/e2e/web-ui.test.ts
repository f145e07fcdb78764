import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createProxy, type ProxyApp } from '@flags/proxy';
import { CONSTRAINT_OPERATORS } from '@flags/schemas';
import { buildApp, type Database, loadConfig, openDatabase } from '@flags/server';
import type { FastifyInstance } from 'fastify';
import type { Browser, Page } from 'playwright-core';
import { buildUi } from '../../scripts/build-ui.js';
import { adminRequest } from '../../scripts/demo/seed.js';
import { launchChromium, noChromium } from '../helpers/chromium.js';
import { waitFor } from '../helpers/wait.js';

const ADMIN = '*:*.e2e-ui-admin';
const CLIENT_TOKEN = 'default:production.e2e-ui-client';
const CLIENT_KEY = 'e2e-ui-client-key';
/** Longer than the test: the proxy learns of changes by streaming only. */
const NO_POLLING_MS = 300_000;
const FLAG = 'checkout-redesign';
/** Screenshots for a person to look at (not compared by the test). */
const SHOTS = '/tmp/flags-ui-';

/** What flags-proxy's `/proxy` answers for a user: the flag's variant name, or undefined when off. */
async function answerFor(proxyUrl: string, userId: string): Promise<string | undefined> {
  const response = await fetch(`${proxyUrl}/proxy?userId=${userId}`, {
    headers: { authorization: CLIENT_KEY },
  });
  assert.equal(response.status, 200);
  const body = (await response.json()) as {
    toggles: { name: string; variant: { name: string } }[];
  };
  return body.toggles.find((toggle) => toggle.name === FLAG)?.variant.name;
}

describe('the web UI in Chromium', { skip: noChromium }, () => {
  let db: Database;
  let server: FastifyInstance;
  let serverUrl: string;
  let proxy: ProxyApp;
  let proxyUrl: string;
  let browser: Browser;

  before(async () => {
    await buildUi();
    const config = loadConfig(
      {},
      { port: 0, host: '127.0.0.1', adminTokens: [ADMIN], clientTokens: [CLIENT_TOKEN] },
    );
    db = await openDatabase({ databaseUrl: undefined, dataDir: undefined });
    server = await buildApp(config, { db, logger: false });
    serverUrl = await server.listen({ port: 0, host: '127.0.0.1' });
    for (const [username, rootRole] of [
      ['ada', 'Admin'],
      ['vic', 'Viewer'],
    ]) {
      await adminRequest(serverUrl, ADMIN, 'POST', '/api/admin/user-admin', {
        username,
        name: username === 'ada' ? 'Ada Admin' : 'Vic Viewer',
        password: `${username}-password-long-enough`,
        rootRole,
      });
    }
    proxy = await createProxy({
      flagsUrl: `${serverUrl}/api`,
      flagsApiToken: CLIENT_TOKEN,
      clientKeys: [CLIENT_KEY],
      refreshInterval: NO_POLLING_MS,
      metricsInterval: 0,
      logLevel: 'fatal',
    });
    proxyUrl = await proxy.app.listen({ port: 0, host: '127.0.0.1' });
    await proxy.poller.ready;
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    await proxy?.app.close();
    await server?.close();
    await db?.close();
  });

  /** A fresh browser context (own cookies) signed in as `username`; page errors collected. */
  async function signIn(username: string, problems: string[]): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    page.on('pageerror', (error) => problems.push(error.message));
    page.on('console', (message) => {
      // A refused write shows as a failed resource load; the test asserts those itself.
      if (message.type() === 'error' && !/status of 40[13]/.test(message.text())) {
        problems.push(message.text());
      }
    });
    await page.goto(serverUrl);
    await page.getByLabel('User name').fill(username);
    await page.getByLabel('Password').fill(`${username}-password-long-enough`);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('heading', { name: 'Flags', exact: true }).waitFor();
    return page;
  }

  it('serves the page under a strict CSP, with no inline script or style', async () => {
    const response = await fetch(serverUrl);
    assert.equal(response.status, 200);
    const csp = response.headers.get('content-security-policy') ?? '';
    assert.match(csp, /default-src 'self'/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
    const page = await response.text();
    assert.doesNotMatch(page, /<script>|<style|style=/);
    assert.doesNotMatch(page, /https?:\/\//);
    const script = await fetch(`${serverUrl}/ui/app.js`);
    assert.equal(script.status, 200);
    assert.match(script.headers.get('content-type') ?? '', /javascript/);
  });

  it('an Admin creates a flag, adds a rollout with a constraint and a variant, turns it on in production through the confirmation, and the proxy answers the change; the history shows it', async () => {
    const problems: string[] = [];
    const page = await signIn('ada', problems);
    await page.screenshot({ path: `${SHOTS}list-empty.png`, fullPage: true });

    await page.getByRole('button', { name: 'New flag' }).click();
    const create = page.getByRole('form', { name: 'New flag' });
    await create.getByLabel('Name', { exact: true }).fill(FLAG);
    await create.getByLabel('Description').fill('The new checkout');
    await create.getByRole('button', { name: 'Create flag' }).click();
    await page.getByRole('heading', { name: `${FLAG} in default` }).waitFor();

    // A rollout in production: 100 % of userId, only for alice (one of alice and carol, and
    // matching ^(alice|bob)$), variant "blue".
    await page.getByRole('button', { name: 'Add strategy in production' }).click();
    const form = page.getByRole('form', { name: 'Add strategy' });
    await form.getByLabel('Rollout (%)').fill('100');
    await form.getByLabel('Stickiness').selectOption('userId');
    await form.getByRole('button', { name: 'Add constraint' }).click();
    await form.locator('#env-production-strategy-c0-field').selectOption('userId');
    const operators = await form
      .locator('#env-production-strategy-c0-operator option')
      .evaluateAll((options) => options.map((option) => option.getAttribute('value')));
    assert.deepEqual([...operators].sort(), [...CONSTRAINT_OPERATORS].sort(), 'every operator');
    await form.locator('#env-production-strategy-c0-operator').selectOption('IN');
    await form.locator('#env-production-strategy-c0-values').fill('alice, carol');
    await form.getByRole('button', { name: 'Add constraint' }).click();
    await form.locator('#env-production-strategy-c1-field').selectOption('userId');
    await form.locator('#env-production-strategy-c1-operator').selectOption('REGEX');
    await form.locator('#env-production-strategy-c1-value').fill('^(alice|bob)$');
    await form.getByRole('button', { name: 'Add variant' }).click();
    await form.locator('#env-production-strategy-v0-name').fill('blue');
    await page.screenshot({ path: `${SHOTS}strategy-form.png`, fullPage: true });
    await form.getByRole('button', { name: 'Save strategy' }).click();
    await page.getByText('100 % of userId').waitFor();
    assert.equal(await answerFor(proxyUrl, 'alice'), undefined, 'still off in production');

    // Production asks before it changes.
    await page.getByRole('switch', { name: `${FLAG} in production` }).click();
    const dialog = page.getByRole('dialog', { name: `Turn ${FLAG} on in production?` });
    await dialog.waitFor();
    await page.screenshot({ path: `${SHOTS}confirm-production.png` });
    await dialog.getByRole('button', { name: 'Turn on' }).click();
    await waitFor(
      async () => await page.getByRole('switch', { name: `${FLAG} in production` }).isChecked(),
      10_000,
      'the production switch shows on',
    );

    await waitFor(
      async () => (await answerFor(proxyUrl, 'alice')) === 'blue',
      10_000,
      'alice gets blue',
    );
    assert.equal(await answerFor(proxyUrl, 'bob'), undefined, 'the constraint leaves bob out');

    // The history lists the changes, each with its diff.
    const history = page.getByRole('region', { name: 'History' });
    await history.getByText('feature-environment-enabled').waitFor();
    await history.getByText('feature-strategy-add').click();
    const diff = history
      .getByRole('group')
      .filter({ hasText: 'feature-strategy-add' })
      .locator('.diff');
    await diff.waitFor();
    const added = await diff.locator('.add').allTextContents();
    assert.ok(
      added.some((line) => line.includes('"alice"')),
      added.join('\n'),
    );
    assert.ok(
      added.some((line) => line.includes('"blue"')),
      added.join('\n'),
    );
    assert.ok(
      added.some((line) => line.includes('"REGEX"')),
      added.join('\n'),
    );
    await page.screenshot({ path: `${SHOTS}flag-page.png`, fullPage: true });

    await page.getByRole('link', { name: 'Flags', exact: true }).click();
    await page.getByRole('link', { name: FLAG }).waitFor();
    await page.screenshot({ path: `${SHOTS}list.png`, fullPage: true });
    assert.deepEqual(problems, []);
    await page.context().close();
  });

  it('a Viewer sees no write controls, the API refuses its writes, and its open page follows a change made elsewhere', async () => {
    const problems: string[] = [];
    const page = await signIn('vic', problems);
    assert.equal(await page.getByRole('button', { name: 'New flag' }).count(), 0);
    const listSwitch = page.getByRole('switch', { name: `${FLAG} in production` });
    assert.equal(await listSwitch.isDisabled(), true);

    await page.getByRole('link', { name: FLAG }).click();
    await page.getByRole('heading', { name: `${FLAG} in default` }).waitFor();
    for (const name of ['Add strategy in production', 'Archive', 'Edit', 'Remove', 'Save']) {
      assert.equal(await page.getByRole('button', { name, exact: true }).count(), 0, name);
    }
    const flagSwitch = page.getByRole('switch', { name: `${FLAG} in production` });
    assert.equal(await flagSwitch.isDisabled(), true);
    assert.equal(await flagSwitch.isChecked(), true);
    await page.screenshot({ path: `${SHOTS}viewer.png`, fullPage: true });

    // The page's own session, from the page: refused.
    const status = await page.evaluate(async (flag) => {
      const response = await fetch(
        `/api/admin/projects/default/features/${flag}/environments/production/off`,
        { method: 'POST', credentials: 'same-origin' },
      );
      return response.status;
    }, FLAG);
    assert.equal(status, 403);

    // Someone else turns the flag off: the open page follows through the admin event stream.
    await adminRequest(
      serverUrl,
      ADMIN,
      'POST',
      `/api/admin/projects/default/features/${FLAG}/environments/production/off`,
    );
    await waitFor(
      async () => !(await flagSwitch.isChecked()),
      10_000,
      'the viewer page shows it off',
    );
    await page
      .getByRole('region', { name: 'History' })
      .getByText('feature-environment-disabled')
      .waitFor();
    assert.deepEqual(problems, []);
    await page.context().close();
  });
});
