/**
 * Issue 42's acceptance in Debian's chromium: a page served by python's http.server in the environment,
 * with a relative script and an SSE endpoint served there, opens through the preview in both forms (the
 * path form on the preview listener, and the host-name form under `preview.localhost`, which chromium
 * resolves to loopback and treats as a secure context, so the `__Host-` cookie works on plain http), and
 * the SSE messages arrive live. Script on the previewed page, in both forms, cannot read the operator API
 * or the dashboard's token (the dashboard is open in the same browser context with its token in its
 * sessionStorage). A real host (in this process, `previewPort` and `operator.http`) and a real direct
 * executor.
 */
import '../support/executor';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { HostClient } from '../../src/client';
import type { PreviewLink } from '../../src/client';
import { OPERATOR_TOKEN } from '../host/api/api-host';
import type { PreviewHost } from '../host/api/preview/preview-support';
import { startPreviewHost } from '../host/api/preview/preview-support';
import { launchChromium, newContext, screenshot } from '../support/browser';
import { openDashboard } from '../support/dashboard';
import type { PreviewSite } from '../support/preview-site';
import { PLAIN_HEADING, SITE_HEADING, SSE_COUNT, SSE_GAP_MS, startPlainHttpServer, startPreviewSite } from '../support/preview-site';

jest.setTimeout(180_000);

/** A lowercase DNS label: the host-name form needs one. */
const ENV = 'preview-web';
const PREVIEW_DOMAIN = 'preview.localhost';
const TOKEN_KEY = 'exec-rx-token';

let host: PreviewHost;
let site: PreviewSite;
let client: HostClient;
let browser: Browser;
let context: BrowserContext;
let dashboard: Page;
const pages: Page[] = [];

/** The token in the dashboard's sessionStorage. */
const dashboardToken = (): Promise<string | null> =>
  dashboard.evaluate((key) => (globalThis as unknown as { sessionStorage: { getItem(k: string): string | null } }).sessionStorage.getItem(key), TOKEN_KEY);

/** What the site's script recorded. */
interface SiteWindow {
  readonly __events: readonly { readonly data: string; readonly at: number }[];
  readonly __eventsEnded: boolean;
}

/** Opens `url` in a new page of the context; resolves with the page and the final answer's headers. */
async function open(url: string): Promise<{ readonly page: Page; readonly headers: Record<string, string> }> {
  const page = await context.newPage();
  pages.push(page);
  const answer = await page.goto(url);
  if (answer === null) throw new Error(`no answer for ${url}`);
  expect(answer.status()).toBe(200);
  return { page, headers: answer.headers() };
}

/** The page rendered, its relative script ran, and the SSE messages arrived one by one, as they were sent. */
async function expectSiteLive(page: Page): Promise<void> {
  await page.getByRole('heading', { name: SITE_HEADING }).waitFor();
  await page.getByText('the relative script ran').waitFor();
  // The first message is seen before the server has sent the last (it sends them over ~2 s).
  await page.waitForFunction(() => ((globalThis as unknown as SiteWindow).__events?.length ?? 0) >= 1);
  const early = await page.evaluate(() => (globalThis as unknown as SiteWindow).__eventsEnded);
  expect(early).toBe(false);
  await page.waitForFunction(() => (globalThis as unknown as SiteWindow).__eventsEnded, undefined, { timeout: 30_000 });
  const events = await page.evaluate(() => (globalThis as unknown as SiteWindow).__events);
  expect(events.map((e) => e.data)).toEqual(Array.from({ length: SSE_COUNT }, (_, i) => `tick ${i}`));
  const gaps = events.slice(1).map((e, i) => e.at - (events[i]?.at ?? 0));
  // Live: each message came on its own, about SSE_GAP_MS after the one before (a buffered body would bring them at once).
  for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(SSE_GAP_MS / 4);
  expect((events.at(-1)?.at ?? 0) - (events[0]?.at ?? 0)).toBeGreaterThanOrEqual((SSE_COUNT - 1) * SSE_GAP_MS * 0.6);
  expect(await page.getByRole('listitem').count()).toBe(SSE_COUNT);
}

