import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { adminRequest } from '../../scripts/demo/seed.js';
import { accessibilityViolations, launchChromium, noChromium } from '../helpers/chromium.js';
import { startUiServer, type UiServer } from '../helpers/ui-server.js';
import { waitFor } from '../helpers/wait.js';

const OPERATOR = '*:*.e2e-admin-pages-operator';
const PASSWORD = 'a-password-long-enough';
/** Screenshots for a person to look at (not compared by the test). */
const SHOTS = '/tmp/flags-ui-admin-';
const WIDE = { width: 1280, height: 900 };
const NARROW = { width: 390, height: 844 };

/** The configuration pages: address, heading, and whether a Viewer may see them. */
const PAGES = [
  { path: '/projects', heading: 'Projects', viewer: true },
  { path: '/environments', heading: 'Environments', viewer: true },
  { path: '/api-tokens', heading: 'API tokens', viewer: false },
  { path: '/users', heading: 'Users and invite links', viewer: false },
  { path: '/segments', heading: 'Segments', viewer: true },
  { path: '/context-fields', heading: 'Context fields', viewer: true },
  { path: '/tag-types', heading: 'Tag types', viewer: true },
  { path: '/strategy-types', heading: 'Strategy types', viewer: true },
] as const;

/**
 * Waits until the focused element's text is `text`: the page moves focus in an effect that runs
 * after the render the click caused, so it is not there the moment the click returns.
 */
async function focusReaches(page: Page, text: string): Promise<void> {
  const focused = () => page.evaluate('document.activeElement?.textContent') as Promise<unknown>;
  await waitFor(async () => (await focused()) === text, 5_000, `focus on "${text}"`);
}

