/**
 * Issue 40, the API reference in Debian's chromium against the built `exec-rx host` (operator API on, its
 * token never given to the page): `/api/v1/docs` renders the OpenAPI document the host serves with Swagger
 * UI, under its strict CSP with no violation and no "Refused to" console message; every request of the
 * page goes to the host's origin and carries no token; it shows our operations (`POST …/processes`), read
 * only: no "Try it out", no Authorize button, no lock asking for a token, nothing stored.
 */
import type { Browser, BrowserContext, ConsoleMessage, Page, Request } from 'playwright-core';
import { API_DOCS_CSP } from '../../src/host/api/routes-public';
import type { PageWindow } from '../support/browser';
import { cspViolations, launchChromium, newContext, screenshot } from '../support/browser';
import type { PageHost } from '../support/browser-host';
import { startPageHost } from '../support/browser-host';
import { TEST_AWS_CREDENTIALS } from '../support/executor';

jest.setTimeout(120_000);

const PROCESSES = '/api/v1/environments/{environmentId}/processes';

let host: PageHost;
let browser: Browser;
let context: BrowserContext;
let page: Page | undefined;

beforeAll(async () => {
  // No executor: the reference needs none. The host needs access keys to accept one all the same.
  const { accessKeyId, secretAccessKey } = TEST_AWS_CREDENTIALS;
  host = await startPageHost({ localExecutor: false, env: { EXEC_RX_ACCESS_KEY_ID: accessKeyId, EXEC_RX_SECRET_ACCESS_KEY: secretAccessKey } });
  browser = await launchChromium();
  context = await newContext(browser);
});

afterEach(async () => {
  if (page === undefined) return;
  await screenshot(page, `api-docs-${expect.getState().currentTestName ?? 'spec'}`);
  await page.close();
  page = undefined;
});

/** What the page did: every request (url, whether it carried a token), and the console's CSP refusals. */
interface Watched {
  readonly requests: { readonly url: string; readonly authorization: boolean }[];
  readonly refusals: string[];
}

function watch(p: Page): Watched {
  const watched: Watched = { requests: [], refusals: [] };
  p.on('request', (request: Request) => watched.requests.push({ url: request.url(), authorization: request.headers()['authorization'] !== undefined }));
  p.on('console', (message: ConsoleMessage) => {
    if (/Refused to|Content Security Policy/i.test(message.text())) watched.refusals.push(message.text());
  });
  return watched;
}

describe('the API reference (/api/v1/docs)', () => {
  it('renders our operations read-only, without a token, under its CSP with no violation, every request to the host', async () => {
    const p = await context.newPage();
    page = p;
    const watched = watch(p);
    const answer = await p.goto(`${host.base}/api/v1/docs`);
    expect({ status: answer?.status(), csp: answer?.headers()['content-security-policy'] }).toEqual({ status: 200, csp: API_DOCS_CSP });

    // The document rendered: its title, and the operation that starts a process.
    await p.locator('.info .title', { hasText: 'exec-rx host operator API' }).waitFor();
    const start = p.locator('#operations-processes-startProcess');
    await start.waitFor();
    expect(await start.locator('.opblock-summary-method').textContent()).toBe('POST');
    expect(await start.locator('.opblock-summary-path').getAttribute('data-path')).toBe(PROCESSES);
    // Opened, it shows its request body and responses, and no way to send it.
    await start.locator('.opblock-summary-control').click();
    await start.locator('.responses-wrapper').waitFor();
    expect(await start.locator('.opblock-section-request-body').count()).toBe(1);
    expect(await start.locator('.response[data-code="201"]').count()).toBe(1);

    // Read-only: no console, no Authorize button, no lock asking for a token, no execute button.
    expect(await p.getByRole('button', { name: /try it out/i }).count()).toBe(0);
    expect(await p.getByRole('button', { name: /authorize/i }).count()).toBe(0);
    expect(await p.locator('.try-out, .btn.execute, .auth-wrapper, .authorization__btn, .dialog-ux').count()).toBe(0);
    // More than one operation is there, each without a lock.
    expect(await p.locator('.opblock').count()).toBeGreaterThan(20);

    // It asked the host, only the host, for its files and the document, and never sent a token.
    const origin = new URL(host.base).origin;
    const paths = watched.requests.map((r) => new URL(r.url).pathname);
    expect(paths).toEqual(expect.arrayContaining(['/api/v1/docs', '/api/v1/openapi.json']));
    expect(paths.filter((path) => path.startsWith('/api/v1/docs/')).length).toBe(3);
    expect(watched.requests.filter((r) => !r.url.startsWith('data:') && new URL(r.url).origin !== origin)).toEqual([]);
    expect(watched.requests.filter((r) => r.authorization)).toEqual([]);
    // Nothing kept: no token, no authorization in storage.
    // (Page code as strings: the root tsconfig has no DOM library.)
    const stored = await p.evaluate<{ local: number; session: string[] }>("({ local: localStorage.length, session: Object.keys(sessionStorage).filter((key) => key !== 'exec-rx-test') })");
    expect(stored).toEqual({ local: 0, session: [] });

    // No CSP violation while it loaded and rendered.
    expect(await cspViolations(p)).toEqual([]);
    expect(watched.refusals).toEqual([]);

    // The listener does see one: an inline style (which the policy refuses) is reported.
    await p.evaluate("{ const style = document.createElement('style'); style.textContent = 'body { color: red; }'; document.head.append(style); }");
    await p.waitForFunction(() => (globalThis as unknown as PageWindow).__specCsp.length > 0);
    expect((await cspViolations(p)).map((v) => v.directive)).toEqual([expect.stringMatching(/^style-src/)]);
  });
});
