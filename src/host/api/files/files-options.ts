/**
 * The options of the operator API's file routes (`OperatorApiOptions.files`; the flags of `exec-rx host`),
 * their defaults and their check.
 */
import { checkedPath } from './file-path';
import { ApiProblem } from '../problem';

/** Options of the file routes. */
export interface FilesOptions {
  /**
   * The largest upload (`PUT …/files/content`), in bytes: a larger Content-Length is refused 413 before
   * reading, a chunked body once it passes it. @default 17179869184 (16 GiB)
   */
  readonly maxUploadBytes?: number;
  /**
   * Directories of the executors (absolute native paths) the file routes are confined to: a path whose
   * canonical form (symlinks resolved) is under none of them is refused 403 `OUTSIDE_FILES_ROOT`. The check
   * runs before each call, and the call follows symlinks when it runs: see docs/operator-api.md for the race
   * that remains. @default none: the executor's own permissions are the only limit
   */
  readonly roots?: readonly string[];
  /** File requests of one environment in flight to its executor at once (the fair queue, `./fair-queue`). @default 4 */
  readonly requestsInFlight?: number;
  /**
   * Executor file handles (downloads and uploads) one environment holds open through this host at once; a
   * transfer that finds them all taken waits its turn for up to {@link handleWaitMs}, then 503 `FILE_BUSY`.
   * @default 32
   */
  readonly maxHandles?: number;
  /** How long a download or upload waits for one of the {@link maxHandles} (first come, first served) before 503 `FILE_BUSY`, in ms. @default 10000 */
  readonly handleWaitMs?: number;
  /**
   * How long an upload waits for its client's next bytes (its waits on the executor do not count) before
   * 408 `REQUEST_TIMEOUT` and a closed connection, in ms. An upload has no bound as a whole. @default 60000
   */
  readonly uploadIdleMs?: number;
}

/** The options with their defaults filled in. */
export interface FilesSettings {
  readonly maxUploadBytes: number;
  readonly roots: readonly string[];
  readonly requestsInFlight: number;
  readonly maxHandles: number;
  readonly handleWaitMs: number;
  readonly uploadIdleMs: number;
}

/** The default of {@link FilesOptions.maxUploadBytes}: 16 GiB. */
export const DEFAULT_MAX_UPLOAD_BYTES = 16 * 1024 ** 3;
/** The default of {@link FilesOptions.requestsInFlight}. */
export const DEFAULT_FILE_REQUESTS = 4;
/** The default of {@link FilesOptions.maxHandles}. */
export const DEFAULT_FILE_HANDLES = 32;
/** The default of {@link FilesOptions.handleWaitMs}. */
export const DEFAULT_HANDLE_WAIT_MS = 10_000;
/** The default of {@link FilesOptions.uploadIdleMs}. */
export const DEFAULT_UPLOAD_IDLE_MS = 60_000;

/**
 * The settings of `options`; throws a RangeError naming the first option out of range (whole numbers
 * >= 1; roots absolute paths without `..`), so a host refuses to start rather than fail each request.
 */
export function filesSettings(options: FilesOptions = {}): FilesSettings {
  const whole = (name: string, value: number | undefined, fallback: number): number => {
    if (value === undefined) return fallback;
    if (!(Number.isSafeInteger(value) && value >= 1)) throw new RangeError(`operator option files.${name} must be a whole number >= 1 (got ${value})`);
    return value;
  };
  const roots = (options.roots ?? []).map((root) => {
    try {
      return checkedPath(root, 'a files root').native;
    } catch (error: unknown) {
      throw new RangeError(error instanceof ApiProblem ? `operator option files.roots: ${error.detail ?? error.code}` : String(error));
    }
  });
  return {
    maxUploadBytes: whole('maxUploadBytes', options.maxUploadBytes, DEFAULT_MAX_UPLOAD_BYTES),
    roots,
    requestsInFlight: whole('requestsInFlight', options.requestsInFlight, DEFAULT_FILE_REQUESTS),
    maxHandles: whole('maxHandles', options.maxHandles, DEFAULT_FILE_HANDLES),
    handleWaitMs: whole('handleWaitMs', options.handleWaitMs, DEFAULT_HANDLE_WAIT_MS),
    uploadIdleMs: whole('uploadIdleMs', options.uploadIdleMs, DEFAULT_UPLOAD_IDLE_MS),
  };
}
