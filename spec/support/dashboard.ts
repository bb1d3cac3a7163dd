/**
 * Steps on the dashboard by its DOM contract (CONTRACT-23 section 2: accessible names and data attributes),
 * for the browser specs. Every wait is on the event itself (a locator or a page function), never a sleep.
 */
import type { Locator, Page } from 'playwright-core';

/** The host banner. */
export const hostLink = (page: Page): Locator => page.locator('[data-testid="host-link"]');

/** An environment's list item. */
export const environmentItem = (page: Page, environmentId: string): Locator => page.getByRole('list', { name: 'Environments' }).locator(`[data-environment-id="${environmentId}"]`);

/** An environment's state badge. */
export const environmentBadge = (page: Page, environmentId: string): Locator => environmentItem(page, environmentId).locator('[data-testid="environment-state"]');

/** A process's row. */
export const processRow = (page: Page, processId: string): Locator => page.getByRole('table', { name: 'Processes' }).locator(`[data-process-id="${processId}"]`);

/** Waits until `locator` (one element) has attribute `name` equal to `value`. */
export async function waitForAttribute(locator: Locator, name: string, value: string, timeout = 60_000): Promise<void> {
  await locator.and(locator.page().locator(`[${name}="${value}"]`)).waitFor({ state: 'attached', timeout });
}

/** Waits until `locator` has text matching `pattern`. */
export async function waitForText(locator: Locator, pattern: RegExp | string, timeout = 60_000): Promise<void> {
  await locator.filter({ hasText: pattern }).first().waitFor({ state: 'attached', timeout });
}

/** Opens `url` (with its #token) and waits for the banner to say the page is connected. */
export async function openDashboard(page: Page, url: string): Promise<void> {
  await page.goto(url);
  await waitForAttribute(hostLink(page), 'data-state', 'open');
}

/** Selects an environment and waits for its badge to say connected. */
export async function selectEnvironment(page: Page, environmentId: string): Promise<void> {
  const item = environmentItem(page, environmentId);
  await item.getByRole('button', { name: environmentId, exact: true }).click();
  await waitForAttribute(environmentBadge(page, environmentId), 'data-state', 'connected');
}

/** Clicks a process's row button (the first button of its row). */
export async function selectProcess(page: Page, processId: string): Promise<void> {
  await processRow(page, processId).getByRole('button').first().click();
}

/** A row's exit code cell (argv, state, exit code, started, duration). */
export const exitCodeCell = (page: Page, processId: string): Locator => processRow(page, processId).getByRole('cell').nth(2);

/** Waits for a process's row to show exit code `code`. */
export async function waitForExitCode(page: Page, processId: string, code: number, timeout = 60_000): Promise<void> {
  await waitForText(exitCodeCell(page, processId), new RegExp(`^\\s*${code}\\s*$`), timeout);
}

/** The row the page selected last (after a start: the new process), by its data-process-id. */
export async function selectedProcessId(page: Page, argvText: string): Promise<string> {
  const row = page.getByRole('table', { name: 'Processes' }).locator('[data-process-id]').filter({ has: page.getByRole('button', { name: argvText, exact: true }) }).last();
  await row.waitFor({ state: 'attached' });
  const id = await row.getAttribute('data-process-id');
  if (id === null) throw new Error(`no process row for ${argvText}`);
  return id;
}

/** Fills the start form and clicks Start; resolves with the new process's id (its row). */
export async function startByForm(
  page: Page,
  command: string,
  options: { readonly argv?: boolean; readonly tty?: boolean; readonly pipeStdin?: boolean; readonly rowName?: string } = {},
): Promise<string> {
  const form = page.getByRole('form', { name: 'Start a process' });
  if (options.argv === true) await form.getByRole('radio', { name: 'Argv (one per line)' }).check();
  else await form.getByRole('radio', { name: 'Shell line' }).check();
  await form.getByRole('textbox', { name: 'Command' }).fill(command);
  const tty = form.getByRole('checkbox', { name: 'TTY' });
  if (options.tty === true) await tty.check();
  else await tty.uncheck();
  const pipe = form.getByRole('checkbox', { name: 'Pipe stdin' });
  if (options.pipeStdin === true) await pipe.check();
  else await pipe.uncheck();
  const rows = page.getByRole('table', { name: 'Processes' }).locator('[data-process-id]');
  const before = new Set(await rows.evaluateAll((elements) => elements.map((e) => e.getAttribute('data-process-id'))));
  await form.getByRole('button', { name: 'Start' }).click();
  // The new row is the one that was not there before.
  const handle = await page.waitForFunction(
    (known) => {
      const doc = (globalThis as unknown as { document: { querySelectorAll(s: string): ArrayLike<{ getAttribute(n: string): string | null }> } }).document;
      const all = Array.from(doc.querySelectorAll('[data-process-id]')).map((e) => e.getAttribute('data-process-id'));
      return all.find((id) => id !== null && !known.includes(id)) ?? false;
    },
    [...before].filter((id): id is string => id !== null),
  );
  const id = await handle.jsonValue();
  if (typeof id !== 'string') throw new Error('no new process row');
  return id;
}

/** The Files view (the "Files" tab's panel). */
export const filesView = (page: Page): Locator => page.getByRole('tabpanel', { name: 'Files' });

/** A row of the Files table, by the entry's name. */
export const fileRow = (page: Page, name: string): Locator => filesView(page).getByRole('table', { name: 'Files' }).locator(`[data-file-name="${name.replace(/["\\]/g, '\\$&')}"]`);

/** Opens the Files tab at `dir` (typed into "Go to path") and waits until it is listed and followed live. */
export async function openFilesAt(page: Page, dir: string): Promise<void> {
  await page.getByRole('tab', { name: 'Files' }).click();
  await goToPath(page, dir);
}

/** Types `dir` into "Go to path" and waits until it is listed and followed live. */
export async function goToPath(page: Page, dir: string): Promise<void> {
  const view = filesView(page);
  await view.getByRole('textbox', { name: 'Go to path' }).fill(dir);
  await view.getByRole('textbox', { name: 'Go to path' }).press('Enter');
  await waitForListed(page, dir);
}

/** Waits until the Files view shows `dir` (its path bar's current step is its last name) and follows it live. */
export async function waitForListed(page: Page, dir: string, timeout = 60_000): Promise<void> {
  const view = filesView(page);
  const last = dir.split('/').filter((s) => s !== '').pop() ?? '/';
  await view.getByRole('navigation', { name: 'Path' }).locator('[aria-current="location"]').filter({ hasText: new RegExp(`^${last.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`) }).waitFor({ timeout });
  await waitForAttribute(view.locator('[data-testid="files-live"]'), 'data-state', 'live', timeout);
}
