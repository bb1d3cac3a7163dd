/**
 * Where Debian's chromium is, how the browser specs launch it, and the pinned playwright-core's version;
 * no jest hooks here, so the browser step's globalSetup may use it.
 */
import { existsSync, readFileSync } from 'node:fs';

/** Where Debian puts chromium. */
export const CHROMIUM = '/usr/bin/chromium';

/** Flags for a root, headless, offline chromium (the list). */
export const CHROMIUM_ARGS: readonly string[] = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** The pinned playwright-core's version. */
export function playwrightVersion(): string {
  const manifest = JSON.parse(readFileSync(require.resolve('playwright-core/package.json'), 'utf8')) as { version?: unknown };
  return typeof manifest.version === 'string' ? manifest.version : 'unknown';
}

/** Fails loudly (never skips) when chromium is missing. */
export function requireChromium(): void {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: the browser specs need Debian's chromium and fonts-liberation. Run \`bash scripts/install-test-deps.sh\` (as root it installs them: apt-get update && apt-get install -y chromium fonts-liberation)`);
  }
}
