/**
 * Debian's chromium driven by the pinned playwright-core, for the browser specs (spec/browser, issue 23).
 * `/usr/bin/chromium` or a loud failure (never a skip): `scripts/install-test-deps.sh` installs it. Each
 * launch is headless with a fresh temporary user-data dir (playwright's own `launch` makes one and removes
 * it on close). Pages get an init script that turns the dashboard's test hook on
 * (`sessionStorage['exec-rx-test'] = '1'`), records every `securitypolicyviolation` and the longest
 * main-thread task (PerformanceObserver `longtask`). The root tsconfig has no DOM library, so what runs in
 * the page is written as strings or typed through {@link PageWindow}.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import type { Browser, BrowserContext, BrowserContextOptions, Page } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS, requireChromium } from './chromium';
import { trackForCleanup } from './executor';

export { CHROMIUM, CHROMIUM_ARGS, playwrightVersion, requireChromium } from './chromium';

/** Screenshots of every spec go here (gitignored). */
export const ARTIFACTS = join(__dirname, '..', '..', 'artifacts', 'browser');


/** Launches chromium headless with a fresh temporary profile; tracked, so it is closed after the file. */
export async function launchChromium(): Promise<Browser> {
  requireChromium();
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: [...CHROMIUM_ARGS] });
  trackForCleanup({ close: () => browser.close() });
  return browser;
}

/** What the page's window holds for the specs (the dashboard's hook and this module's init script). */
export interface PageWindow {
  readonly execRxTest?: {
    readonly seqs: number[];
    bytes(): Uint8Array;
    readonly terminal: XtermLike;
    readonly longestTaskMs: number;
  };
  readonly __specCsp: { readonly directive: string; readonly blocked: string; readonly sample: string }[];
  readonly __specLongestTaskMs: number;
}

/** The part of `@xterm/xterm`'s Terminal the specs read (the root tsconfig does not see its DOM types). */
export interface XtermLike {
  readonly rows: number;
  readonly cols: number;
  readonly buffer: { readonly active: XtermBuffer };
}
interface XtermBuffer {
  readonly length: number;
  readonly baseY: number;
  readonly viewportY: number;
  readonly cursorY: number;
  getLine(y: number): { translateToString(trimRight?: boolean): string; getCell(x: number): XtermCell | undefined } | undefined;
}
interface XtermCell {
  getChars(): string;
  getFgColor(): number;
  isFgPalette(): boolean;
  isFgRGB(): boolean;
  isFgDefault(): boolean;
}

/** Runs in every page before its scripts. */
const INIT_SCRIPT = `
(() => {
  try { sessionStorage.setItem('exec-rx-test', '1'); } catch {}
  window.__specCsp = [];
  document.addEventListener('securitypolicyviolation', (e) => {
    window.__specCsp.push({ directive: e.violatedDirective, blocked: String(e.blockedURI), sample: String(e.sample) });
  });
  window.__specLongestTaskMs = 0;
  try {
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) window.__specLongestTaskMs = Math.max(window.__specLongestTaskMs, entry.duration);
    }).observe({ type: 'longtask', buffered: true });
  } catch {}
})();
`;

/** A new context (one connection pool, as a person's browser has) with the init script. */
export async function newContext(browser: Browser, options: BrowserContextOptions = {}): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, ...options });
  await context.addInitScript(INIT_SCRIPT);
  return context;
}

/** Saves a screenshot of `page` as artifacts/browser/NAME.png (never fails the spec for it). */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const file = join(ARTIFACTS, `${name.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^-|-$/g, '')}.png`);
  await page.screenshot({ path: file, fullPage: true }).catch(() => undefined);
}

/** The `securitypolicyviolation` events the page saw. */
export function cspViolations(page: Page): Promise<PageWindow['__specCsp']> {
  return page.evaluate(() => (globalThis as unknown as PageWindow).__specCsp);
}

/** Waits for the dashboard's test hook (it exists once the page has a terminal). */
export async function waitForHook(page: Page): Promise<void> {
  await page.waitForFunction(() => (globalThis as unknown as PageWindow).execRxTest !== undefined);
}

/** The terminal's whole buffer as text, one line per row (right-trimmed). */
export function terminalText(page: Page): Promise<string> {
  return page.evaluate(() => {
    const hook = (globalThis as unknown as PageWindow).execRxTest;
    if (hook === undefined) return '';
    const buffer = hook.terminal.buffer.active;
    const lines: string[] = [];
    for (let y = 0; y < buffer.length; y += 1) lines.push(buffer.getLine(y)?.translateToString(true) ?? '');
    return lines.join('\n').replace(/\n+$/, '');
  });
}

/** Waits until the terminal's buffer contains `text`. */
export async function waitForTerminalText(page: Page, text: string, timeout = 60_000): Promise<void> {
  await page.waitForFunction(
    (needle) => {
      const hook = (globalThis as unknown as PageWindow).execRxTest;
      if (hook === undefined) return false;
      const buffer = hook.terminal.buffer.active;
      for (let y = 0; y < buffer.length; y += 1) if ((buffer.getLine(y)?.translateToString(true) ?? '').includes(needle)) return true;
      return false;
    },
    text,
    { timeout, polling: 100 },
  );
}

/** What the page's hook received: seqs and the bytes (as base64, to cross the protocol). */
export async function received(page: Page): Promise<{ readonly seqs: readonly number[]; readonly bytes: Buffer }> {
  const got = await page.evaluate(() => {
    const hook = (globalThis as unknown as PageWindow).execRxTest;
    if (hook === undefined) return { seqs: [], base64: '' };
    const bytes = hook.bytes();
    let binary = '';
    for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
    return { seqs: [...hook.seqs], base64: btoa(binary) };
  });
  return { seqs: got.seqs, bytes: Buffer.from(got.base64, 'base64') };
}

/** Waits until the hook holds at least `count` bytes. */
export async function waitForBytes(page: Page, count: number, timeout = 90_000): Promise<void> {
  await page.waitForFunction((n) => ((globalThis as unknown as PageWindow).execRxTest?.bytes().length ?? 0) >= n, count, { timeout, polling: 100 });
}

/**
 * Why the page's output seqs are not the host's (''; when they are): the same seqs in the same order,
 * each once. The host's seqs are one counter per process shared by output, exited and closed, and
 * `exited` may come before the last output, so the output seqs alone may skip the exited one.
 */
export function seqProblem(seqs: readonly number[], hostSeqs: readonly number[]): string {
  if (seqs.length === 0) return 'no seqs';
  if (new Set(seqs).size !== seqs.length) return `${seqs.length - new Set(seqs).size} seq(s) twice`;
  for (let i = 0; i < Math.max(seqs.length, hostSeqs.length); i += 1) {
    if (seqs[i] !== hostSeqs[i]) return `at index ${i} the page has seq ${String(seqs[i])}, the host ${String(hostSeqs[i])} (page ${seqs.length} seqs, host ${hostSeqs.length})`;
  }
  return '';
}
