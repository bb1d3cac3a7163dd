/**
 * Issue 41, the dashboard's Files view in Debian's chromium against the built `exec-rx host
 * --local-executor` (a real codex executor on this machine, so its files are this machine's): browse
 * (into a directory a process made, and back up), view (a text file's content; a binary and an over-cap
 * file refused), upload (picked with setInputFiles, and dropped as a DataTransfer dispatched in the page;
 * sha256-exact on disk; one over the host's --max-upload-bytes fails with its 413), download (the download's bytes, by a ticket url), delete (cancel keeps it,
 * confirm removes it), and live updates (a file a process creates appears, and goes when it removes it).
 * A view token gets no Files tab. No CSP violation in any of them.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { HostClient } from '../../src/client';
import { cspViolations, launchChromium, newContext, screenshot } from '../support/browser';
import type { PageHost } from '../support/browser-host';
import { startPageHost } from '../support/browser-host';
import { fileRow, filesView, openDashboard, openFilesAt, selectEnvironment, waitForAttribute, waitForListed, waitForText } from '../support/dashboard';

jest.setTimeout(180_000);

const ENV = 'local';
/** The host's --max-upload-bytes here: above the uploads that land, below the one refused. */
const MAX_UPLOAD = 4 * 1024 * 1024;

let host: PageHost;
let client: HostClient;
let browser: Browser;
let context: BrowserContext;
let root: string;
let page: Page | undefined;

const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'exec-rx-browser-files-'));
  host = await startPageHost({ args: ['--max-upload-bytes', String(MAX_UPLOAD)] });
  client = new HostClient({ url: host.base, token: host.token });
  browser = await launchChromium();
  context = await newContext(browser);
});

afterAll(async () => {
  await client[Symbol.asyncDispose]();
  rmSync(root, { recursive: true, force: true });
});

afterEach(async () => {
  if (page === undefined) return;
  await screenshot(page, `files-${expect.getState().currentTestName ?? 'spec'}`);
  const violations = await cspViolations(page);
  await page.close();
  page = undefined;
  expect(violations).toEqual([]);
});

/** A fresh directory of the spec's own (under `root`). */
function freshDir(name: string): string {
  const dir = join(root, name);
  mkdirSync(dir);
  return dir;
}

/** The dashboard on the local environment's Files tab at `dir`. */
async function openAt(dir: string): Promise<Page> {
  const p = await context.newPage();
  page = p;
  await openDashboard(p, host.url);
  await selectEnvironment(p, ENV);
  await openFilesAt(p, dir);
  return p;
}

/** Runs `script` with /bin/sh in the environment and waits for exit 0. */
async function sh(script: string): Promise<void> {
  const result = await client.run(ENV, { argv: ['/bin/sh', '-c', script] });
  expect({ script, exitCode: result.exitCode }).toEqual({ script, exitCode: 0 });
}

