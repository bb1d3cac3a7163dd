/**
 * A path's `fs/getMetadata` answer as the API shows it (`FileEntry`), its weak validator and its HTTP
 * dates.
 */
import type { FileEntry, FileType } from '../../../wire/files-api';
import type { FsGetMetadataResponse } from '../../../wire/fs';
import type { FilePath } from './file-path';
import { baseName, normalized } from './file-path';

/** What a metadata answer says the path is. */
export const typeOf = (meta: FsGetMetadataResponse): FileType => (meta.isDirectory ? 'directory' : meta.isFile ? 'file' : 'other');

/**
 * The weak ETag of a file: `W/"<size>-<mtimeMs>"`. Weak because size and a millisecond mtime do not prove
 * the bytes equal (a rewrite within one millisecond to the same size keeps it): fine for a cache's
 * revalidation (`If-None-Match`), not for a strong comparison (an `If-Range` with an ETag never matches).
 */
export const etagOf = (meta: FsGetMetadataResponse): string => `W/"${meta.size}-${meta.modifiedAtMs}"`;

/** The modification time as ISO-8601, `null` when the executor gives none (0). */
const isoOf = (ms: number): string | null => (ms > 0 ? new Date(ms).toISOString() : null);

/** The entry of `path` (normalized) from its metadata. */
export function entryOf(path: FilePath, meta: FsGetMetadataResponse): FileEntry {
  const type = typeOf(meta);
  const clean = normalized(path);
  return {
    path: clean.native,
    name: baseName(clean),
    type,
    size: meta.size,
    modifiedAt: isoOf(meta.modifiedAtMs),
    isSymlink: meta.isSymlink,
    etag: type === 'file' ? etagOf(meta) : null,
  };
}

/** `Last-Modified` of a metadata answer (an HTTP date, whole seconds), `undefined` without an mtime. */
export const lastModifiedOf = (meta: FsGetMetadataResponse): string | undefined => (meta.modifiedAtMs > 0 ? new Date(meta.modifiedAtMs).toUTCString() : undefined);
