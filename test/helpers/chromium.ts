import { existsSync } from 'node:fs';
import type { Browser } from 'playwright-core';

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
