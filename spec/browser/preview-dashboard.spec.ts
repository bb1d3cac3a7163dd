/**
 * Issue 42 on the dashboard, in Debian's chromium: "Preview a port" in the side column opens the selected
 * environment's port through the host's preview in a new tab, with `noopener` (`window.opener` is null in
 * it, and it has no referrer). A host without HTTP through environments answers `HTTP_DISABLED`, and the
 * form says so; a port out of range is refused before anything is asked. Real hosts in this process and
 * real direct executors; the site is python's http.server in the environment. No CSP violation.
 */
import '../support/executor';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { ApiHost } from '../host/api/api-host';
import { OPERATOR_TOKEN, startApiHost } from '../host/api/api-host';
import type { PreviewHost } from '../host/api/preview/preview-support';
import { startPreviewHost } from '../host/api/preview/preview-support';
import { cspViolations, launchChromium, newContext, screenshot } from '../support/browser';
import { openDashboard, selectEnvironment } from '../support/dashboard';
import type { PreviewSite } from '../support/preview-site';
import { SITE_HEADING, startPreviewSite } from '../support/preview-site';

jest.setTimeout(180_000);

const ENV = 'preview-dash';
const PREVIEW_DOMAIN = 'preview.localhost';

let host: PreviewHost;
let plain: ApiHost;
let site: PreviewSite;
let browser: Browser;
let context: BrowserContext;
const pages: Page[] = [];

/** The form. */
const form = (page: Page) => page.getByRole('form', { name: 'Preview a port' });

/** A dashboard of `url` signed in with the operator token, its environment selected. */
async function dashboardOf(url: string, environmentId: string): Promise<Page> {
  const page = await context.newPage();
  pages.push(page);
  await openDashboard(page, `${url}/#token=${OPERATOR_TOKEN}`);
  await selectEnvironment(page, environmentId);
  return page;
}

describe('the dashboard: Preview a port', () => {
  beforeAll(async () => {
    host = await startPreviewHost({ environmentId: ENV, http: { previewDomain: PREVIEW_DOMAIN } });
    // A host without HTTP through environments (no --allow-http): its preview rows answer HTTP_DISABLED.
    plain = await startApiHost({ environmentId: 'no-http' });
    site = await startPreviewSite(host.environment);
    browser = await launchChromium();
    context = await newContext(browser);
  });

  afterAll(async () => {
    await context.close();
    await site.stop();
  });

  afterEach(async () => {
    for (const page of pages.splice(0)) {
      await screenshot(page, `preview-dashboard-${expect.getState().currentTestName ?? 'spec'}`);
      const violations = await cspViolations(page);
      await page.close();
      expect(violations).toEqual([]);
    }
  });

  it('opens the port of the selected environment in a new tab, with noopener and no referrer', async () => {
    const page = await dashboardOf(host.host.url, ENV);
    await form(page).getByRole('spinbutton', { name: 'Preview port' }).fill(String(site.port));
    const [opened] = await Promise.all([context.waitForEvent('page'), form(page).getByRole('button', { name: 'Open' }).click()]);
    pages.push(opened);
    await opened.getByRole('heading', { name: SITE_HEADING }).waitFor();
    // The host-name form (the host has a preview domain), the link's token dropped by the redirect.
    expect(opened.url()).toBe(`http://${site.port}-${ENV}.${PREVIEW_DOMAIN}:${new URL(host.previewUrl).port}/`);
    const seen = await opened.evaluate(() => {
      const w = globalThis as unknown as { opener: unknown; document: { referrer: string } };
      return { opener: w.opener, referrer: w.document.referrer };
    });
    expect(seen).toEqual({ opener: null, referrer: '' });
    await opened.getByText('the relative script ran').waitFor();
    expect(await form(page).locator('[role="alert"]').textContent()).toBe('');
  });

  it('refuses a port out of range before asking the host', async () => {
    const page = await dashboardOf(host.host.url, ENV);
    const asked: string[] = [];
    page.on('request', (request) => {
      if (request.url().includes('/previews/')) asked.push(request.url());
    });
    await form(page).getByRole('spinbutton', { name: 'Preview port' }).fill('70000');
    await form(page).getByRole('button', { name: 'Open' }).click();
    await form(page).getByRole('alert').filter({ hasText: 'enter a port from 1 to 65535' }).waitFor();
    expect(asked).toEqual([]);
  });

  it('says so when the host answers HTTP_DISABLED (no --allow-http), and opens nothing', async () => {
    const page = await dashboardOf(plain.host.url, 'no-http');
    const answers: number[] = [];
    page.on('response', (response) => {
      if (response.url().includes('/previews/')) answers.push(response.status());
    });
    let popups = 0;
    context.on('page', () => (popups += 1));
    await form(page).getByRole('spinbutton', { name: 'Preview port' }).fill('8000');
    await form(page).getByRole('button', { name: 'Open' }).click();
    await form(page).getByRole('alert').filter({ hasText: 'Previews are off on this host: start it with --allow-http' }).waitFor();
    expect(answers).toEqual([403]);
    expect(popups).toBe(0);
  });
});