/** The headers every preview answer carries, and the session cookie: HttpOnly, on the preview's origin only. */
async function expectSandboxAndCookie(headers: Record<string, string>, origin: string): Promise<void> {
  expect(headers['content-security-policy']).toMatch(/^sandbox allow-scripts /);
  expect(headers['content-security-policy']).not.toMatch(/allow-popups-to-escape-sandbox|allow-top-navigation/);
  expect(headers['referrer-policy']).toBe('no-referrer');
  const cookies = (await context.cookies(origin)).filter((c) => c.name.startsWith('__Host-exec-rx-preview'));
  expect(cookies).toHaveLength(1);
  expect(cookies[0]).toMatchObject({ httpOnly: true, secure: true, sameSite: 'Lax', path: '/' });
}

/** What the attacks in the previewed page got (every string it could read). */
interface Attempts {
  readonly fetches: readonly { readonly how: string; readonly outcome: 'rejected' | 'answered'; readonly status?: number; readonly type?: string; readonly text?: string; readonly error?: string }[];
  readonly popup: readonly string[];
  readonly frame: readonly string[];
  readonly cookie: string;
  readonly session: string;
  readonly local: string;
  readonly referrer: string;
  readonly name: string;
}

/**
 * Runs in the previewed page: fetches the operator API (credentials omitted and included, cors and
 * no-cors), reads its own cookie, storages, referrer and window name, and opens the dashboard in a popup
 * and in a frame (awaiting the frame's load); READ_OPENED then tries to read their sessionStorage and document.
 */
const ATTACK = (api: string, dashboardUrl: string, key: string): string => `(async () => {
  const api = ${JSON.stringify(api)}, dashboardUrl = ${JSON.stringify(dashboardUrl)}, key = ${JSON.stringify(key)};
  const out = { fetches: [], popup: [], frame: [], cookie: document.cookie, session: JSON.stringify({ ...sessionStorage }), local: JSON.stringify({ ...localStorage }), referrer: document.referrer, name: window.name };
  for (const credentials of ['omit', 'include']) {
    for (const mode of ['cors', 'no-cors']) {
      const how = credentials + ' ' + mode;
      try {
        const answer = await fetch(api, { credentials, mode });
        let text;
        try { text = await answer.text(); } catch (e) { text = 'unreadable: ' + e; }
        out.fetches.push({ how, outcome: 'answered', status: answer.status, type: answer.type, text });
      } catch (e) {
        out.fetches.push({ how, outcome: 'rejected', error: String(e) });
      }
    }
  }
  const tryRead = (w, into) => {
    try { into.push('storage:' + w.sessionStorage.getItem(key)); } catch (e) { into.push('storage refused: ' + e.name); }
    try { into.push('document:' + w.document.documentElement.outerHTML); } catch (e) { into.push('document refused: ' + e.name); }
  };
  // The popup and the frame are kept for READ_OPENED, run once each has loaded (awaited as events, never a sleep).
  window.__popup = window.open(dashboardUrl);
  const frame = document.createElement('iframe');
  const loaded = new Promise((resolve) => frame.addEventListener('load', resolve, { once: true }));
  frame.src = dashboardUrl;
  document.body.append(frame);
  window.__frame = frame;
  window.__out = out;
  window.__tryRead = tryRead;
  await loaded;
})()`;

/** Runs in the previewed page once the dashboard loaded in ATTACK's popup and frame: tries to read both, closes them, returns what the page got. */
const READ_OPENED = `(() => {
  const out = window.__out, popup = window.__popup, frame = window.__frame;
  if (popup === null) out.popup.push('no popup');
  else {
    window.__tryRead(popup, out.popup);
    popup.close();
  }
  if (frame.contentWindow !== null) window.__tryRead(frame.contentWindow, out.frame);
  frame.remove();
  return out;
})()`;

/** Every attempt failed: no answer of the API was readable, and the token is nowhere the page could reach. */
function expectNothingReached(attempts: Attempts): void {
  expect(attempts.fetches).toHaveLength(4);
  for (const attempt of attempts.fetches) {
    if (attempt.outcome === 'rejected') continue;
    // An opaque answer (no-cors): no status, no body; or the API's 401.
    if (attempt.type === 'opaque') expect({ how: attempt.how, status: attempt.status, text: attempt.text }).toEqual({ how: attempt.how, status: 0, text: '' });
    else expect({ how: attempt.how, status: attempt.status }).toEqual({ how: attempt.how, status: 401 });
  }
  // The cors attempts never get through (the API answers no CORS).
  expect(attempts.fetches.filter((a) => a.how.endsWith(' cors')).map((a) => a.outcome)).toEqual(['rejected', 'rejected']);
  expect(attempts.cookie).not.toMatch(/exec-rx-preview/);
  expect(JSON.stringify(attempts)).not.toContain(OPERATOR_TOKEN);
  expect(JSON.stringify(attempts)).not.toMatch(/"environments"|"processCount"/);
  // Once the dashboard loaded in them, the popup and the frame were another origin to the page.
  expect(attempts.popup).toContain('storage refused: SecurityError');
  expect(attempts.popup.at(-1)).toBe('document refused: SecurityError');
  expect(attempts.frame.at(-1)).toBe('document refused: SecurityError');
}