/** The configuration pages on the resource page: list, form, delete with the in-use answer. */
describe('configuration pages in Chromium', { skip: noChromium }, () => {
  let server: UiServer | undefined;
  let serverUrl: string;
  let browser: Browser;

  const admin = (method: string, path: string, body?: unknown) =>
    adminRequest(serverUrl, OPERATOR, method, path, body);

  before(async () => {
    server = await startUiServer(OPERATOR);
    serverUrl = server.url;
    for (const [username, rootRole] of [
      ['ada', 'Admin'],
      ['vic', 'Viewer'],
    ]) {
      await admin('POST', '/api/admin/user-admin', { username, password: PASSWORD, rootRole });
    }
    // Long texts, to see that the layout holds them.
    await admin('POST', '/api/admin/projects', {
      id: 'a'.repeat(100),
      name: 'A project with a long name '.repeat(3).trim(),
      description: 'A description that goes on and on. '.repeat(27).trim(),
    });
    await admin('POST', '/api/admin/tag-types', { name: 'team', description: 'Owning team' });
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    await server?.close();
  });

  async function signIn(username: string, viewport = WIDE, problems: string[] = []) {
    const context = await browser.newContext({ viewport });
    const page = await context.newPage();
    page.on('pageerror', (error) => problems.push(error.message));
    page.on('console', (message) => {
      // Who is signed in before logging in (401), and refusals the test asks for (400, 409).
      if (message.type() === 'error' && !/status of 40[019]/.test(message.text())) {
        problems.push(message.text());
      }
    });
    await page.goto(serverUrl);
    await page.getByLabel('User name').fill(username);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('heading', { name: 'Flags', exact: true }).waitFor();
    return page;
  }

  async function assertAccessible(page: Page, what: string): Promise<void> {
    assert.deepEqual(await accessibilityViolations(page), [], `${what}: accessibility violations`);
  }

  async function assertFits(page: Page, what: string): Promise<void> {
    const [scrollWidth, width] = (await page.evaluate(
      '[document.documentElement.scrollWidth, window.innerWidth]',
    )) as [number, number];
    assert.ok(scrollWidth <= width, `${what}: ${scrollWidth} px wide in a ${width} px window`);
  }

  it('every page, as an Admin and as a Viewer, wide and at 390 px: no serious accessibility violation, nothing wider than the window; a Viewer gets no write controls and no Admin-only page', async () => {
    for (const username of ['ada', 'vic']) {
      for (const viewport of [WIDE, NARROW]) {
        const problems: string[] = [];
        const page = await signIn(username, viewport, problems);
        const nav = page.getByRole('navigation', { name: 'Configure' });
        for (const entry of PAGES) {
          const what = `${entry.path} as ${username} at ${viewport.width} px`;
          const visible = username === 'ada' || entry.viewer;
          assert.equal(
            await nav
              .getByRole('link', { name: entry.heading.split(' and')[0]!, exact: true })
              .count(),
            visible ? 1 : 0,
            what,
          );
          await page.goto(`${serverUrl}${entry.path}`);
          await page
            .getByRole('heading', {
              name: entry.heading.split(visible ? '|' : ' and')[0]!,
              level: 1,
            })
            .waitFor();
          if (visible) await page.locator('table, p.muted:has-text("yet")').first().waitFor();
          else await page.getByText(/Only Admins see/).waitFor();
          if (username === 'vic') {
            assert.equal(
              await page.getByRole('button', { name: /^(New|Edit|Delete|Revoke)\b/ }).count(),
              0,
              what,
            );
          }
          await page.screenshot({
            path: `${SHOTS}${username}${entry.path.replace('/', '-')}-${viewport.width}.png`,
            fullPage: true,
          });
          await assertFits(page, what);
          await assertAccessible(page, what);
        }
        assert.deepEqual(problems, []);
        await page.context().close();
      }
    }
  });

  it('context fields: errors beside the field, create, edit, and delete refused while a flag uses one, naming it', async () => {
    const problems: string[] = [];
    const page = await signIn('ada', WIDE, problems);
    await page.goto(`${serverUrl}/context-fields`);
    await page.getByRole('button', { name: 'New context field' }).click();
    const form = page.getByRole('form', { name: 'New context field' });
    // Focus moves to the form, so a keyboard or screen reader user is there.
    await focusReaches(page, 'New context field');
    await form.getByLabel('Name').fill('has spaces');
    await form.getByRole('button', { name: 'Create context field' }).click();
    const name = form.getByLabel('Name');
    await form.locator('#context-fields-field-name-error').waitFor();
    assert.equal(await name.getAttribute('aria-invalid'), 'true');
    assert.match(await form.locator('#context-fields-field-name-error').innerText(), /pattern/);
    await page.screenshot({ path: `${SHOTS}field-error.png`, fullPage: true });

    await name.fill('region');
    await form.getByLabel('Legal values').fill('eu, us');
    await form.getByRole('button', { name: 'Create context field' }).click();
    const row = page
      .getByRole('row')
      .filter({ has: page.getByRole('rowheader', { name: 'region' }) });
    await row.getByText('eu, us').waitFor();

    await row.getByRole('button', { name: 'Edit region' }).click();
    const edit = page.getByRole('form', { name: 'Edit context field region' });
    assert.equal(await edit.getByLabel('Name').getAttribute('readonly'), '');
    await edit.getByLabel('Description').fill('Where the customer is');
    await edit.getByLabel('Legal values').fill('eu, us, apac');
    await edit.getByRole('button', { name: 'Save' }).click();
    await row.getByText('eu, us, apac').waitFor();
    await row.getByText('Where the customer is').waitFor();

    // A flag's strategy uses it: the delete is refused with the server's answer, naming the flag.
    await admin('POST', '/api/admin/projects/default/features', { name: 'regional-banner' });
    await admin(
      'POST',
      '/api/admin/projects/default/features/regional-banner/environments/development/strategies',
      {
        name: 'default',
        constraints: [{ contextName: 'region', operator: 'IN', values: ['eu'] }],
      },
    );
    await row.locator('summary').click();
    await row.getByText('regional-banner (development)').waitFor();
    await row.getByRole('button', { name: 'Delete region' }).click();
    await page
      .getByRole('dialog', { name: 'Delete context field?' })
      .getByRole('button', { name: 'Delete' })
      .click();
    const refusal = page.getByRole('alert').filter({ hasText: 'Context field "region" is in use' });
    await refusal.waitFor();
    assert.match(await refusal.innerText(), /regional-banner/);
    await page.screenshot({ path: `${SHOTS}in-use.png`, fullPage: true });
    assert.equal(await row.count(), 1, 'still listed');

    await admin('DELETE', '/api/admin/projects/default/features/regional-banner');
    await admin('DELETE', '/api/admin/archive/regional-banner');
    await row.getByRole('button', { name: 'Delete region' }).click();
    await page
      .getByRole('dialog', { name: 'Delete context field?' })
      .getByRole('button', { name: 'Delete' })
      .click();
    await page.getByRole('status').filter({ hasText: 'region is deleted.' }).waitFor();
    assert.equal(await row.count(), 0);
    assert.deepEqual(problems, []);
    await page.context().close();
  });

  it('users: an Admin disables a user, whose session ends, then enables them', async () => {
    await admin('POST', '/api/admin/user-admin', {
      username: 'dora',
      password: PASSWORD,
      rootRole: 'Editor',
    });
    const dora = await signIn('dora');
    const problems: string[] = [];
    const page = await signIn('ada', WIDE, problems);
    await page.goto(`${serverUrl}/users`);
    // She has no name: her row is the one with her user name.
    const row = page
      .getByRole('row')
      .filter({ has: page.getByRole('cell', { name: 'dora', exact: true }) });
    await row.getByRole('button', { name: 'Disable dora' }).click();
    await row.getByText('Disabled', { exact: true }).waitFor();
    const listed = (await admin('GET', '/api/admin/user-admin')) as {
      users: { username: string; disabled: boolean }[];
    };
    assert.equal(listed.users.find((user) => user.username === 'dora')?.disabled, true);
    // Her open session has ended (a refused login is the API's test: logins here are rate limited).
    const who = await dora.request.get(`${serverUrl}/api/admin/user`);
    assert.equal(who.status(), 401);
    await row.getByRole('button', { name: 'Enable dora' }).click();
    await row.getByText('Active', { exact: true }).waitFor();
    const relisted = (await admin('GET', '/api/admin/user-admin')) as typeof listed;
    assert.equal(relisted.users.find((user) => user.username === 'dora')?.disabled, false);
    assert.deepEqual(problems, []);
    await dora.context().close();
    await page.context().close();
  });

  it("a row's own buttons: an environment disabled and enabled, a strategy deprecated and reactivated, an invite link disabled", async () => {
    await admin('POST', '/api/admin/environments', { name: 'staging', type: 'test' });
    await admin('POST', '/api/admin/strategies', { name: 'by-region', parameters: [] });
    const { rootRoles } = (await admin('GET', '/api/admin/user-admin')) as {
      rootRoles: { id: number; name: string }[];
    };
    await admin('POST', '/api/admin/invite-link/tokens', {
      name: 'contractors',
      role: rootRoles.find((role) => role.name === 'Viewer')?.id,
      expiresAt: new Date(Date.now() + 86_400_000).toISOString(),
    });
    const problems: string[] = [];
    const page = await signIn('ada', WIDE, problems);
    const rowOf = (name: string) =>
      page.getByRole('row').filter({ has: page.getByRole('rowheader', { name, exact: true }) });

    await page.goto(`${serverUrl}/environments`);
    const staging = rowOf('staging');
    await staging.getByRole('button', { name: 'Disable staging' }).click();
    await page.getByRole('status').filter({ hasText: 'staging is disabled.' }).waitFor();
    await staging.getByRole('button', { name: 'Enable staging' }).click();
    await page.getByRole('status').filter({ hasText: 'staging is enabled.' }).waitFor();
    await staging.getByRole('button', { name: 'Disable staging' }).waitFor();

    await page.goto(`${serverUrl}/strategy-types`);
    const byRegion = rowOf('by-region');
    await byRegion.getByRole('button', { name: 'Deprecate by-region' }).click();
    await byRegion.getByRole('button', { name: 'Reactivate by-region' }).click();
    await byRegion.getByRole('button', { name: 'Deprecate by-region' }).waitFor();
    const strategy = (await admin('GET', '/api/admin/strategies/by-region')) as {
      deprecated: boolean;
    };
    assert.equal(strategy.deprecated, false);

    await page.goto(`${serverUrl}/users`);
    const link = rowOf('contractors');
    await link.getByRole('button', { name: 'Disable invite link contractors' }).click();
    await link.getByRole('button', { name: 'Enable invite link contractors' }).waitFor();
    await link.getByText('disabled', { exact: true }).waitFor();
    assert.deepEqual(problems, []);
    await page.context().close();
    // Every project got the environment: the later tests see the projects as they were.
    await admin('DELETE', '/api/admin/environments/staging');
  });

  it('segments: edited in the same form, with the flags that use them listed', async () => {
    const created = (await admin('POST', '/api/admin/segments', {
      name: 'testers',
      constraints: [{ contextName: 'userId', operator: 'IN', values: ['alice'] }],
    })) as { id: number };
    await admin('POST', '/api/admin/projects/default/features', { name: 'tested-feature' });
    await admin(
      'POST',
      '/api/admin/projects/default/features/tested-feature/environments/development/strategies',
      { name: 'default', constraints: [], segments: [created.id] },
    );
    const problems: string[] = [];
    const page = await signIn('ada', WIDE, problems);
    await page.goto(`${serverUrl}/segments`);
    const row = page
      .getByRole('row')
      .filter({ has: page.getByRole('rowheader', { name: 'testers' }) });
    await row.locator('summary').click();
    await row.getByText('tested-feature (default, development)').waitFor();
    await row.getByRole('button', { name: 'Edit testers' }).click();
    const form = page.getByRole('form', { name: 'Edit segment testers' });
    await form.locator('#segments-field-name').fill('beta-testers');
    await form.locator('#segments-field-constraints-c0-values').fill('alice, bob');
    await form.getByLabel('Description').focus();
    await form.getByRole('button', { name: 'Save' }).click();
    const renamed = page
      .getByRole('row')
      .filter({ has: page.getByRole('rowheader', { name: 'beta-testers' }) });
    await renamed.getByText('userId is one of alice, bob').waitFor();
    const stored = (await admin('GET', `/api/admin/segments/${created.id}`)) as {
      name: string;
      constraints: { values: string[] }[];
    };
    assert.equal(stored.name, 'beta-testers');
    assert.deepEqual(stored.constraints[0]?.values, ['alice', 'bob']);
    assert.deepEqual(problems, []);
    await page.context().close();
  });

  it('with the keyboard alone: a tag type is created, and a project’s environment is switched off and on', async () => {
    const problems: string[] = [];
    const page = await signIn('ada', WIDE, problems);
    await page.goto(`${serverUrl}/tag-types`);
    await page.getByRole('button', { name: 'New tag type' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('form', { name: 'New tag type' }).waitFor();
    await page.keyboard.press('Tab');
    await page.keyboard.type('owner');
    await page.keyboard.press('Tab');
    await page.keyboard.type('Who to ask');
    await page.keyboard.press('Enter');
    await page.getByRole('rowheader', { name: 'owner' }).waitFor();
    // The keyboard is back where it was: on the button that opens the form.
    await focusReaches(page, 'New tag type');
    assert.deepEqual(
      ((await admin('GET', '/api/admin/tag-types/owner')) as { tagType: { description: string } })
        .tagType.description,
      'Who to ask',
    );

    await page.goto(`${serverUrl}/projects`);
    const row = page
      .getByRole('row')
      .filter({ has: page.getByRole('rowheader', { name: 'default' }) });
    await row.locator('summary').focus();
    await page.keyboard.press('Enter');
    const production = row.getByRole('switch', { name: 'production in default' });
    await production.waitFor();
    assert.equal(await production.isChecked(), true);
    await production.focus();
    await page.keyboard.press('Space');
    await waitFor(async () => !(await production.isChecked()), 10_000, 'production off');
    let project = (await admin('GET', '/api/admin/projects/default')) as { environments: string[] };
    assert.deepEqual(project.environments, ['development']);
    await page.keyboard.press('Space');
    await waitFor(async () => await production.isChecked(), 10_000, 'production on');
    project = (await admin('GET', '/api/admin/projects/default')) as { environments: string[] };
    assert.deepEqual(project.environments.sort(), ['development', 'production']);
    assert.deepEqual(problems, []);
    await page.context().close();
  });
});
