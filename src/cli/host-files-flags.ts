/** The operator API's flags of `exec-rx host` beside the storage ones: `--api-rate`, and the file routes' `--max-upload-bytes`, `--files-root`, `--file-requests`. */
import { parseSize } from './host-storage-args';
import { UsageError } from './usage-error';

/** The flags, for `util.parseArgs`. */
export const FILES_OPTIONS = {
  'max-upload-bytes': { type: 'string' },
  'files-root': { type: 'string', multiple: true },
  'file-requests': { type: 'string' },
  'api-rate': { type: 'string' },
} as const;

/** Their lines of `exec-rx host`'s usage. */
export const HOST_FILES_USAGE = `      --max-upload-bytes SIZE  the largest file upload through the operator API (PUT …/files/content), a
                               size such as 4GiB (default 16GiB); a larger one is refused 413
      --files-root DIR         confine the file routes to DIR on every executor (absolute; repeatable): a
                               path, symlinks resolved, outside every root is refused 403 (default: no
                               root, the executor's own permissions are the limit)
      --file-requests N        file requests of one environment in flight to its executor at once, served
                               fairly (default 4); the executor answers one at a time unless its own
                               concurrent-requests option is raised
      --api-rate N             operator API requests per second per token (default 100, a burst of twice
                               that); beyond, 429 with Retry-After. exec-rx cp makes about one request per
                               file: a tree of 5,000 files takes 50 s at the default`;

/** What the flags say (each `undefined` / empty when not given: the operator API's default). */
export interface FilesFlags {
  readonly maxUploadBytes: number | undefined;
  readonly filesRoots: readonly string[];
  readonly fileRequests: number | undefined;
  /** `--api-rate`: requests per second per operator token. */
  readonly apiRate: number | undefined;
}

/** The `--files-root` directories: absolute paths without `..` (as the file routes take paths). */
function filesRootsOf(roots: readonly string[]): readonly string[] {
  for (const root of roots) {
    const absolute = root.startsWith('/') || /^[A-Za-z]:[\\/]/.test(root);
    if (!absolute || root.split(/[\\/]+/).includes('..') || root.includes('\0')) throw new UsageError(`--files-root expects an absolute directory without .. (got ${root})`);
  }
  return roots;
}

/** Checks the flags (a UsageError for a bad one). */
export function filesFlagsOf(values: {
  readonly 'max-upload-bytes'?: string;
  readonly 'files-root'?: readonly string[];
  readonly 'file-requests'?: string;
  readonly 'api-rate'?: string;
}): FilesFlags {
  const requests = values['file-requests'];
  const rate = values['api-rate'];
  if (rate !== undefined && !(/^[1-9][0-9]{0,6}$/.test(rate))) throw new UsageError('--api-rate expects a whole number of requests per second from 1 to 9999999');
  if (requests !== undefined && !/^([1-9]|[1-5][0-9]|6[0-4])$/.test(requests)) throw new UsageError('--file-requests expects a whole number from 1 to 64');
  return {
    maxUploadBytes: parseSize('--max-upload-bytes', values['max-upload-bytes'], 1),
    filesRoots: filesRootsOf(values['files-root'] ?? []),
    fileRequests: requests === undefined ? undefined : Number(requests),
    apiRate: rate === undefined ? undefined : Number(rate),
  };
}
