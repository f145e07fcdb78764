import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { adminRequest } from '../../scripts/demo/seed.js';
import { launchChromium, noChromium } from '../helpers/chromium.js';
import { startUiServer, type UiServer } from '../helpers/ui-server.js';
import { waitFor } from '../helpers/wait.js';

const ADMIN = '*:*.e2e-flag-list-admin';
const HOUR = 3_600_000;
/** Screenshots for a person to look at (not compared by the test). */
const SHOTS = '/tmp/flags-ui-list-';
/** More than one page of the list (50 a page). */
const DEFAULT_FLAGS = 55;
/** The longest name the Admin API takes (unleash-server 8.2's limit too: 100 characters). */
const MAX_NAME = `max-${'m'.repeat(92)}-end`;
/** The longest unleash-server's database holds (255), as an import or a migration may bring. */
const LONG_NAME = `long-${'n'.repeat(246)}-end`;
/** The longest description the Admin API takes. */
const LONG_DESCRIPTION = 'A description that goes on. '.repeat(400).slice(0, 10_000);

/**
 * The flag list as a team uses it: project and tag filters, filters and page in the address,
 * a layout that holds with long names and on a phone, and a session that ends while it is open.
 */
describe('the flag list in Chromium', { skip: noChromium }, () => {
  let server: UiServer | undefined;
  let serverUrl: string;
  let browser: Browser;
  /** The server's clock runs this far ahead of the machine's (expiry without waiting). */
  let aheadMs = 0;

  const admin = (method: string, path: string, body?: unknown) =>
    adminRequest(serverUrl, ADMIN, method, path, body);

  before(async () => {
    server = await startUiServer(ADMIN, { now: () => new Date(Date.now() + aheadMs) });
    serverUrl = server.url;
    await admin('POST', '/api/admin/user-admin', {
      username: 'ada',
      name: 'Ada Admin',
      password: 'ada-password-long-enough',
      rootRole: 'Admin',
    });
    await admin('POST', '/api/admin/projects', { id: 'payments', name: 'Payments' });
    await admin('POST', '/api/admin/tag-types', { name: 'team' });
    for (let index = 0; index < DEFAULT_FLAGS; index += 1) {
      await admin('POST', '/api/admin/projects/default/features', {
        name: `flag-${String(index).padStart(2, '0')}`,
        type: 'release',
      });
    }
    await admin('POST', '/api/admin/projects/payments/features', {
      name: 'checkout-v2',
      type: 'experiment',
      description: 'The new checkout',
    });
    await admin('POST', '/api/admin/features/checkout-v2/tags', {
      type: 'team',
      value: 'payments',
    });
    await admin('POST', '/api/admin/projects/payments/features', {
      name: 'refunds',
      type: 'release',
    });
    await admin('POST', '/api/admin/projects/default/features', {
      name: MAX_NAME,
      type: 'release',
      description: LONG_DESCRIPTION,
    });
    // The API takes names of up to 100 characters; a longer one (255, the most unleash-server's
    // database holds) is written into the database, as an older import could have left it.
    await server.db.query(
      `INSERT INTO features (name, project, type, description) VALUES ($1, 'default', 'release', $2)`,
      [LONG_NAME, LONG_DESCRIPTION],
    );
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    await server?.close();
  });

  async function signIn(width = 1280, height = 900, username = 'ada'): Promise<Page> {
    const context = await browser.newContext({ viewport: { width, height } });
    const page = await context.newPage();
    await page.goto(serverUrl);
    await page.getByLabel('User name').fill(username);
    await page.getByLabel('Password').fill(`${username}-password-long-enough`);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('heading', { name: 'Flags', exact: true }).waitFor();
    return page;
  }

  const rowNames = async (page: Page) =>
    (await page.locator('table.flags tbody th a').allTextContents()).map((name) => name.trim());
  const search = (page: Page) => new URL(page.url()).search;
  const filter = (page: Page) => page.getByRole('search', { name: 'Filter flags' });

  it('filters by project and by a tag picked from the server’s tags, shows the project column, and keeps filters and page in the address through reload and back', async () => {
    const page = await signIn();
    await page.getByRole('link', { name: 'checkout-v2' }).waitFor();
    const status = page.getByRole('navigation', { name: 'Pages' }).getByRole('status');
    assert.equal(await status.textContent(), `1–50 of ${DEFAULT_FLAGS + 4}`);

    // The second page: in the address, kept by a reload; back returns to the first.
    await page.getByRole('button', { name: 'Next' }).click();
    await waitFor(
      async () =>
        (await status.textContent()) === `51–${DEFAULT_FLAGS + 4} of ${DEFAULT_FLAGS + 4}`,
      10_000,
      'the second page',
    );
    assert.equal(search(page), '?page=2');
    await page.reload();
    await waitFor(
      async () => (await status.textContent())?.startsWith('51–') === true,
      10_000,
      'the second page after a reload',
    );
    await page.goBack();
    await waitFor(
      async () => (await status.textContent())?.startsWith('1–') === true,
      10_000,
      'the first page after back',
    );

    // The project filter and column.
    await filter(page).getByLabel('Project').selectOption('payments');
    await waitFor(
      async () => (await rowNames(page)).join() === 'refunds,checkout-v2',
      10_000,
      'only the flags of payments',
    );
    assert.equal(search(page), '?project=payments');
    const projectCells = await page
      .locator('table.flags tbody td[data-label="Project"]')
      .allTextContents();
    assert.deepEqual(projectCells, ['Payments', 'Payments']);
    assert.equal(await page.getByRole('columnheader', { name: 'Project' }).count(), 1);

    // The tag picker offers the tags there are, by type.
    const tagPicker = filter(page).getByLabel('Tag');
    await waitFor(
      async () => (await tagPicker.locator('option').allTextContents()).includes('team:payments'),
      10_000,
      'the tag picker lists team:payments',
    );
    await tagPicker.selectOption('team:payments');
    await waitFor(
      async () => (await rowNames(page)).join() === 'checkout-v2',
      10_000,
      'only the tagged flag',
    );
    assert.equal(search(page), '?project=payments&tag=team%3Apayments');
    await page.screenshot({ path: `${SHOTS}filtered.png`, fullPage: true });

    // A reload keeps both filters, in the list and in the controls.
    await page.reload();
    await page.getByRole('link', { name: 'checkout-v2' }).waitFor();
    assert.deepEqual(await rowNames(page), ['checkout-v2']);
    assert.equal(await filter(page).getByLabel('Project').inputValue(), 'payments');
    assert.equal(await filter(page).getByLabel('Tag').inputValue(), 'team:payments');

    // Back: the project filter alone; again: no filter.
    await page.goBack();
    await waitFor(
      async () => (await rowNames(page)).join() === 'refunds,checkout-v2',
      10_000,
      'back to the project filter alone',
    );
    assert.equal(await filter(page).getByLabel('Tag').inputValue(), '');
    await page.goBack();
    await page.getByRole('link', { name: 'checkout-v2' }).waitFor();
    assert.equal(search(page), '');

    // Typing a search replaces the address rather than adding a history entry per key.
    const entries = await page.evaluate('history.length');
    await filter(page).getByLabel('Search').pressSequentially('refu');
    await waitFor(
      async () => (await rowNames(page)).join() === 'refunds',
      10_000,
      'the search finds refunds',
    );
    assert.equal(search(page), '?q=refu');
    assert.equal(await page.evaluate('history.length'), entries);
    await page.context().close();
  });

  it('keeps the switches on screen with 100- and 255-character names and 10,000-character descriptions, and does not scroll sideways at 390 px', async () => {
    for (const [width, height] of [
      [1280, 900],
      [390, 844],
    ] as const) {
      const page = await signIn(width, height);
      // Both long names end in -end, which no other flag has.
      await filter(page).getByLabel('Search').fill('-end');
      await waitFor(
        async () => (await rowNames(page)).sort().join() === [LONG_NAME, MAX_NAME].join(),
        10_000,
        `the two long names at ${width} px`,
      );
      // A string, run in the page (no DOM types in this test's compilation).
      const overflow = await page.evaluate(
        'document.documentElement.scrollWidth - document.documentElement.clientWidth',
      );
      assert.equal(overflow, 0, `no sideways scroll at ${width} px`);
      for (const name of [MAX_NAME, LONG_NAME]) {
        for (const environment of ['development', 'production']) {
          const box = await page
            .getByRole('switch', { name: `${name} in ${environment}` })
            .boundingBox();
          assert.ok(box, `the ${environment} switch of ${name.length} characters at ${width} px`);
          assert.ok(
            box.x >= 0 && box.x + box.width <= width,
            `${environment} switch of ${name.length} characters on screen at ${width} px`,
          );
        }
      }
      // Each description is cut to a few lines, not the whole page.
      const descriptions = page.locator('table.flags .description');
      assert.equal(await descriptions.count(), 2);
      for (const description of await descriptions.all()) {
        const box = await description.boundingBox();
        assert.ok(box && box.height < 100, `short description at ${width} px`);
        assert.ok(box.x >= 0 && box.x + box.width <= width, `description on screen at ${width} px`);
      }
      await page.screenshot({ path: `${SHOTS}long-${width}.png`, fullPage: true });
      await page.context().close();
    }
  });

  it('an ended session: a toggle leads to the login page, and logging in goes back to the same filtered list', async () => {
    const page = await signIn();
    await page.goto(`${serverUrl}/?project=payments&sort=name`);
    await page.getByRole('link', { name: 'checkout-v2' }).waitFor();
    aheadMs += 49 * HOUR; // past the 48-hour maximum age
    try {
      await page.getByRole('switch', { name: 'refunds in development' }).click();
      await page.getByRole('button', { name: 'Log in' }).waitFor();
      await page.getByText('Your session ended').waitFor();
      assert.equal(await page.getByText('requires an API token').count(), 0);
      await page.screenshot({ path: `${SHOTS}session-ended.png` });
      assert.equal(search(page), '?project=payments&sort=name');
    } finally {
      aheadMs = 0;
    }
    await page.getByLabel('User name').fill('ada');
    await page.getByLabel('Password').fill('ada-password-long-enough');
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('link', { name: 'checkout-v2' }).waitFor();
    assert.deepEqual(await rowNames(page), ['checkout-v2', 'refunds']);
    assert.equal(search(page), '?project=payments&sort=name');
    assert.equal(
      await page.getByRole('switch', { name: 'refunds in development' }).isChecked(),
      false,
    );
    await page.context().close();
  });

  it('an ended session, then a sign-in that leaves the page (as single sign-on does): back at the same filtered list', async () => {
    const page = await signIn();
    await page.goto(`${serverUrl}/?project=payments`);
    await page.getByRole('link', { name: 'checkout-v2' }).waitFor();
    aheadMs += 49 * HOUR; // past the 48-hour maximum age
    try {
      await filter(page).getByRole('combobox', { name: 'Type' }).selectOption('release');
      await page.getByRole('button', { name: 'Log in' }).waitFor();
    } finally {
      aheadMs = 0;
    }
    // The sign-in happens elsewhere and comes back to the start page (the expired cookie gone:
    // the clock is back where it was).
    await page.context().clearCookies();
    await page.goto(serverUrl);
    await page.getByLabel('User name').fill('ada');
    await page.getByLabel('Password').fill('ada-password-long-enough');
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('link', { name: 'refunds' }).waitFor();
    assert.equal(search(page), '?project=payments&type=release');
    assert.deepEqual(await rowNames(page), ['refunds']);
    await page.context().close();
  });

  it('a session ended elsewhere (the user deleted): the open list shows the login page by itself', async () => {
    const { id } = (await admin('POST', '/api/admin/user-admin', {
      username: 'dan',
      name: 'Dan',
      password: 'dan-password-long-enough',
      rootRole: 'Editor',
    })) as { id: number };
    const page = await signIn(1280, 900, 'dan');
    await page.getByRole('link', { name: 'checkout-v2' }).waitFor();
    await admin('DELETE', `/api/admin/user-admin/${id}`);
    // No click: the admin event stream ends with the session, and the page learns why.
    await page.getByRole('button', { name: 'Log in' }).waitFor({ timeout: 20_000 });
    await page.getByText('Your session ended').waitFor();
    await page.context().close();
  });
});
