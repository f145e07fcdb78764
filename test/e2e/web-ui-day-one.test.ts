import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { InMemStorageProvider, Unleash } from 'unleash-client';
import { InMemoryStorageProvider, UnleashClient } from 'unleash-proxy-client';
import { adminRequest } from '../../scripts/demo/seed.js';
import { accessibilityViolations, launchChromium, noChromium } from '../helpers/chromium.js';
import { startUiServer, type UiServer } from '../helpers/ui-server.js';
import { stopSdk } from '../helpers/unleash-sdk.js';
import { waitFor } from '../helpers/wait.js';

/** The operator's token: used once, to make the first Admin (as `curl` would on a new server). */
const OPERATOR = '*:*.e2e-day-one-operator';
/** Screenshots of each step, kept for a person to look at (not compared by the test). */
const SHOTS = join(tmpdir(), 'flags-day-one');
const PROJECT = 'payments';
const ENVIRONMENT = 'staging';
const FLAG = 'new-checkout';
const SEGMENT = 'beta-testers';
const EDITOR = { name: 'Edith Editor', email: 'edith@example.com', username: 'edith' };
const PASSWORD = 'a-password-long-enough';
/** The apps the new tokens connect, which the constraint on `appName` lets in. */
const SERVICE_APP = 'checkout-service';
const WEB_APP = 'checkout-web';

/**
 * Day one on a new server, in Chromium, without curl: an Admin sets up a project, an environment,
 * a token for each SDK and an Editor; the Editor makes a flag that both SDKs see; the Admin
 * demotes, then deletes the Editor; the event log has each step.
 */
