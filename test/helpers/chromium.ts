import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Browser, Page } from 'playwright-core';

/** Debian's Chromium (`apt-get install chromium`), which the browser tests drive. */
export const CHROMIUM = '/usr/bin/chromium';

/** `false` when Chromium is here; otherwise why a browser test cannot run, for `describe(…, { skip })`. */
export const noChromium: string | false = existsSync(CHROMIUM)
  ? false
  : `${CHROMIUM} is not installed (apt-get install chromium); the web UI tests need it`;

/** Headless Chromium, without the background requests this machine's closed network refuses. */
export async function launchChromium(): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
}

/** axe-core's browser build, evaluated in the page (DevTools evaluation is outside the CSP). */
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/**
 * axe-core's WCAG 2.1 A and AA rules on `page` as it is now: each violation as one line (rule,
 * help, where), the serious and critical ones only unless `every` is asked.
 */
export async function accessibilityViolations(
  page: Page,
  impacts: 'serious' | 'every' = 'serious',
): Promise<string[]> {
  await page.evaluate(AXE);
  const kept =
    impacts === 'every'
      ? 'true'
      : "violation.impact === 'serious' || violation.impact === 'critical'";
  // A string, run in the page (no DOM types in the tests' compilation).
  return (await page.evaluate(`axe
    .run({ runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } })
    .then((result) => result.violations
      .filter((violation) => ${kept})
      .map((violation) => violation.id + ': ' + violation.help + ' (' +
        violation.nodes.map((node) => node.target.join(' ')).join(', ') + ')'))`)) as string[];
}
