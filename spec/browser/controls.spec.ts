/**
 * Issue 23, the dashboard's controls in Debian's chromium against the built `exec-rx host
 * --local-executor` (a real codex executor), all by clicks and typing: start, interrupt (130), terminate
 * (137: its process group killed), stdin with end-of-input, typing into a tty; three tabs in one browser context (one connection
 * pool, as a person's browser has) and the third still starts and interrupts a process; axe-core finds no
 * serious or critical violation.
 */
import { readFileSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { cspViolations, launchChromium, newContext, screenshot, waitForHook, waitForTerminalText } from '../support/browser';
import type { PageHost } from '../support/browser-host';
import { startPageHost } from '../support/browser-host';
import { openDashboard, processRow, selectEnvironment, selectProcess, startByForm, waitForExitCode } from '../support/dashboard';

jest.setTimeout(180_000);

const ENV = 'local';

let host: PageHost;
let browser: Browser;
let context: BrowserContext;
/** The pages of the running spec (screenshot and close in afterEach). */
const pages: Page[] = [];

beforeAll(async () => {
  host = await startPageHost();
  browser = await launchChromium();
  context = await newContext(browser);
});

async function openPage(): Promise<Page> {
  const page = await context.newPage();
  pages.push(page);
  await openDashboard(page, host.url);
  await selectEnvironment(page, ENV);
  return page;
}

afterEach(async () => {
  const name = expect.getState().currentTestName ?? 'spec';
  const violations: unknown[] = [];
  for (const [i, page] of pages.entries()) {
    await screenshot(page, `controls-${name}${pages.length > 1 ? `-tab${i + 1}` : ''}`);
    violations.push(...(await cspViolations(page)));
    await page.close();
  }
  pages.length = 0;
  expect(violations).toEqual([]);
});

describe('the dashboard: controls', () => {
  it('start, interrupt (exit 130) and terminate (exit 137) by clicks', async () => {
    const page = await openPage();
    const first = await startByForm(page, 'sleep\n600', { argv: true });
    await page.getByRole('button', { name: 'Interrupt' }).click();
    await waitForExitCode(page, first, 130);
    const second = await startByForm(page, 'sleep 600');
    await page.getByRole('button', { name: 'Terminate' }).click();
    await waitForExitCode(page, second, 137);
  });

  it('stdin: a line typed and sent, then end of input; and typing into a tty', async () => {
    const page = await openPage();
    const piped = await startByForm(page, 'cat', { pipeStdin: true });
    await waitForHook(page);
    const input = page.getByRole('textbox', { name: 'Standard input' });
    await input.click();
    await page.keyboard.type('hello from the line box');
    await page.getByRole('button', { name: 'Send line' }).click();
    await waitForTerminalText(page, 'hello from the line box');
    await page.getByRole('button', { name: 'End input' }).click();
    await waitForExitCode(page, piped, 0);

    const tty = await startByForm(page, 'read line; echo "got: $line"', { tty: true });
    await page.locator('[data-testid="terminal"]').click();
    await page.keyboard.type('typed into the terminal');
    await page.keyboard.press('Enter');
    await waitForTerminalText(page, 'got: typed into the terminal');
    await waitForExitCode(page, tty, 0);
  });

  it('three tabs in one context: the third still starts and interrupts a process', async () => {
    const tabs = [await openPage(), await openPage(), await openPage()];
    const [one, two, three] = tabs;
    if (one === undefined || two === undefined || three === undefined) throw new Error('three tabs');
    // The first two follow a running process each (their streams stay open).
    const a = await startByForm(one, 'while :; do echo tab one; sleep 0.2; done');
    await waitForHook(one);
    await waitForTerminalText(one, 'tab one');
    const b = await startByForm(two, 'while :; do echo tab two; sleep 0.2; done');
    await waitForHook(two);
    await waitForTerminalText(two, 'tab two');
    const c = await startByForm(three, 'sleep\n600', { argv: true });
    await three.getByRole('button', { name: 'Interrupt' }).click();
    await waitForExitCode(three, c, 130);
    for (const [tab, id] of [[one, a], [two, b]] as const) {
      await selectProcess(tab, id);
      await tab.getByRole('button', { name: 'Terminate' }).click();
      await waitForExitCode(tab, id, 137);
    }
  });

  it("another tab sees a process's exit live (the processes table follows the host)", async () => {
    const [one, two] = [await openPage(), await openPage()];
    if (one === undefined || two === undefined) throw new Error('two tabs');
    const id = await startByForm(two, 'sleep\n600', { argv: true });
    await processRow(one, id).waitFor();
    await two.getByRole('button', { name: 'Interrupt' }).click();
    await waitForExitCode(two, id, 130);
    await waitForExitCode(one, id, 130);
  });

  it('axe-core reports no serious or critical violation', async () => {
    const page = await openPage();
    await startByForm(page, 'echo accessible; sleep 600');
    await waitForHook(page);
    await waitForTerminalText(page, 'accessible');
    // Injected through the DevTools protocol, so the page's CSP stays as it is.
    await page.evaluate(readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8'));
    const violations = await page.evaluate(async () => {
      type Result = { id: string; impact: string | null; help: string; nodes: { target: unknown }[] };
      const axe = (globalThis as unknown as { axe: { run(context: unknown, options: unknown): Promise<{ violations: Result[] }> } }).axe;
      const result = await axe.run((globalThis as unknown as { document: unknown }).document, { resultTypes: ['violations'] });
      return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map((n) => JSON.stringify(n.target)) }));
    });
    const bad = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    if (violations.length > 0) process.stdout.write(`axe (all impacts): ${JSON.stringify(violations)}\n`);
    expect(bad).toEqual([]);
    await page.getByRole('button', { name: 'Terminate' }).click();
  });
});
