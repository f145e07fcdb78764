import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { adminRequest } from '../../scripts/demo/seed.js';
import { accessibilityViolations, launchChromium, noChromium } from '../helpers/chromium.js';
import { startUiServer, type UiServer } from '../helpers/ui-server.js';

const ADMIN = '*:*.e2e-accounts-admin';
const HOUR = 3_600_000;
/** Screenshots for a person to look at (not compared by the test). */
const SHOTS = '/tmp/flags-ui-accounts-';
const WIDE = { width: 1280, height: 900 };
const NARROW = { width: 390, height: 844 };
/** What the login page says after a signup that opened no session. */
const NOT_SIGNED_UP = /No account was opened in this browser/;

/**
 * The pages links open, as the person holding the link meets them: an invite link an Admin made,
 * a welcome link of a user made without a password, a reset link. None needs a session.
 */
describe('account links in Chromium', { skip: noChromium }, () => {
  let server: UiServer | undefined;
  let serverUrl: string;
  let browser: Browser;

  before(async () => {
    server = await startUiServer(ADMIN);
    serverUrl = server.url;
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    await server?.close();
  });

  const admin = (method: string, path: string, body?: unknown) =>
    adminRequest(serverUrl, ADMIN, method, path, body);

  /** A new invite link's secret; `role` as the Admin chose it. */
  async function inviteLink(role = 'Viewer'): Promise<string> {
    const created = (await admin('POST', '/api/admin/invite-link/tokens', {
      name: `invite ${role}`,
      role,
      expiresAt: new Date(Date.now() + HOUR).toISOString(),
    })) as { secret: string; url: string };
    assert.match(created.url, /\/new-user\?invite=/);
    return created.secret;
  }

  /** A fresh browser (own cookies) at `width`; page errors and unexpected console errors kept. */
  async function open(viewport = WIDE): Promise<{ page: Page; problems: string[] }> {
    const context = await browser.newContext({ viewport });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    page.on('console', (message) => {
      // Asking who is signed in before anyone is (401), refused links (400, 404): expected.
      if (message.type() === 'error' && !/status of 40[014]/.test(message.text())) {
        problems.push(message.text());
      }
    });
    return { page, problems };
  }

  /** axe-core's WCAG A and AA rules on the page as it is now: no violations. */
  async function assertAccessible(page: Page, what: string): Promise<void> {
    assert.deepEqual(
      await accessibilityViolations(page, 'every'),
      [],
      `${what}: accessibility violations`,
    );
  }

  /** Nothing wider than the window (no sideways scrolling on a phone). */
  async function assertFits(page: Page, what: string): Promise<void> {
    const [scrollWidth, width] = (await page.evaluate(
      '[document.documentElement.scrollWidth, window.innerWidth]',
    )) as [number, number];
    assert.ok(scrollWidth <= width, `${what}: ${scrollWidth} px wide in a ${width} px window`);
  }

  async function fillSignup(
    page: Page,
    person: { name: string; email: string; username?: string; password: string; confirm?: string },
  ): Promise<void> {
    const form = page.getByRole('form', { name: 'Join flags' });
    await form.getByLabel('Name', { exact: true }).fill(person.name);
    await form.getByLabel('E-mail').fill(person.email);
    if (person.username) await form.getByLabel('User name (optional)').fill(person.username);
    await form.getByLabel('Password', { exact: true }).fill(person.password);
    await form.getByLabel('Confirm password').fill(person.confirm ?? person.password);
    await form.getByRole('button', { name: 'Create account' }).click();
  }

  async function logIn(page: Page, username: string, password: string): Promise<void> {
    await page.getByLabel('User name').fill(username);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Log in' }).click();
  }

  const signedInAs = (page: Page) => page.locator('header .who span').first().innerText();

  it('an invitee opens the invite link, sets name and password, and lands signed in with the link’s role', async () => {
    const secret = await inviteLink('Editor');
    for (const viewport of [NARROW, WIDE]) {
      const { page } = await open(viewport);
      await page.goto(`${serverUrl}/new-user?invite=${secret}`);
      await page.getByRole('form', { name: 'Join flags' }).waitFor();
      await page.screenshot({ path: `${SHOTS}invite-${viewport.width}.png`, fullPage: true });
      await assertFits(page, `invite form at ${viewport.width} px`);
      await assertAccessible(page, `invite form at ${viewport.width} px`);
      await page.context().close();
    }

    const { page, problems } = await open();
    await page.goto(`${serverUrl}/new-user?invite=${secret}`);
    // Two different passwords: said before anything is sent.
    await fillSignup(page, {
      name: 'Grace Hopper',
      email: 'grace@example.com',
      password: 'cobol-compiler-1959',
      confirm: 'cobol-compiler-1960',
    });
    await page.getByRole('alert').filter({ hasText: 'The two passwords differ' }).waitFor();
    await page.screenshot({ path: `${SHOTS}invite-mismatch.png`, fullPage: true });
    await fillSignup(page, {
      name: 'Grace Hopper',
      email: 'grace@example.com',
      username: 'grace',
      password: 'cobol-compiler-1959',
    });
    await page.getByRole('heading', { name: 'Flags', exact: true }).waitFor();
    assert.equal(new URL(page.url()).pathname, '/');
    assert.equal(await signedInAs(page), 'Grace Hopper editor');
    await page.screenshot({ path: `${SHOTS}invite-signed-in.png`, fullPage: true });
    // The session is a real one: the admin API answers the browser as Grace, an Editor.
    const me = await (await page.request.get(`${serverUrl}/api/admin/user`)).json();
    assert.equal(me.user.email, 'grace@example.com');
    assert.ok(
      me.permissions.some((p: { permission: string }) => p.permission === 'UPDATE_FEATURE'),
    );
    assert.ok(!me.permissions.some((p: { permission: string }) => p.permission === 'ADMIN'));
    // A reload keeps her signed in; her password works on the login page of another browser.
    await page.reload();
    await page.getByRole('heading', { name: 'Flags', exact: true }).waitFor();
    const other = await open();
    await other.page.goto(serverUrl);
    await logIn(other.page, 'grace', 'cobol-compiler-1959');
    await other.page.getByRole('heading', { name: 'Flags', exact: true }).waitFor();
    assert.deepEqual([...problems, ...other.problems], []);
    await page.context().close();
    await other.page.context().close();
  });

  it('an expired, disabled or unknown invite link says why instead of showing the form', async () => {
    const expired = await inviteLink();
    await admin('PUT', `/api/admin/invite-link/tokens/${expired}`, {
      expiresAt: new Date(Date.now() - 1000).toISOString(),
    });
    const disabled = await inviteLink();
    await admin('PUT', `/api/admin/invite-link/tokens/${disabled}`, { enabled: false });
    const expected = [
      [expired, /has expired or has been disabled\. Ask whoever sent it for a new one\./],
      [disabled, /has expired or has been disabled\. Ask whoever sent it for a new one\./],
      ['0123456789abcdef0123456789abcdef', /not known: check that the whole link was copied/],
    ] as const;
    for (const [secret, message] of expected) {
      const { page, problems } = await open(NARROW);
      await page.goto(`${serverUrl}/new-user?invite=${secret}`);
      await page.getByRole('heading', { name: 'This invite link cannot be used' }).waitFor();
      assert.match(await page.getByRole('alert').innerText(), message);
      assert.equal(await page.getByRole('form').count(), 0);
      await page.getByRole('link', { name: 'Go to the login page' }).waitFor();
      if (secret === expired) {
        await page.screenshot({ path: `${SHOTS}invite-expired-390.png`, fullPage: true });
        await assertFits(page, 'expired invite at 390 px');
        await assertAccessible(page, 'expired invite');
      }
      assert.deepEqual(problems, []);
      await page.context().close();
    }
    // A link cut short before its secret.
    const { page } = await open();
    await page.goto(`${serverUrl}/new-user`);
    await page.getByRole('heading', { name: 'This link is incomplete' }).waitFor();
    await page.context().close();
  });

  it('signing up with an e-mail that has an account answers as a new one, opens no session and leaves the account as it was', async () => {
    await admin('POST', '/api/admin/user-admin', {
      email: 'linus@example.com',
      name: 'Linus',
      password: 'linus-own-password',
      rootRole: 'Viewer',
    });
    const before = await server!.db.query('SELECT * FROM users WHERE email = $1', [
      'linus@example.com',
    ]);
    const secret = await inviteLink('Editor');

    // The answer a new e-mail gets and the answer a taken one gets differ by the cookie only.
    const signup = (email: string) =>
      fetch(`${serverUrl}/invite/${secret}/signup`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Someone', email, password: 'someone-password' }),
      });
    const fresh = await signup('someone-new@example.com');
    const taken = await signup('LINUS@example.com');
    assert.equal(fresh.status, 202);
    assert.equal(taken.status, fresh.status);
    assert.deepEqual(await taken.json(), await fresh.json());
    assert.ok(fresh.headers.get('set-cookie'));
    assert.equal(taken.headers.get('set-cookie'), null);

    const { page, problems } = await open();
    await page.goto(`${serverUrl}/new-user?invite=${secret}`);
    await fillSignup(page, {
      name: 'Not Linus',
      email: 'linus@example.com',
      password: 'someone-elses-password',
    });
    await page.getByRole('button', { name: 'Log in' }).waitFor();
    assert.match(await page.getByRole('status').innerText(), NOT_SIGNED_UP);
    await page.screenshot({ path: `${SHOTS}invite-taken.png`, fullPage: true });
    await assertAccessible(page, 'login page after a signup that opened no session');
    const cookies = await page.context().cookies();
    assert.deepEqual(cookies, [], 'no session cookie');

    // Nothing about Linus changed: his own password still works, the other one does not.
    assert.deepEqual(
      await server!.db.query('SELECT * FROM users WHERE email = $1', ['linus@example.com']),
      before,
    );
    const login = (password: string) =>
      fetch(`${serverUrl}/auth/simple/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: 'linus@example.com', password }),
      });
    assert.equal((await login('someone-elses-password')).status, 401);
    await logIn(page, 'linus@example.com', 'linus-own-password');
    await page.getByRole('heading', { name: 'Flags', exact: true }).waitFor();
    assert.equal(await signedInAs(page), 'Linus viewer');
    assert.deepEqual(problems, []);
    await page.context().close();
  });

  it('a reset link an Admin made sets a password once; the user logs in with it', async () => {
    await admin('POST', '/api/admin/user-admin', {
      email: 'ada@example.com',
      name: 'Ada',
      password: 'ada-forgotten-password',
      rootRole: 'Editor',
    });
    const { resetPasswordUrl } = (await admin('POST', '/api/admin/user-admin/reset-password', {
      id: 'ada@example.com',
    })) as { resetPasswordUrl: string };
    const link = new URL(resetPasswordUrl);
    assert.equal(link.pathname, '/reset-password');
    const path = `${link.pathname}${link.search}`;

    const narrow = await open(NARROW);
    await narrow.page.goto(`${serverUrl}${path}`);
    await narrow.page.getByRole('form', { name: 'Set a new password' }).waitFor();
    await narrow.page.screenshot({ path: `${SHOTS}reset-390.png`, fullPage: true });
    await assertFits(narrow.page, 'reset form at 390 px');
    await narrow.page.context().close();

    const { page, problems } = await open();
    await page.goto(`${serverUrl}${path}`);
    const form = page.getByRole('form', { name: 'Set a new password' });
    await form.waitFor();
    assert.match(await form.innerText(), /Ada \(ada@example\.com\)/);
    assert.equal(await form.getByLabel('Account').inputValue(), 'ada@example.com');
    await page.screenshot({ path: `${SHOTS}reset-1280.png`, fullPage: true });
    await assertAccessible(page, 'reset form');
    await form.getByLabel('Password', { exact: true }).fill('ada-new-password-1843');
    await form.getByLabel('Confirm password').fill('ada-new-password-1844');
    await form.getByRole('button', { name: 'Set password' }).click();
    await page.getByRole('alert').filter({ hasText: 'The two passwords differ' }).waitFor();
    await form.getByLabel('Confirm password').fill('ada-new-password-1843');
    await form.getByRole('button', { name: 'Set password' }).click();

    await page.getByRole('button', { name: 'Log in' }).waitFor();
    assert.equal(await page.getByRole('status').innerText(), 'Your password is set; log in.');
    await page.screenshot({ path: `${SHOTS}reset-done.png`, fullPage: true });
    await assertAccessible(page, 'login page with the password notice');
    await logIn(page, 'ada@example.com', 'ada-new-password-1843');
    await page.getByRole('heading', { name: 'Flags', exact: true }).waitFor();
    assert.equal(await signedInAs(page), 'Ada editor');

    // The link is spent.
    const again = await open();
    await again.page.goto(`${serverUrl}${path}`);
    await again.page.getByRole('heading', { name: 'This link cannot be used' }).waitFor();
    assert.match(
      await again.page.getByRole('alert').innerText(),
      /not known, was used already or has expired: ask an Admin for a new one/,
    );
    await again.page.screenshot({ path: `${SHOTS}reset-used.png`, fullPage: true });
    assert.deepEqual([...problems, ...again.problems], []);
    await page.context().close();
    await again.page.context().close();
  });

  it('a user an Admin made without a password sets one through the welcome link', async () => {
    const created = (await admin('POST', '/api/admin/user-admin', {
      email: 'barbara@example.com',
      name: 'Barbara',
      rootRole: 'Viewer',
    })) as { inviteLink: string };
    const link = new URL(created.inviteLink);
    assert.equal(link.pathname, '/new-user');
    assert.ok(link.searchParams.get('token'));
    const { page, problems } = await open(NARROW);
    await page.goto(`${serverUrl}${link.pathname}${link.search}`);
    const form = page.getByRole('form', { name: 'Welcome to flags' });
    await form.waitFor();
    await page.screenshot({ path: `${SHOTS}welcome-390.png`, fullPage: true });
    await assertFits(page, 'welcome form at 390 px');
    await assertAccessible(page, 'welcome form');
    await form.getByLabel('Password', { exact: true }).fill('barbara-liskov-1987');
    await form.getByLabel('Confirm password').fill('barbara-liskov-1987');
    await form.getByRole('button', { name: 'Set password' }).click();
    await page.getByRole('status').filter({ hasText: 'Your password is set; log in.' }).waitFor();
    await logIn(page, 'barbara@example.com', 'barbara-liskov-1987');
    await page.getByRole('heading', { name: 'Flags', exact: true }).waitFor();
    assert.equal(await signedInAs(page), 'Barbara viewer');
    assert.deepEqual(problems, []);
    await page.context().close();
  });

  it('serves the link pages without a session, under the UI’s strict CSP', async () => {
    for (const path of ['/new-user?invite=x', '/new-user?token=x', '/reset-password?token=x']) {
      const response = await fetch(`${serverUrl}${path}`);
      assert.equal(response.status, 200, path);
      assert.match(response.headers.get('content-security-policy') ?? '', /default-src 'self'/);
      assert.doesNotMatch(await response.text(), /<script>|<style|style=/);
    }
  });
});
