import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { adminRequest, demoImport } from '../../scripts/demo/seed.js';
import { accessibilityViolations, launchChromium, noChromium } from '../helpers/chromium.js';
import { startUiServer, type UiServer } from '../helpers/ui-server.js';
import { waitFor } from '../helpers/wait.js';

const ADMIN = '*:*.e2e-a11y-admin';
/** Screenshots for a person to look at (not compared by the test). */
const SHOTS = '/tmp/flags-ui-a11y-';
const PASSWORD = 'ada-password-long-enough';

/** The pages of the flag list, import and export, Insights and the event log, checked by axe-core. */
const PAGES = [
  { path: '/', heading: 'Flags' },
  { path: '/?project=payments&tag=simple%3Apayments', heading: 'Flags' },
  { path: '/archive', heading: 'Archived flags' },
  { path: '/flags/payments/checkout-v2', heading: 'checkout-v2 in payments' },
  { path: '/events?type=feature-created', heading: 'Event log' },
  { path: '/import-export', heading: 'Import and export' },
  { path: '/instance-insights', heading: 'Insights' },
];

/** axe-core and the keyboard on the flag list and the pages around it. */
describe('accessibility of the web UI in Chromium', { skip: noChromium }, () => {
  let server: UiServer | undefined;
  let serverUrl: string;
  let browser: Browser;

  const admin = (method: string, path: string, body?: unknown) =>
    adminRequest(serverUrl, ADMIN, method, path, body);

  before(async () => {
    server = await startUiServer(ADMIN);
    serverUrl = server.url;
    await admin('POST', '/api/admin/user-admin', {
      username: 'ada',
      name: 'Ada Admin',
      password: PASSWORD,
      rootRole: 'Admin',
    });
    await admin('POST', '/api/admin/projects', { id: 'payments', name: 'Payments' });
    await admin('POST', '/api/admin/projects/payments/features', {
      name: 'checkout-v2',
      type: 'experiment',
      description: 'The new checkout',
    });
    await admin('POST', '/api/admin/features/checkout-v2/tags', {
      type: 'simple',
      value: 'payments',
    });
    await admin('POST', '/api/admin/projects/default/features', { name: 'old-banner' });
    await admin('DELETE', '/api/admin/projects/default/features/old-banner');
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    await server?.close();
  });

  async function signIn(width: number, height: number): Promise<Page> {
    const context = await browser.newContext({ viewport: { width, height } });
    const page = await context.newPage();
    await page.goto(serverUrl);
    await page.getByLabel('User name').fill('ada');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('heading', { name: 'Flags', exact: true }).waitFor();
    return page;
  }

  /** axe-core's WCAG A and AA rules on the page as it is now: no serious or critical violation. */
  async function assertAccessible(page: Page, what: string): Promise<void> {
    assert.deepEqual(await accessibilityViolations(page), [], `${what}: accessibility violations`);
  }

  it('axe-core finds no serious or critical violation on each page, at 1280 px and at 390 px, where nothing scrolls sideways', async () => {
    for (const [width, height] of [
      [1280, 900],
      [390, 844],
    ] as const) {
      const page = await signIn(width, height);
      for (const { path, heading } of PAGES) {
        await page.goto(`${serverUrl}${path}`);
        await page.getByRole('heading', { name: heading, exact: true, level: 1 }).waitFor();
        // What each page loads after its heading: the rows, charts and choices.
        await page.waitForLoadState('networkidle');
        const what = `${path} at ${width} px`;
        await assertAccessible(page, what);
        const [scrollWidth, innerWidth] = (await page.evaluate(
          '[document.documentElement.scrollWidth, window.innerWidth]',
        )) as [number, number];
        assert.ok(scrollWidth <= innerWidth, `${what}: ${scrollWidth} px wide`);
        const name = path.split('?')[0]!.replaceAll('/', '-').replace(/^-$/, '-list');
        await page.screenshot({ path: `${SHOTS}${width}${name}.png`, fullPage: true });
      }
      // The import's validation result and an export's download link, as they appear.
      await page.goto(`${serverUrl}/import-export`);
      await page.getByRole('heading', { name: 'Import and export' }).waitFor();
      await page.waitForLoadState('networkidle');
      // The demo's export names a segment this server does not have: an error listed.
      await page.getByLabel('Export file').setInputFiles({
        name: 'demo.json',
        mimeType: 'application/json',
        buffer: Buffer.from(JSON.stringify(demoImport().data)),
      });
      await page.getByRole('button', { name: 'Validate' }).click();
      await page
        .getByRole('region', { name: 'Validation of demo.json' })
        .getByText('These segments do not exist on this server:')
        .waitFor();
      await page.getByRole('button', { name: 'Export', exact: true }).click();
      await page.getByRole('link', { name: /^Download/ }).waitFor();
      await assertAccessible(page, `import validation at ${width} px`);
      await page.screenshot({ path: `${SHOTS}${width}-import-validated.png`, fullPage: true });
      await page.context().close();
    }
  });

  /** Tab (or Shift+Tab) until the focused element is `name`; at most 80 steps. */
  async function tabTo(page: Page, name: string, back = false): Promise<void> {
    const seen: string[] = [];
    for (let step = 0; step < 80; step += 1) {
      const focused = (await page.evaluate(`(() => {
        const element = document.activeElement;
        if (!element || element === document.body) return '';
        let name = element.getAttribute('aria-label') || element.textContent;
        if (!element.getAttribute('aria-label') && element.labels && element.labels[0]) {
          // The label's own words, without the options of a select inside it.
          const label = element.labels[0].cloneNode(true);
          for (const control of label.querySelectorAll('select, input, textarea')) control.remove();
          name = label.textContent;
        }
        return name.replace(/\\s+/g, ' ').trim();
      })()`)) as string;
      if (focused === name) return;
      seen.push(focused);
      await page.keyboard.press(back ? 'Shift+Tab' : 'Tab');
    }
    assert.fail(`no focusable element named ${name}: ${seen.slice(0, 12).join(' | ')}`);
  }

  /** The focused element shows it has the focus (an outline of its own or on its switch track). */
  async function assertFocusVisible(page: Page, what: string): Promise<void> {
    const visible = await page.evaluate(`(() => {
      const element = document.activeElement;
      const shown = element.getAttribute('role') === 'switch' ? element.nextElementSibling : element;
      const style = getComputedStyle(shown);
      return element.matches(':focus-visible') && style.outlineStyle !== 'none' &&
        parseFloat(style.outlineWidth) >= 2;
    })()`);
    assert.equal(visible, true, `${what}: focus visible`);
  }

  it('with the keyboard alone: log in, create a flag, turn it on in development and, through the confirmation, in production', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await page.goto(serverUrl);
    // The user name field has the focus when the page opens.
    await page.getByRole('button', { name: 'Log in' }).waitFor();
    await page.keyboard.type('ada');
    await page.keyboard.press('Tab');
    await page.keyboard.type(PASSWORD);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Flags', exact: true }).waitFor();

    await tabTo(page, 'New flag');
    await assertFocusVisible(page, 'New flag');
    await page.keyboard.press('Enter');
    await tabTo(page, 'Name');
    await page.keyboard.type('keyboard-flag');
    await tabTo(page, 'Type');
    // A select moves with the arrow keys: release → experiment.
    await page.keyboard.press('ArrowDown');
    await tabTo(page, 'Create flag');
    await assertFocusVisible(page, 'Create flag');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'keyboard-flag in default' }).waitFor();

    await tabTo(page, 'keyboard-flag in development');
    await assertFocusVisible(page, 'the development switch');
    await page.keyboard.press('Space');
    const development = page.getByRole('switch', { name: 'keyboard-flag in development' });
    await waitFor(async () => development.isChecked(), 10_000, 'on in development');

    await tabTo(page, 'keyboard-flag in production');
    await page.keyboard.press('Space');
    const dialog = page.getByRole('dialog', { name: 'Turn keyboard-flag on in production?' });
    await dialog.waitFor();
    await tabTo(page, 'Turn on');
    await assertFocusVisible(page, 'Turn on');
    await page.screenshot({ path: `${SHOTS}keyboard-confirm.png` });
    await page.keyboard.press('Enter');
    const production = page.getByRole('switch', { name: 'keyboard-flag in production' });
    await waitFor(async () => production.isChecked(), 10_000, 'on in production');

    const flag = (await admin('GET', '/api/admin/projects/default/features/keyboard-flag')) as {
      type: string;
      environments: { name: string; enabled: boolean }[];
    };
    assert.equal(flag.type, 'experiment');
    assert.deepEqual(
      flag.environments.map((environment) => [environment.name, environment.enabled]),
      [
        ['development', true],
        ['production', true],
      ],
    );
    await context.close();
  });
});
