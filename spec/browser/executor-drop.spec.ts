/**
 * Issue 23: the executor's socket dropped shows on the dashboard as its badge going to reconnecting, then
 * connected. The built `exec-rx host` (no local executor) accepts a real codex executor in direct mode that
 * dials it through a TCP proxy (spec/support/ws-proxy.ts; the connect url the host hands back is built
 * from the Host header, so the re-dial goes through the proxy too); pausing the proxy drops the socket.
 */
import type { Browser, Page } from 'playwright-core';
import { cspViolations, launchChromium, newContext, screenshot } from '../support/browser';
import type { PageHost } from '../support/browser-host';
import { startPageHost } from '../support/browser-host';
import { environmentBadge, openDashboard, selectEnvironment, waitForAttribute, waitForText } from '../support/dashboard';
import { startDirectExecutor, TEST_AWS_CREDENTIALS, trackForCleanup } from '../support/executor';
import type { DisconnectableProxy } from '../support/ws-proxy';
import { startDisconnectableProxy } from '../support/ws-proxy';

jest.setTimeout(180_000);

const ENV = 'proxied';

let host: PageHost;
let proxy: DisconnectableProxy;
let browser: Browser;
let page: Page | undefined;

beforeAll(async () => {
  host = await startPageHost({
    localExecutor: false,
    env: { EXEC_RX_ACCESS_KEY_ID: TEST_AWS_CREDENTIALS.accessKeyId, EXEC_RX_SECRET_ACCESS_KEY: TEST_AWS_CREDENTIALS.secretAccessKey },
  });
  proxy = trackForCleanup(await startDisconnectableProxy(host.port));
  await startDirectExecutor({ remoteUrl: `http://127.0.0.1:${proxy.port}`, environmentId: ENV });
  await host.run.waitFor('stderr', `environment ${ENV} generation 1: connected`);
  browser = await launchChromium();
});

afterEach(async () => {
  if (page === undefined) return;
  await screenshot(page, `executor-${expect.getState().currentTestName ?? 'spec'}`);
  const violations = await cspViolations(page);
  await page.close();
  page = undefined;
  expect(violations).toEqual([]);
});

describe('the dashboard: an executor', () => {
  it('its socket dropped: the badge shows reconnecting, then connected', async () => {
    const context = await newContext(browser);
    page = await context.newPage();
    await openDashboard(page, host.url);
    await selectEnvironment(page, ENV);
    const badge = environmentBadge(page, ENV);
    const redial = proxy.connectionCount + 1;
    proxy.pause();
    await waitForAttribute(badge, 'data-state', 'reconnecting');
    await waitForText(badge, /^reconnecting/);
    await screenshot(page, 'executor-reconnecting');
    proxy.resume();
    await proxy.waitForConnection(redial, 60_000);
    await waitForAttribute(badge, 'data-state', 'connected');
    await waitForText(badge, /^connected/);
  });
});
