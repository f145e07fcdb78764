import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { buildApp, type Database, loadConfig, openDatabase } from '@flags/server';
import type { FastifyInstance } from 'fastify';
import type { Browser, Page } from 'playwright-core';
import { type TestAccount, TestOidcProvider } from '../../packages/server/test/oidc-provider.js';
import { buildUi } from '../../scripts/build-ui.js';
import { adminRequest } from '../../scripts/demo/seed.js';
import { launchChromium, noChromium } from '../helpers/chromium.js';

const ADMIN = '*:*.e2e-oidc-admin';
const CLIENT_ID = 'flags-e2e';
const SECRET = 'e2e-client-secret';
/** Screenshots for a person to look at (not compared by the test). */
const SHOTS = '/tmp/flags-ui-oidc-';

/** A free loopback port: the public URL (and so the callback) names it before the server listens. */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/**
 * Single sign-on as a person meets it in Chromium, against oidc-provider (a certified OpenID
 * provider) started in the test: "Sign in with OpenID Connect" on the login page, the provider's
 * sign-in page, back signed in with the role the provider's groups give; a changed group gives
 * another role at the next sign-in; an e-mail of another domain is refused with a page saying so.
 */
describe('single sign-on with OpenID Connect in Chromium', { skip: noChromium }, () => {
  let server: FastifyInstance | undefined;
  let db: Database | undefined;
  let serverUrl: string;
  let browser: Browser;
  const accounts = new Map<string, TestAccount>();
  let provider: TestOidcProvider;

  before(async () => {
    await buildUi();
    const port = await freePort();
    serverUrl = `http://127.0.0.1:${port}`;
    provider = new TestOidcProvider({
      clientId: CLIENT_ID,
      secret: SECRET,
      redirectUri: `${serverUrl}/auth/oidc/callback`,
      postLogoutRedirectUri: `${serverUrl}/signed-out`,
      accounts,
    });
    await provider.start();
    const config = loadConfig(
      {},
      { port, host: '127.0.0.1', publicUrl: serverUrl, adminTokens: [ADMIN] },
    );
    db = await openDatabase({ databaseUrl: undefined, dataDir: undefined });
    server = await buildApp(config, { db, logger: false });
    await server.listen({ port, host: '127.0.0.1' });
    browser = await launchChromium();

    await adminRequest(serverUrl, ADMIN, 'POST', '/api/admin/auth/oidc/settings', {
      enabled: true,
      discoverUrl: provider.discoverUrl,
      clientId: CLIENT_ID,
      secret: SECRET,
      autoCreate: true,
      defaultRootRole: 'Viewer',
      emailDomains: 'example.com',
      enableSingleSignOut: true,
      enableGroupSyncing: true,
      groupJsonPath: 'groups',
      addGroupsScope: true,
      idTokenSigningAlgorithm: 'RS256',
    });
    const { roles } = (await adminRequest(serverUrl, ADMIN, 'GET', '/api/admin/roles')) as {
      roles: { id: number; name: string }[];
    };
    const role = (name: string) => roles.find((entry) => entry.name === name)!.id;
    await adminRequest(serverUrl, ADMIN, 'POST', '/api/admin/groups', {
      name: 'Flag admins',
      rootRole: role('Admin'),
      mappingsSSO: ['flags-admins'],
    });
    await adminRequest(serverUrl, ADMIN, 'POST', '/api/admin/groups', {
      name: 'Flag editors',
      rootRole: role('Editor'),
      mappingsSSO: ['flags-editors'],
    });
  });

  after(async () => {
    await browser?.close();
    await server?.close();
    await db?.close();
    await provider?.stop();
  });

  /** A fresh browser (no session here or at the provider) through the login page as `login`. */
  async function signIn(login: string): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await page.goto(serverUrl);
    await page.getByRole('link', { name: 'Sign in with OpenID Connect' }).click();
    await page.waitForURL((url) => url.origin === provider.issuer);
    await page.locator('input[name="login"]').fill(login);
    await page.locator('input[name="password"]').fill('any password');
    await page.getByRole('button', { name: 'Sign-in' }).click();
    await page.waitForURL((url) => url.origin === serverUrl);
    return page;
  }

  async function signedInRole(page: Page): Promise<string> {
    await page.getByRole('heading', { name: 'Flags', exact: true }).waitFor();
    return (await page.locator('header .role').textContent()) ?? '';
  }

  async function userByEmail(email: string) {
    const { users } = (await adminRequest(serverUrl, ADMIN, 'GET', '/api/admin/user-admin')) as {
      users: { email: string; rootRole: number; id: number }[];
    };
    return users.find((user) => user.email === email);
  }

  it('signs a new person in through the provider with the default role', async () => {
    accounts.set('nora', { email: 'nora@example.com', name: 'Nora', groups: [] });
    const page = await signIn('nora');
    assert.equal(await signedInRole(page), 'viewer');
    await page.screenshot({ path: `${SHOTS}signed-in.png` });
    const nora = await userByEmail('nora@example.com');
    assert.ok(nora, 'the user was created at the first sign-in');
    const cookies = await page.context().cookies(serverUrl);
    const session = cookies.find((cookie) => cookie.name === 'unleash-session');
    assert.ok(session?.httpOnly);
    await page.context().close();
  });

  it('gives the mapped admin group Admin, and the lower role once the provider moved the person', async () => {
    accounts.set('grace', { email: 'grace@example.com', groups: ['flags-admins', 'staff'] });
    const asAdmin = await signIn('grace');
    assert.equal(await signedInRole(asAdmin), 'admin');
    await asAdmin.context().close();

    accounts.set('grace', { email: 'grace@example.com', groups: ['flags-editors', 'staff'] });
    const asEditor = await signIn('grace');
    assert.equal(await signedInRole(asEditor), 'editor');

    // Single sign-out: the logout goes on to the provider's end-session endpoint and back here.
    await asEditor.getByRole('button', { name: 'Log out' }).click();
    await asEditor.waitForURL((url) => url.origin === provider.issuer);
    const confirm = asEditor.getByRole('button', { name: 'Yes, sign me out' });
    await Promise.race([
      confirm.click(),
      asEditor.waitForURL((url) => url.origin === serverUrl && url.pathname === '/signed-out'),
    ]).catch(() => undefined);
    await asEditor.getByText('You are signed out.').waitFor();
    assert.equal(new URL(asEditor.url()).pathname, '/signed-out');
    // The provider's session ended too: signing in again in this browser asks for the login.
    await asEditor.getByRole('link', { name: 'Sign in with OpenID Connect' }).click();
    await asEditor.waitForURL((url) => url.origin === provider.issuer);
    await asEditor.locator('input[name="login"]').waitFor();
    await asEditor.context().close();
  });

  it('refuses an e-mail outside emailDomains with a page that says why, and no session', async () => {
    accounts.set('mallory', { email: 'mallory@elsewhere.org', groups: ['flags-admins'] });
    const page = await signIn('mallory');
    await page.getByRole('heading', { name: 'Not signed in' }).waitFor();
    await page.getByText('e-mail domain elsewhere.org is not in emailDomains').waitFor();
    await page.screenshot({ path: `${SHOTS}refused.png` });
    const cookies = await page.context().cookies(serverUrl);
    assert.equal(
      cookies.some((cookie) => cookie.name === 'unleash-session'),
      false,
    );
    assert.equal(await userByEmail('mallory@elsewhere.org'), undefined);
    await page.getByRole('link', { name: 'Back to the login page' }).click();
    await page.getByRole('link', { name: 'Sign in with OpenID Connect' }).waitFor();
    await page.context().close();
  });
});
