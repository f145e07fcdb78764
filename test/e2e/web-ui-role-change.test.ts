import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page, Route } from 'playwright-core';
import { adminRequest } from '../../scripts/demo/seed.js';
import { launchChromium, noChromium } from '../helpers/chromium.js';
import { startUiServer, type UiServer } from '../helpers/ui-server.js';
import { waitFor } from '../helpers/wait.js';

const OPERATOR = '*:*.e2e-role-change-admin';
const FLAG = 'checkout-v2';
const EDITOR = { name: 'Edith Editor', email: 'edith@example.com', username: 'edith' };
/** Screenshots for a person to look at (not compared by the test). */
const SHOTS = '/tmp/flags-ui-role-';
const STREAM = '/api/admin/events/stream';

/**
 * A role changed while the person's page is open: the header's role and the controls that
 * depend on it follow without a reload, whether the page learns it from its admin stream (which
 * the server ends on a role change) or from a write the server refuses.
 */
describe('a role changed while the page is open, in Chromium', { skip: noChromium }, () => {
  let server: UiServer | undefined;
  let serverUrl: string;
  let browser: Browser;

  before(async () => {
    server = await startUiServer(OPERATOR);
    serverUrl = server.url;
    for (const [username, name, rootRole, email] of [
      ['ada', 'Ada Admin', 'Admin', undefined],
      [EDITOR.username, EDITOR.name, 'Editor', EDITOR.email],
    ] as const) {
      await adminRequest(serverUrl, OPERATOR, 'POST', '/api/admin/user-admin', {
        username,
        name,
        email,
        password: `${username}-password-long-enough`,
        rootRole,
      });
    }
    await adminRequest(serverUrl, OPERATOR, 'POST', '/api/admin/projects/default/features', {
      name: FLAG,
      type: 'release',
    });
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    await server?.close();
  });

  async function logIn(context: BrowserContext, username: string): Promise<Page> {
    const page = await context.newPage();
    await page.goto(serverUrl);
    await page.getByLabel('User name').fill(username);
    await page.getByLabel('Password').fill(`${username}-password-long-enough`);
    // The admin stream is open (the server ends it on a role change) before anything changes.
    const streaming = page.waitForResponse(
      (response) => new URL(response.url()).pathname === STREAM && response.status() === 200,
    );
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('heading', { name: 'Flags', exact: true }).waitFor();
    await streaming;
    return page;
  }

  const roleShown = async (page: Page) =>
    (await page.locator('header .who .role').innerText()).trim();
  const flagSwitch = (page: Page) => page.getByRole('switch', { name: `${FLAG} in development` });

  /** Sets the Editor's role on the Admin's Users page. */
  async function setRole(admin: Page, role: 'Editor' | 'Viewer'): Promise<void> {
    await admin.getByRole('button', { name: `Edit ${EDITOR.name}` }).click();
    const edit = admin.getByRole('form', { name: `Edit user ${EDITOR.name}` });
    await edit.getByLabel('Role').selectOption({ label: role });
    await edit.getByRole('button', { name: 'Save' }).click();
    await admin
      .getByRole('row')
      .filter({ hasText: EDITOR.email })
      .getByRole('cell', { name: role, exact: true })
      .waitFor();
  }

  /** Waits until `page`'s header shows `role` and its switch is read-only for a Viewer only. */
  async function followsRole(page: Page, role: 'editor' | 'viewer', what: string) {
    await waitFor(
      async () =>
        (await roleShown(page)) === role &&
        (await flagSwitch(page).isDisabled()) === (role === 'viewer'),
      10_000,
      `${what}: the header says ${role} and the switch is ${role === 'viewer' ? 'read-only' : 'usable'}`,
    );
    const newFlag = page.getByRole('button', { name: 'New flag' });
    assert.equal(await newFlag.count(), role === 'viewer' ? 0 : 1, `${what}: New flag button`);
  }

  it('an Editor demoted to Viewer sees Viewer in the header and read-only switches without a reload: at once through the admin stream, or when the next toggle is refused', async () => {
    const adminContext = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const editorContext = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    try {
      const admin = await logIn(adminContext, 'ada');
      await admin
        .getByRole('navigation', { name: 'Configure' })
        .getByRole('link', { name: 'Users' })
        .click();
      await admin.getByRole('heading', { name: 'Users and invite links', level: 1 }).waitFor();

      // The Editor has the list open twice: one page with its admin stream, one whose stream
      // never gets through (as behind a proxy that holds such answers back).
      const live = await logIn(editorContext, EDITOR.username);
      const held = await editorContext.newPage();
      const heldStreams: Route[] = [];
      await held.route(`**${STREAM}`, (route) => {
        heldStreams.push(route);
      });
      await held.goto(serverUrl);
      await flagSwitch(held).waitFor();
      await waitFor(() => heldStreams.length === 1, 10_000, 'the held page asks for its stream');
      for (const page of [live, held]) {
        assert.equal(await roleShown(page), 'editor');
        assert.equal(await flagSwitch(page).isDisabled(), false);
      }

      await setRole(admin, 'Viewer');

      // The page with a stream follows by itself: no click, no reload.
      await followsRole(live, 'viewer', 'the page with a stream');
      await live.screenshot({ path: `${SHOTS}demoted-live.png`, fullPage: true });

      // The other one still shows what it knew; its next toggle is refused, and then it knows.
      assert.equal(await roleShown(held), 'editor');
      await flagSwitch(held).click();
      await held
        .getByRole('alert')
        .filter({ hasText: /has the Viewer role/ })
        .waitFor();
      await followsRole(held, 'viewer', 'the page whose toggle was refused');
      assert.equal(await flagSwitch(held).isChecked(), false, 'the refused change is not shown');
      await held.screenshot({ path: `${SHOTS}demoted-refused.png`, fullPage: true });

      // Back to Editor: the page with a stream follows again.
      await setRole(admin, 'Editor');
      await followsRole(live, 'editor', 'the page with a stream, promoted again');
      await flagSwitch(live).click();
      await waitFor(
        async () => await flagSwitch(live).isChecked(),
        10_000,
        'the Editor turns the flag on again',
      );
      for (const route of heldStreams) await route.abort();
    } finally {
      await adminContext.close();
      await editorContext.close();
    }
  });
});
