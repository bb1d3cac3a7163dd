/**
 * Issue 23, who may do what on the dashboard, in Debian's chromium against the built `exec-rx host
 * --local-executor --operator-tokens-file` (an `operate` and a `view` token): a view token follows the
 * output with no control to start or stop (nor to preview a port); no token and a wrong token get the login box, and no API call
 * succeeds (every /api/ answer the page got is 401).
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page, Response } from 'playwright-core';
import { HostClient } from '../../src/client';
import type { PageWindow } from '../support/browser';
import { cspViolations, launchChromium, newContext, screenshot, waitForHook, waitForTerminalText } from '../support/browser';
import type { PageHost } from '../support/browser-host';
import { startPageHost } from '../support/browser-host';
import { openDashboard, selectEnvironment, selectProcess, waitForExitCode } from '../support/dashboard';

jest.setTimeout(180_000);

const ENV = 'local';
const OPERATE = 'browser-operate-token-0123456789';
const VIEW = 'browser-view-token-0123456789abc';

let work: string;
let host: PageHost;
let operator: HostClient;
let browser: Browser;
let context: BrowserContext;
let page: Page | undefined;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'exec-rx-browser-auth-'));
  const tokens = join(work, 'tokens');
  writeFileSync(tokens, `# NAME ROLE ENVIRONMENTS SECRET\nops operate * ${OPERATE}\ndashboard view * ${VIEW}\n`);
  chmodSync(tokens, 0o600);
  host = await startPageHost({ args: ['--operator-tokens-file', tokens], token: OPERATE });
  operator = new HostClient({ url: host.base, token: OPERATE });
  browser = await launchChromium();
  context = await newContext(browser);
});

afterAll(async () => {
  await operator[Symbol.asyncDispose]();
  rmSync(work, { recursive: true, force: true });
});

afterEach(async () => {
  if (page === undefined) return;
  await screenshot(page, `auth-${expect.getState().currentTestName ?? 'spec'}`);
  const violations = await cspViolations(page);
  await page.close();
  page = undefined;
  expect(violations).toEqual([]);
});

/** Records every /api/ answer the page gets. */
function apiAnswers(p: Page): { readonly path: string; readonly status: number }[] {
  const seen: { path: string; status: number }[] = [];
  p.on('response', (response: Response) => {
    const url = new URL(response.url());
    if (url.pathname.startsWith('/api/')) seen.push({ path: url.pathname, status: response.status() });
  });
  return seen;
}

describe('the dashboard: tokens', () => {
  it('a view token: the output follows, and no control to start or stop is shown', async () => {
    const started = await operator.start(ENV, { argv: [process.execPath, '-e', "let i = 0; setInterval(() => process.stdout.write(`viewed line ${i++}\\n`), 100);"] });
    page = await context.newPage();
    await openDashboard(page, `${host.base}/#token=${VIEW}`);
    await selectEnvironment(page, ENV);
    await selectProcess(page, started.id);
    await waitForHook(page);
    await waitForTerminalText(page, 'viewed line 2');
    // It follows: later lines arrive while the page watches.
    const lines = await page.evaluate(() => (globalThis as unknown as PageWindow).execRxTest?.seqs.length ?? 0);
    await page.waitForFunction((n) => ((globalThis as unknown as PageWindow).execRxTest?.seqs.length ?? 0) > n + 5, lines);
    for (const name of ['Interrupt', 'Terminate', 'Release', 'Start', 'Send line', 'End input']) expect(await page.getByRole('button', { name, exact: true }).count()).toBe(0);
    expect(await page.getByRole('form', { name: 'Start a process' }).count()).toBe(0);
    expect(await page.getByRole('form', { name: 'Preview a port' }).count()).toBe(0);
    expect(await page.getByRole('textbox', { name: 'Standard input' }).count()).toBe(0);
    expect(await page.getByRole('checkbox', { name: 'Follow' }).count()).toBe(1);
    expect(await page.getByRole('button', { name: 'Download output' }).count()).toBe(1);
    expect(await page.getByRole('form', { name: 'Sign in' }).count()).toBe(0);
    await operator.terminate(ENV, started.id);
    await waitForExitCode(page, started.id, 137);
  });

  for (const [what, fragment] of [
    ['no token', ''],
    ['a wrong token', '#token=this-token-is-wrong-0123456789'],
  ] as const) {
    it(`${what}: the login box, and no API call succeeds`, async () => {
      const p = await context.newPage();
      page = p;
      const answers = apiAnswers(p);
      await p.goto(`${host.base}/${fragment}`);
      const login = p.getByRole('form', { name: 'Sign in' });
      await login.waitFor();
      expect(await login.getByLabel('Operator token').count()).toBe(1);
      // Signing in with another wrong token keeps the box.
      await login.getByLabel('Operator token').fill('another-wrong-token-0123456789');
      const refused = p.waitForResponse((r) => new URL(r.url()).pathname.startsWith('/api/'));
      await login.getByRole('button', { name: 'Sign in' }).click();
      expect((await refused).status()).toBe(401);
      await login.waitFor();
      expect(answers.length).toBeGreaterThan(0);
      expect(answers.filter((a) => a.status !== 401)).toEqual([]);
      expect(await p.getByRole('list', { name: 'Environments' }).locator('[data-environment-id]').count()).toBe(0);
    });
  }
});
