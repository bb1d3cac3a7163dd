/** Where the helpers of a start (the sizing wrapper, the stdin FIFO) keep their files on the executor. */
import type { EnvironmentInfo } from '../wire/environment';

/** Where {@link executorTempDir} falls back to. */
const FALLBACK = '/tmp';

/**
 * The executor's temp dir (`info.tempDir`, a `file://` URI) as a native POSIX path, for the `sh`
 * helpers that run there; `/tmp` when the info is unknown, has no temp dir, or it is not a `file:` URI
 * with a path and no host. Decoded by hand rather than with `fileURLToPath`, whose result follows this
 * machine's platform, not the executor's. Never throws.
 */
export function executorTempDir(info: EnvironmentInfo | undefined): string {
  if (info?.tempDir === undefined) return FALLBACK;
  try {
    const url = new URL(info.tempDir);
    const path = url.protocol === 'file:' && url.host === '' ? decodeURIComponent(url.pathname) : '';
    return path === '' ? FALLBACK : path;
  } catch {
    return FALLBACK;
  }
}