describe('previews in chromium', () => {
  let link: PreviewLink;

  beforeAll(async () => {
    host = await startPreviewHost({ environmentId: ENV, http: { previewDomain: PREVIEW_DOMAIN } });
    site = await startPreviewSite(host.environment);
    client = new HostClient({ url: host.host.url, token: OPERATOR_TOKEN });
    browser = await launchChromium();
    context = await newContext(browser);
    // The dashboard, open in the same context: its token sits in its origin's sessionStorage.
    dashboard = await context.newPage();
    await openDashboard(dashboard, `${host.host.url}/#token=${OPERATOR_TOKEN}`);
    expect(await dashboardToken()).toBe(OPERATOR_TOKEN);
    link = await client.http(ENV).previewLink(site.port);
  });

  afterAll(async () => {
    await context.close();
    await client[Symbol.asyncDispose]();
    await site.stop();
  });

  afterEach(async () => {
    for (const page of pages.splice(0)) {
      await screenshot(page, `preview-${expect.getState().currentTestName ?? 'spec'}`);
      await page.close();
    }
  });

  it('the path form: the page renders, its relative script runs, and the SSE messages arrive live', async () => {
    expect(link.pathUrl).toMatch(new RegExp(`^${host.previewUrl}/${ENV}/${site.port}/\\?exec-rx-preview-link=`));
    const { page, headers } = await open(link.pathUrl);
    expect(page.url()).toBe(`${host.previewUrl}/${ENV}/${site.port}/`);
    await expectSandboxAndCookie(headers, host.previewUrl);
    await expectSiteLive(page);
  });

  it('the host-name form: the same page under {port}-{environment}.preview.localhost', async () => {
    const origin = `http://${site.port}-${ENV}.${PREVIEW_DOMAIN}:${new URL(host.previewUrl).port}`;
    expect(link.hostUrl).toMatch(new RegExp(`^${origin.replace(/\./g, '\\.')}/\\?exec-rx-preview-link=`));
    const { page, headers } = await open(link.hostUrl ?? '');
    expect(page.url()).toBe(`${origin}/`);
    await expectSandboxAndCookie(headers, origin);
    await expectSiteLive(page);
  });

  it('a page served by the literal `python3 -m http.server` opens in both forms', async () => {
    const plain = await startPlainHttpServer(host.environment);
    try {
      const plainLink = await client.http(ENV).previewLink(plain.port);
      for (const url of [plainLink.pathUrl, plainLink.hostUrl ?? '']) {
        const { page, headers } = await open(url);
        await page.getByRole('heading', { name: PLAIN_HEADING }).waitFor();
        expect(headers['content-security-policy']).toMatch(/^sandbox allow-scripts /);
      }
    } finally {
      await plain.stop();
    }
  });

  it.each([
    ['path', (l: PreviewLink) => l.pathUrl],
    ['host-name', (l: PreviewLink) => l.hostUrl ?? ''],
  ])('script on a page previewed in the %s form reads neither the operator API nor the dashboard token', async (_form, urlOf) => {
    const { page } = await open(urlOf(link));
    await page.getByText('the relative script ran').waitFor();
    const popupOpened = context.waitForEvent('page');
    await page.evaluate(ATTACK(`${host.host.url}/api/v1/environments`, `${host.host.url}/`, TOKEN_KEY));
    const popup = await popupOpened;
    await popup.waitForLoadState('load');
    const attempts = (await page.evaluate(READ_OPENED)) as Attempts;
    expectNothingReached(attempts);
    // The dashboard still holds its token: nothing above reached it, and it is still signed in.
    expect(await dashboardToken()).toBe(OPERATOR_TOKEN);
    link = await client.http(ENV).previewLink(site.port);
  });
});
