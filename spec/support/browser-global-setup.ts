/**
 * jest globalSetup of the browser step (jest.browser.config.js): once per run, fails loudly when Debian's
 * chromium is missing, and prints the Chromium and playwright-core versions the specs run with.
 */
import { chromium } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS, playwrightVersion, requireChromium } from './chromium';

export default async function browserGlobalSetup(): Promise<void> {
  requireChromium();
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: [...CHROMIUM_ARGS] });
  try {
    process.stdout.write(`\nbrowser specs: Chromium ${browser.version()} (${CHROMIUM}), playwright-core ${playwrightVersion()}\n`);
  } finally {
    await browser.close();
  }
}