describe('the dashboard: files', () => {
  it('browse: into a directory a process made, and back up by Up and by the path bar', async () => {
    const dir = freshDir('browse');
    await sh(`mkdir -p '${dir}/made by a process/deeper' && printf 'x' > '${dir}/made by a process/inside.txt'`);
    const p = await openAt(dir);
    await fileRow(p, 'made by a process').getByRole('button', { name: 'made by a process', exact: true }).click();
    await waitForListed(p, `${dir}/made by a process`);
    await fileRow(p, 'inside.txt').waitFor();
    await fileRow(p, 'deeper').getByRole('button', { name: 'deeper', exact: true }).click();
    await waitForListed(p, `${dir}/made by a process/deeper`);
    await waitForText(filesView(p), 'Empty directory.');
    await filesView(p).getByRole('button', { name: 'Up to the parent directory' }).click();
    await waitForListed(p, `${dir}/made by a process`);
    await fileRow(p, 'inside.txt').waitFor();
    await filesView(p).getByRole('navigation', { name: 'Path' }).getByRole('button', { name: 'browse', exact: true }).click();
    await waitForListed(p, dir);
    await fileRow(p, 'made by a process').waitFor();
  });

  it("view: a text file's content is shown; a binary file and one over the 1 MiB cap are not read", async () => {
    const dir = freshDir('view');
    const text = 'first line\nzweite Zeile: grüße ✓\n\ttabbed\n';
    writeFileSync(join(dir, 'notes.txt'), text);
    writeFileSync(join(dir, 'blob.bin'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0xff]));
    writeFileSync(join(dir, 'big.log'), Buffer.alloc(1024 * 1024 + 1, 0x61));
    const p = await openAt(dir);
    const viewer = filesView(p).getByRole('region', { name: 'notes.txt' });
    await fileRow(p, 'notes.txt').getByRole('button', { name: 'notes.txt', exact: true }).click();
    await waitForAttribute(viewer, 'data-state', 'shown');
    expect(await viewer.getByTestId('file-text').textContent()).toBe(text);
    await fileRow(p, 'blob.bin').getByRole('button', { name: 'blob.bin', exact: true }).click();
    await waitForAttribute(filesView(p).getByRole('region', { name: 'blob.bin' }), 'data-state', 'binary');
    await fileRow(p, 'big.log').getByRole('button', { name: 'big.log', exact: true }).click();
    const big = filesView(p).getByRole('region', { name: 'big.log' });
    await waitForAttribute(big, 'data-state', 'too-large');
    await waitForText(big.getByTestId('file-status'), "larger than the text view's 1.0 MiB");
  });

  it('upload: a picked file lands on the executor sha256-exact, with its progress bar full', async () => {
    const dir = freshDir('upload-pick');
    const bytes = randomBytes(3 * 1024 * 1024 + 17);
    const p = await openAt(dir);
    await filesView(p).getByLabel('Upload files').setInputFiles({ name: 'picked.bin', mimeType: 'application/octet-stream', buffer: bytes });
    const item = filesView(p).getByRole('list', { name: 'Uploads' }).locator('[data-upload-name="picked.bin"]');
    await waitForAttribute(item, 'data-state', 'done');
    expect(await item.getByRole('progressbar', { name: 'Uploading picked.bin' }).evaluate((bar) => [(bar as unknown as { value: number }).value, (bar as unknown as { max: number }).max])).toEqual([bytes.length, bytes.length]);
    await fileRow(p, 'picked.bin').waitFor();
    expect(sha256(readFileSync(join(dir, 'picked.bin')))).toBe(sha256(bytes));
  });

  it('upload: a file over --max-upload-bytes fails on its line with the host\'s 413, and nothing lands', async () => {
    const dir = freshDir('upload-too-large');
    const p = await openAt(dir);
    await filesView(p).getByLabel('Upload files').setInputFiles({ name: 'huge.bin', mimeType: 'application/octet-stream', buffer: Buffer.alloc(MAX_UPLOAD + 1) });
    const item = filesView(p).getByRole('list', { name: 'Uploads' }).locator('[data-upload-name="huge.bin"]');
    await waitForAttribute(item, 'data-state', 'failed');
    await waitForText(item, /failed: .*at most 4194304 bytes/);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('upload: a file dropped on the view (a DataTransfer dispatched in the page) lands sha256-exact', async () => {
    const dir = freshDir('upload-drop');
    const bytes = randomBytes(700 * 1024 + 3);
    const p = await openAt(dir);
    // The page's own DOM types are not the spec's (no DOM library here): the drop runs as a string.
    await p.evaluate(`(() => {
      const binary = atob(${JSON.stringify(bytes.toString('base64'))});
      const data = new Uint8Array(binary.length);
      for (let i = 0; i < binary.length; i += 1) data[i] = binary.charCodeAt(i);
      const transfer = new DataTransfer();
      transfer.items.add(new File([data], 'dropped.bin', { type: 'application/octet-stream' }));
      const target = document.querySelector('[data-testid="drop-zone"]');
      for (const type of ['dragenter', 'dragover', 'drop']) target.dispatchEvent(new DragEvent(type, { bubbles: true, cancelable: true, dataTransfer: transfer }));
    })()`);
    await waitForAttribute(filesView(p).getByRole('list', { name: 'Uploads' }).locator('[data-upload-name="dropped.bin"]'), 'data-state', 'done');
    await fileRow(p, 'dropped.bin').waitFor();
    expect(sha256(readFileSync(join(dir, 'dropped.bin')))).toBe(sha256(bytes));
  });

  it("download: the browser's download has the file's bytes, fetched by a ticket url (no token in it)", async () => {
    const dir = freshDir('download');
    const bytes = randomBytes(2 * 1024 * 1024 + 5);
    writeFileSync(join(dir, 'result.bin'), bytes);
    const p = await openAt(dir);
    const [download] = await Promise.all([p.waitForEvent('download'), fileRow(p, 'result.bin').getByRole('button', { name: 'Download result.bin' }).click()]);
    expect(download.suggestedFilename()).toBe('result.bin');
    expect(new URL(download.url()).searchParams.has('ticket')).toBe(true);
    expect(download.url()).not.toContain(host.token);
    const saved = await download.path();
    expect(sha256(readFileSync(saved))).toBe(sha256(bytes));
  });

  it('delete: Cancel keeps the file, Delete (confirmed) removes it; a directory goes with what it holds', async () => {
    const dir = freshDir('delete');
    writeFileSync(join(dir, 'doomed.txt'), 'bye\n');
    mkdirSync(join(dir, 'tree', 'sub'), { recursive: true });
    writeFileSync(join(dir, 'tree', 'sub', 'leaf.txt'), 'leaf\n');
    const p = await openAt(dir);
    const dialog = p.getByRole('dialog', { name: 'Delete doomed.txt?' });
    await fileRow(p, 'doomed.txt').getByRole('button', { name: 'Delete doomed.txt' }).click();
    await dialog.getByRole('button', { name: 'Cancel', exact: true }).click();
    await dialog.waitFor({ state: 'detached' });
    expect(existsSync(join(dir, 'doomed.txt'))).toBe(true);
    await fileRow(p, 'doomed.txt').waitFor();

    await fileRow(p, 'doomed.txt').getByRole('button', { name: 'Delete doomed.txt' }).click();
    await dialog.getByRole('button', { name: 'Delete', exact: true }).click();
    await fileRow(p, 'doomed.txt').waitFor({ state: 'detached' });
    expect(existsSync(join(dir, 'doomed.txt'))).toBe(false);

    await fileRow(p, 'tree').getByRole('button', { name: 'Delete tree' }).click();
    await p.getByRole('dialog', { name: 'Delete tree/?' }).getByRole('button', { name: 'Delete', exact: true }).click();
    await fileRow(p, 'tree').waitFor({ state: 'detached' });
    expect(existsSync(join(dir, 'tree'))).toBe(false);
  });

  it('live: a file a process creates appears without a reload, its text view follows it, and it goes when removed', async () => {
    const dir = freshDir('live');
    writeFileSync(join(dir, 'already.txt'), 'here before\n');
    mkdirSync(join(dir, 'reports'));
    writeFileSync(join(dir, 'results.csv'), 'id,value\n1,42\n');
    const p = await openAt(dir);
    await fileRow(p, 'already.txt').waitFor();
    await sh(`echo 'made by a process' > '${dir}/live.txt'`);
    await fileRow(p, 'live.txt').waitFor();
    await fileRow(p, 'live.txt').getByRole('button', { name: 'live.txt', exact: true }).click();
    const viewer = filesView(p).getByRole('region', { name: 'live.txt' });
    await waitForText(viewer.getByTestId('file-text'), 'made by a process');
    await sh(`echo 'and a second line' >> '${dir}/live.txt'`);
    await waitForText(viewer.getByTestId('file-text'), 'and a second line');
    if (process.env.EXEC_RX_DOCS_SCREENSHOT === '1') {
      // The docs' picture of the Files view (docs/dashboard.md): refreshed only when asked.
      await p.screenshot({ path: join(__dirname, '..', '..', 'docs', 'dashboard-files.png') });
    }
    await sh(`rm '${dir}/live.txt'`);
    await fileRow(p, 'live.txt').waitFor({ state: 'detached' });
    await waitForAttribute(viewer, 'data-state', 'removed');
  });

  it('axe-core reports no serious or critical violation in the Files view (a file shown, the delete dialog open)', async () => {
    const dir = freshDir('axe');
    mkdirSync(join(dir, 'sub'));
    writeFileSync(join(dir, 'shown.txt'), 'accessible\n');
    const p = await openAt(dir);
    await fileRow(p, 'shown.txt').getByRole('button', { name: 'shown.txt', exact: true }).click();
    await waitForAttribute(filesView(p).getByRole('region', { name: 'shown.txt' }), 'data-state', 'shown');
    await fileRow(p, 'sub').getByRole('button', { name: 'Delete sub' }).click();
    await p.getByRole('dialog', { name: 'Delete sub/?' }).waitFor();
    // Injected through the DevTools protocol, so the page's CSP stays as it is.
    await p.evaluate(readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8'));
    const violations = await p.evaluate(async () => {
      type Result = { id: string; impact: string | null; help: string; nodes: { target: unknown }[] };
      const axe = (globalThis as unknown as { axe: { run(context: unknown, options: unknown): Promise<{ violations: Result[] }> } }).axe;
      const result = await axe.run((globalThis as unknown as { document: unknown }).document, { resultTypes: ['violations'] });
      return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map((n) => JSON.stringify(n.target)) }));
    });
    if (violations.length > 0) process.stdout.write(`axe (all impacts): ${JSON.stringify(violations)}\n`);
    expect(violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')).toEqual([]);
    await p.getByRole('dialog', { name: 'Delete sub/?' }).getByRole('button', { name: 'Cancel', exact: true }).click();
    expect(existsSync(join(dir, 'sub'))).toBe(true);
  });
});

describe('the dashboard: files, for a view token', () => {
  const VIEW = 'browser-files-view-token-0123456789';
  let viewHost: PageHost;

  beforeAll(async () => {
    const tokens = join(root, 'tokens');
    writeFileSync(tokens, `# NAME ROLE ENVIRONMENTS SECRET\nwatcher view * ${VIEW}\n`, { mode: 0o600 });
    viewHost = await startPageHost({ args: ['--operator-tokens-file', tokens], token: VIEW });
  });

  it('has no Files tab (the file routes answer view tokens 403), and the processes show as before', async () => {
    const p = await context.newPage();
    page = p;
    await openDashboard(p, viewHost.url);
    await selectEnvironment(p, ENV);
    await p.getByRole('table', { name: 'Processes' }).waitFor();
    expect(await p.getByRole('tab').count()).toBe(0);
    expect(await p.getByRole('tabpanel', { name: 'Files' }).count()).toBe(0);
  });
});
