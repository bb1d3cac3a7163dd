/**
 * Locating the native `codex` binary shipped by the `@openai/codex-<os>-<arch>` npm packages. The native
 * binary is spawned directly, never the `codex` npm wrapper (on Node 20 the wrapper stays alive as a parent
 * process, and killing it orphans the executor).
 */
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ExecutorStartError } from '../errors';

const TARGET_TRIPLES: Readonly<Record<string, string>> = {
  'linux-x64': 'x86_64-unknown-linux-musl',
  'linux-arm64': 'aarch64-unknown-linux-musl',
  'darwin-x64': 'x86_64-apple-darwin',
  'darwin-arm64': 'aarch64-apple-darwin',
  'win32-x64': 'x86_64-pc-windows-msvc',
  'win32-arm64': 'aarch64-pc-windows-msvc',
};

function tryResolve(id: string, paths?: string[]): string | undefined {
  try {
    return paths === undefined ? require.resolve(id) : require.resolve(id, { paths });
  } catch {
    return undefined;
  }
}

function findInVendor(vendorDir: string, triple: string | undefined, exe: string): string | undefined {
  const preferred = triple === undefined ? undefined : join(vendorDir, triple, 'bin', exe);
  if (preferred !== undefined && existsSync(preferred)) return preferred;
  if (!existsSync(vendorDir)) return undefined;
  for (const entry of readdirSync(vendorDir)) {
    const candidate = join(vendorDir, entry, 'bin', exe);
    if (existsSync(candidate)) return candidate;
  }
  return undefined;
}

/**
 * The path of the native `codex` binary from the installed platform package (`@openai/codex-<os>-<arch>`,
 * top-level or nested under `@openai/codex`). Throws ExecutorStartError (`EXECUTOR_START_FAILED`)
 * explaining how to get an executor.
 */
export function resolveCodexBinary(): string {
  const os = process.platform === 'android' ? 'linux' : process.platform;
  const key = `${os}-${process.arch}`;
  const platformPackage = `@openai/codex-${key}`;
  const exe = process.platform === 'win32' ? 'codex.exe' : 'codex';
  const vendorDirs: string[] = [];
  const platformJson = tryResolve(`${platformPackage}/package.json`);
  if (platformJson !== undefined) vendorDirs.push(join(dirname(platformJson), 'vendor'));
  const wrapperJson = tryResolve('@openai/codex/package.json');
  if (wrapperJson !== undefined) {
    const nested = tryResolve(`${platformPackage}/package.json`, [dirname(wrapperJson)]);
    if (nested !== undefined) vendorDirs.push(join(dirname(nested), 'vendor'));
    vendorDirs.push(join(dirname(wrapperJson), 'vendor'));
  }
  for (const vendorDir of vendorDirs) {
    const found = findInVendor(vendorDir, TARGET_TRIPLES[key], exe);
    if (found !== undefined) return found;
  }
  throw new ExecutorStartError(
    `no codex executor binary found for ${key} (package ${platformPackage}). ` +
      'Install one with `npm install @openai/codex@0.171.0`, ' +
      'or use --connect ws://HOST:PORT to reach an executor that is already listening.',
  );
}

