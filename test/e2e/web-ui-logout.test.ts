import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { adminRequest } from '../../scripts/demo/seed.js';
import { launchChromium, noChromium } from '../helpers/chromium.js';
import { startUiServer, type UiServer } from '../helpers/ui-server.js';

const ADMIN = '*:*.e2e-logout-admin';
const HOUR = 3_600_000;
/** Screenshots for a person to look at (not compared by the test). */
const SHOTS = '/tmp/flags-ui-';

/**
 * The end of a session as a person meets it in the browser: "Log out", a session that expired,
 * a user an Admin deleted. Each time the cookie the browser held opens nothing afterwards.
 */
describe('the end of a session in Chromium', { skip: noChromium }, () => {
  let server: UiServer | undefined;
  let serverUrl: string;
  let browser: Browser;
  /** The server's clock runs this far ahead of the machine's (expiry without waiting). */
  let aheadMs = 0;

  before(async () => {
    server = await startUiServer(ADMIN, { now: () => new Date(Date.now() + aheadMs) });
    serverUrl = server.url;
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    await server?.close();
  });

  const password = (username: string) => `${username}-password-long-enough`;

  async function createUser(username: string, rootRole: string): Promise<number> {
    const created = (await adminRequest(serverUrl, ADMIN, 'POST', '/api/admin/user-admin', {
      username,
      name: username,
      password: password(username),
      rootRole,
    })) as { id: number };
    return created.id;
  }

  /** A fresh browser context signed in as `username` through the login page. */
  async function signIn(username: string): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await page.goto(serverUrl);
    await page.getByLabel('User name').fill(username);
    await page.getByLabel('Password').fill(password(username));
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('heading', { name: 'Flags', exact: true }).waitFor();
    return page;
  }

  /** The session cookie the browser holds, as a `Cookie` header. */
  async function sessionCookie(page: Page): Promise<string> {
    const cookies = await page.context().cookies(serverUrl);
    const session = cookies.find((cookie) => cookie.name === 'unleash-session');
    assert.ok(session, 'the browser holds a session cookie');
    assert.equal(session.httpOnly, true);
    return `${session.name}=${session.value}`;
  }

  const statusWith = async (cookie: string) =>
    (await fetch(`${serverUrl}/api/admin/user`, { headers: { cookie } })).status;

  it('an Admin clicks "Log out": the page says so and the old cookie gets 401', async () => {
    await createUser('ada', 'Admin');
    const page = await signIn('ada');
    const cookie = await sessionCookie(page);
    assert.equal(await statusWith(cookie), 200);
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByText('You are signed out.').waitFor();
    await page.screenshot({ path: `${SHOTS}signed-out.png` });
    assert.equal(new URL(page.url()).pathname, '/signed-out');
    assert.equal(await statusWith(cookie), 401);
    const left = await page.context().cookies(serverUrl);
    assert.equal(
      left.some((entry) => entry.name === 'unleash-session'),
      false,
      'the browser dropped the cookie',
    );
    await page.context().close();
  });

  it('an expired session: the old cookie gets 401 and the page asks to log in', async () => {
    await createUser('eve', 'Editor');
    const page = await signIn('eve');
    const cookie = await sessionCookie(page);
    aheadMs += 49 * HOUR; // past the 48-hour maximum age
    try {
      assert.equal(await statusWith(cookie), 401);
      await page.reload();
      await page.getByRole('button', { name: 'Log in' }).waitFor();
    } finally {
      aheadMs = 0;
    }
    await page.context().close();
  });

  it('a deleted user: the old cookie gets 401 and the page asks to log in', async () => {
    const id = await createUser('dan', 'Viewer');
    const page = await signIn('dan');
    const cookie = await sessionCookie(page);
    await adminRequest(serverUrl, ADMIN, 'DELETE', `/api/admin/user-admin/${id}`);
    assert.equal(await statusWith(cookie), 401);
    await page.reload();
    await page.getByRole('button', { name: 'Log in' }).waitFor();
    await page.context().close();
  });
});