describe('day one in the web UI', { skip: noChromium }, () => {
  let server: UiServer | undefined;
  let serverUrl: string;
  let browser: Browser;
  let step = 0;

  before(async () => {
    mkdirSync(SHOTS, { recursive: true });
    server = await startUiServer(OPERATOR);
    serverUrl = server.url;
    await adminRequest(serverUrl, OPERATOR, 'POST', '/api/admin/user-admin', {
      name: 'Ada Admin',
      username: 'ada',
      password: PASSWORD,
      rootRole: 'Admin',
    });
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    await server?.close();
  });

  /** A screenshot named by its order and `what`. */
  const shot = (page: Page, what: string) =>
    page.screenshot({
      path: join(SHOTS, `${String(++step).padStart(2, '0')}-${what}.png`),
      fullPage: true,
    });

  /** No serious or critical accessibility violation on the page as it is now. */
  async function assertAccessible(page: Page, what: string): Promise<void> {
    assert.deepEqual(await accessibilityViolations(page), [], `${what}: accessibility violations`);
  }

  /** A fresh browser (own cookies); page errors and unexpected console errors kept. */
  async function open(problems: string[]): Promise<Page> {
    const context = await browser.newContext({
      viewport: { width: 1280, height: 900 },
      permissions: ['clipboard-read', 'clipboard-write'],
    });
    const page = await context.newPage();
    page.on('pageerror', (error) => problems.push(error.message));
    page.on('console', (message) => {
      // Who is signed in before anyone is (401) and the refused write (403): expected.
      if (message.type() === 'error' && !/status of 40[13]/.test(message.text())) {
        problems.push(message.text());
      }
    });
    return page;
  }

  async function logIn(page: Page, username: string): Promise<void> {
    await page.getByLabel('User name').fill(username);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('heading', { name: 'Flags', exact: true }).waitFor();
  }

  async function goTo(page: Page, link: string, heading: string): Promise<void> {
    await page
      .getByRole('navigation', { name: 'Configure' })
      .getByRole('link', { name: link })
      .click();
    await page.getByRole('heading', { name: heading, exact: true, level: 1 }).waitFor();
  }

  /** Fills and submits a resource page's create form; `fill` sets its fields. */
  async function create(
    page: Page,
    noun: string,
    fill: (form: ReturnType<Page['getByRole']>) => Promise<void>,
  ) {
    await page.getByRole('button', { name: `New ${noun}` }).click();
    const form = page.getByRole('form', { name: `New ${noun}` });
    await fill(form);
    await form.getByRole('button', { name: `Create ${noun}` }).click();
    await form.waitFor({ state: 'detached' });
  }

  /** A token made on the API tokens page: its secret, as the page shows it once. */
  async function createToken(page: Page, name: string, type: string): Promise<string> {
    await create(page, 'API token', async (form) => {
      await form.getByLabel('Name').fill(name);
      await form.getByLabel('Type').selectOption(type);
      await form.getByRole('checkbox', { name: 'Payments' }).check();
      await form.getByLabel('Environment').selectOption(ENVIRONMENT);
    });
    await page.getByRole('heading', { name: `Token ${name} is created` }).waitFor();
    const secret = await page.locator('[data-secret]').innerText();
    // Copy puts the whole secret on the clipboard.
    await page.getByRole('button', { name: 'Copy' }).click();
    await page.getByRole('status').filter({ hasText: 'Copied.' }).waitFor();
    assert.equal(await page.evaluate('navigator.clipboard.readText()'), secret);
    assert.match(secret, new RegExp(`^${PROJECT}:${ENVIRONMENT}\\.`));
    const snippet = await page.locator('.snippet').innerText();
    assert.ok(snippet.includes(secret), 'the SDK snippet uses the secret');
    assert.ok(snippet.includes(type === 'frontend' ? '/api/frontend' : '/api/'), snippet);
    await shot(page, `token-${type}`);
    await page.getByRole('button', { name: 'Done' }).click();
    // The list shows it masked from now on.
    const row = page.getByRole('row').filter({ hasText: name });
    assert.equal(await row.getByText(secret).count(), 0);
    return secret;
  }

  it('an Admin sets up, an invited Editor makes a flag both SDKs see, the Admin demotes and deletes the Editor; the event log shows each step', async () => {
    const problems: string[] = [];

    // The Admin logs in and creates a project and an environment.
    const admin = await open(problems);
    await admin.goto(serverUrl);
    await logIn(admin, 'ada');
    await goTo(admin, 'Projects', 'Projects');
    await create(admin, 'project', async (form) => {
      await form.getByLabel('Id').fill(PROJECT);
      await form.getByLabel('Name').fill('Payments');
      await form.getByLabel('Description').fill('Checkout and billing');
    });
    await admin.getByRole('rowheader', { name: PROJECT }).waitFor();
    await assertAccessible(admin, 'projects');
    await shot(admin, 'project');

    await goTo(admin, 'Environments', 'Environments');
    await create(admin, 'environment', async (form) => {
      await form.getByLabel('Name').fill(ENVIRONMENT);
      await form.getByLabel('Type').selectOption('preproduction');
      await form.getByLabel('Order').fill('5');
    });
    await admin.getByRole('rowheader', { name: ENVIRONMENT }).waitFor();
    await assertAccessible(admin, 'environments');
    await shot(admin, 'environment');

    // A frontend token and a client token for the new project and environment.
    await goTo(admin, 'API tokens', 'API tokens');
    const frontendToken = await createToken(admin, WEB_APP, 'frontend');
    const clientToken = await createToken(admin, SERVICE_APP, 'client');
    await assertAccessible(admin, 'API tokens');

    // An invite link with the Editor role.
    await goTo(admin, 'Users', 'Users and invite links');
    await create(admin, 'invite link', async (form) => {
      await form.getByLabel('Name').fill('editors');
      await form.getByLabel('Role').selectOption({ label: 'Editor' });
    });
    await admin.getByRole('heading', { name: 'Invite link editors is created' }).waitFor();
    const inviteUrl = new URL(await admin.locator('[data-secret]').innerText());
    assert.equal(inviteUrl.pathname, '/new-user');
    await assertAccessible(admin, 'users');
    await shot(admin, 'invite-link');

    // The Editor signs up through the link, then logs in.
    const editor = await open(problems);
    await editor.goto(`${serverUrl}${inviteUrl.pathname}${inviteUrl.search}`);
    const join = editor.getByRole('form', { name: 'Join flags' });
    await join.getByLabel('Name', { exact: true }).fill(EDITOR.name);
    await join.getByLabel('E-mail').fill(EDITOR.email);
    await join.getByLabel('User name (optional)').fill(EDITOR.username);
    await join.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await join.getByLabel('Confirm password').fill(PASSWORD);
    await shot(editor, 'signup');
    await join.getByRole('button', { name: 'Create account' }).click();
    await editor.getByRole('heading', { name: 'Flags', exact: true }).waitFor();
    await editor.getByRole('button', { name: 'Log out' }).click();
    await logIn(editor, EDITOR.username);
    assert.match(await editor.locator('header .who').innerText(), /Edith Editor\s+editor/);

    // The Editor makes a segment…
    await goTo(editor, 'Segments', 'Segments');
    await create(editor, 'segment', async (form) => {
      await form.getByLabel('Name').fill(SEGMENT);
      await form.getByRole('button', { name: 'Add constraint' }).click();
      await form.locator('#segments-field-constraints-c0-field').selectOption('userId');
      await form.locator('#segments-field-constraints-c0-values').fill('alice, carol');
    });
    await editor.getByRole('rowheader', { name: SEGMENT }).waitFor();
    await shot(editor, 'segment');

    // …and a flag in the new project: a gradual rollout in the new environment, constrained on
    // the built-in appName, with the segment and a variant; then turns it on.
    const appName = (await adminRequest(serverUrl, OPERATOR, 'GET', '/api/admin/context')) as {
      name: string;
    }[];
    assert.ok(
      appName.some((field) => field.name === 'appName'),
      'a new server offers the built-in context field appName',
    );
    await editor.getByRole('link', { name: 'Flags', exact: true }).click();
    await editor.getByRole('button', { name: 'New flag' }).click();
    const newFlag = editor.getByRole('form', { name: 'New flag' });
    await newFlag.getByLabel('Name', { exact: true }).fill(FLAG);
    await newFlag.getByLabel('Project').selectOption(PROJECT);
    await newFlag.getByRole('button', { name: 'Create flag' }).click();
    await editor.getByRole('heading', { name: `${FLAG} in ${PROJECT}` }).waitFor();

    await editor.getByRole('button', { name: `Add strategy in ${ENVIRONMENT}` }).click();
    const strategy = editor.getByRole('form', { name: 'Add strategy' });
    const prefix = `#env-${ENVIRONMENT}-strategy`;
    await strategy.getByLabel('Rollout (%)').fill('100');
    await strategy.getByLabel('Stickiness').selectOption('userId');
    await strategy.getByRole('button', { name: 'Add constraint' }).click();
    await strategy.locator(`${prefix}-c0-field`).selectOption('appName');
    await strategy.locator(`${prefix}-c0-operator`).selectOption('IN');
    await strategy.locator(`${prefix}-c0-values`).fill(`${SERVICE_APP}, ${WEB_APP}`);
    await strategy.getByLabel(SEGMENT).check();
    await strategy.getByRole('button', { name: 'Add variant' }).click();
    await strategy.locator(`${prefix}-v0-name`).fill('blue');
    await shot(editor, 'strategy');
    await strategy.getByRole('button', { name: 'Save strategy' }).click();
    await editor.getByText('100 % of userId').waitFor();
    const flagSwitch = editor.getByRole('switch', { name: `${FLAG} in ${ENVIRONMENT}` });
    await flagSwitch.click();
    await waitFor(async () => await flagSwitch.isChecked(), 10_000, 'the switch shows on');
    await shot(editor, 'flag-on');

    // Each SDK, with its new token, sees the flag on for alice (in the segment) with the variant.
    const service = new Unleash({
      url: `${serverUrl}/api/`,
      appName: SERVICE_APP,
      customHeaders: { Authorization: clientToken },
      refreshInterval: 60_000,
      disableMetrics: true,
      storageProvider: new InMemStorageProvider(),
      skipInstanceCountWarning: true,
    });
    service.on('error', () => {});
    const web = new UnleashClient({
      url: `${serverUrl}/api/frontend`,
      clientKey: frontendToken,
      appName: WEB_APP,
      refreshInterval: 60,
      disableMetrics: true,
      storageProvider: new InMemoryStorageProvider(),
      context: { userId: 'alice' },
    });
    try {
      await new Promise((resolve) => service.once('synchronized', resolve));
      assert.equal(service.isEnabled(FLAG, { userId: 'alice' }), true, 'unleash-client: alice');
      assert.equal(service.getVariant(FLAG, { userId: 'alice' }).name, 'blue');
      assert.equal(service.isEnabled(FLAG, { userId: 'bob' }), false, 'bob is not in the segment');
      await web.start();
      assert.equal(web.isEnabled(FLAG), true, 'unleash-proxy-client: alice');
      assert.equal(web.getVariant(FLAG).name, 'blue');
    } finally {
      stopSdk(service);
      web.stop();
    }

    // The Admin demotes the Editor to Viewer: the Editor's page no longer offers writes.
    await goTo(admin, 'Users', 'Users and invite links');
    await admin.getByRole('button', { name: `Edit ${EDITOR.name}` }).click();
    const edit = admin.getByRole('form', { name: `Edit user ${EDITOR.name}` });
    await edit.getByLabel('Role').selectOption({ label: 'Viewer' });
    await edit.getByRole('button', { name: 'Save' }).click();
    await admin.getByRole('row').filter({ hasText: EDITOR.email }).getByText('Viewer').waitFor();
    await shot(admin, 'demoted');

    // The Editor's open page follows without a reload (the server ends its admin stream on a
    // role change): Viewer in the header, the switch read-only. A click on a page that had not
    // learnt it yet is refused (web-ui-role-change.test.ts).
    await waitFor(
      async () =>
        /Edith Editor\s+viewer/.test(await editor.locator('header .who').innerText()) &&
        (await flagSwitch.isDisabled()),
      10_000,
      'the Editor’s page shows the Viewer role and a read-only switch',
    );
    assert.equal(await flagSwitch.isChecked(), true, 'the flag stays on');
    await shot(editor, 'read-only');

    // Then deletes them.
    await admin.getByRole('button', { name: `Delete ${EDITOR.name}` }).click();
    await admin
      .getByRole('dialog', { name: 'Delete user?' })
      .getByRole('button', { name: 'Delete' })
      .click();
    await admin
      .getByRole('status')
      .filter({ hasText: `${EDITOR.name} is deleted.` })
      .waitFor();
    assert.equal(await admin.getByRole('row').filter({ hasText: EDITOR.email }).count(), 0);
    await shot(admin, 'deleted');

    // The event log shows each step.
    await admin.getByRole('link', { name: 'Event log' }).click();
    await admin.getByRole('heading', { name: 'Event log' }).waitFor();
    const log = admin.locator('main .events');
    for (const type of [
      'project-created',
      'environment-created',
      'api-token-created',
      'public-signup-token-created',
      'user-created',
      'segment-created',
      'feature-created',
      'feature-strategy-add',
      'feature-environment-enabled',
      'user-updated',
      'user-deleted',
    ]) {
      await log.getByText(type, { exact: true }).first().waitFor({ timeout: 10_000 });
    }
    await shot(admin, 'event-log');
    assert.deepEqual(problems, []);
  });
});
