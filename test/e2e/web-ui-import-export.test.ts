import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { adminRequest, demoImport, demoSegment } from '../../scripts/demo/seed.js';
import { launchChromium, noChromium } from '../helpers/chromium.js';
import { startUiServer, type UiServer } from '../helpers/ui-server.js';

const ADMIN = '*:*.e2e-import-export-admin';
/** Screenshots for a person to look at (not compared by the test). */
const SHOTS = '/tmp/flags-ui-import-export-';

/** The import and export page: a file exported, then another validated and applied. */
describe('import and export in Chromium', { skip: noChromium }, () => {
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
      password: 'ada-password-long-enough',
      rootRole: 'Admin',
    });
    for (const name of ['pay-a', 'pay-b']) {
      await admin('POST', '/api/admin/projects/default/features', { name, type: 'release' });
    }
    await admin('POST', '/api/admin/features/pay-a/tags', { type: 'simple', value: 'payments' });
    await admin(
      'POST',
      '/api/admin/projects/default/features/pay-a/environments/development/strategies',
      {
        name: 'flexibleRollout',
        parameters: { rollout: '50', stickiness: 'default', groupId: 'pay-a' },
      },
    );
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    await server?.close();
  });

  async function openPage(): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await page.goto(`${serverUrl}/import-export`);
    await page.getByLabel('User name').fill('ada');
    await page.getByLabel('Password').fill('ada-password-long-enough');
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('heading', { name: 'Import and export' }).waitFor();
    return page;
  }

  /** The file the export's download link gives, parsed. */
  async function exported(page: Page, file: string) {
    const link = page.getByRole('link', { name: `Download ${file}` });
    const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
    assert.equal(download.suggestedFilename(), file);
    const path = await download.path();
    return JSON.parse(await readFile(path, 'utf8')) as {
      features: { name: string }[];
      featureStrategies: { featureName: string; name: string }[];
      featureTags: { featureName: string; tagType: string; tagValue: string }[];
    };
  }

  it('exports by tag and by project, in one environment, as a file', async () => {
    const page = await openPage();
    const form = page.getByRole('form', { name: 'Export' });
    await form.getByLabel('Environment').selectOption('development');
    await form.getByLabel('Tag').selectOption('simple:payments');
    await form.getByRole('button', { name: 'Export' }).click();
    await form.getByText('1 flag exported.').waitFor();
    const byTag = await exported(page, 'export-simple-payments-development.json');
    assert.deepEqual(
      byTag.features.map((feature) => feature.name),
      ['pay-a'],
    );
    assert.deepEqual(
      byTag.featureStrategies.map((strategy) => [strategy.featureName, strategy.name]),
      [['pay-a', 'flexibleRollout']],
    );
    assert.deepEqual(
      byTag.featureTags.map((tag) => [tag.featureName, tag.tagType, tag.tagValue]),
      [['pay-a', 'simple', 'payments']],
    );

    await form.getByLabel('Tag').selectOption('');
    await form.getByLabel('Project').selectOption('default');
    await form.getByRole('button', { name: 'Export' }).click();
    await form.getByText('2 flags exported.').waitFor();
    const byProject = await exported(page, 'export-default-development.json');
    assert.deepEqual(byProject.features.map((feature) => feature.name).sort(), ['pay-a', 'pay-b']);
    await page.screenshot({ path: `${SHOTS}export.png`, fullPage: true });
    await page.context().close();
  });

  it('refuses a file that is no export, shows the validation’s errors without importing, then imports once they are fixed', async () => {
    const page = await openPage();
    const form = page.getByRole('form', { name: 'Import' });
    const fileInput = form.getByLabel('Export file');

    await fileInput.setInputFiles({
      name: 'notes.json',
      mimeType: 'application/json',
      buffer: Buffer.from('not json'),
    });
    await form.getByRole('alert').filter({ hasText: 'The file is not JSON' }).waitFor();
    assert.equal(await form.getByRole('button', { name: 'Validate' }).isDisabled(), true);

    // The demo's export uses a segment this server does not have yet.
    const { data } = demoImport();
    await fileInput.setInputFiles({
      name: 'demo.json',
      mimeType: 'application/json',
      buffer: Buffer.from(JSON.stringify(data)),
    });
    await form.getByText(`demo.json: ${data.features.length} flags.`).waitFor();
    await form.getByLabel('Into project').selectOption('default');
    await form.getByLabel('Environment').selectOption('development');
    await form.getByRole('button', { name: 'Validate' }).click();
    const result = form.getByRole('region', { name: 'Validation of demo.json' });
    await result.getByText('These segments do not exist on this server:').waitFor();
    await result.getByText(demoSegment.name).waitFor();
    const importButton = result.getByRole('button', {
      name: `Import ${data.features.length} flags`,
    });
    assert.equal(await importButton.isDisabled(), true, 'no import while there are errors');
    await page.screenshot({ path: `${SHOTS}validation-errors.png`, fullPage: true });

    // With the segment there, the same file validates and imports.
    await admin('POST', '/api/admin/segments', demoSegment);
    await form.getByRole('button', { name: 'Validate' }).click();
    await result
      .getByRole('status')
      .filter({ hasText: /No problems|0 errors/ })
      .waitFor();
    await importButton.click();
    await form
      .getByText(`Imported ${data.features.length} flags into default (development).`)
      .waitFor();
    await page.screenshot({ path: `${SHOTS}imported.png`, fullPage: true });
    const flags = (await admin('GET', '/api/admin/projects/default/features')) as {
      features: { name: string }[];
    };
    for (const feature of data.features) {
      assert.ok(
        flags.features.some((flag) => flag.name === feature.name),
        `${feature.name} imported`,
      );
    }
    await page.context().close();
  });
});
