/**
 * What the Files view uses of `HostClient.files(environmentId)` (the contract's `HostFiles`): the view is
 * written against this part only, so a spec or a later client change touches one place.
 */
import type { Observable } from 'rxjs';

/** One entry of a directory (the operator API's `FileEntry`). */
export interface FileEntry {
  readonly path: string;
  readonly name: string;
  readonly type: 'file' | 'directory' | 'other';
  readonly size: number;
  readonly modifiedAt: string | null;
  readonly isSymlink: boolean;
  readonly etag: string | null;
}

/** A change under a watched directory (for `removed`: the entry last seen). */
export interface FileChange {
  readonly kind: 'created' | 'changed' | 'removed';
  readonly entry: FileEntry;
}

/** A directory's listing. */
export interface FileListing {
  readonly path: string;
  readonly entries: readonly FileEntry[];
  readonly truncated: boolean;
}

/** The calls of one environment's files the view makes. */
export interface FilesPort {
  list(path: string): Promise<FileListing>;
  read(path: string, options?: { readonly signal?: AbortSignal }): ReadableStream<Uint8Array>;
  write(path: string, data: Blob, options?: { readonly onProgress?: (bytes: number, total?: number) => void; readonly signal?: AbortSignal }): Promise<FileEntry>;
  mkdir(path: string, options?: { readonly parents?: boolean }): Promise<FileEntry>;
  remove(path: string, options?: { readonly recursive?: boolean }): Promise<void>;
  changes$(path: string): Observable<FileChange>;
  downloadUrl(path: string): Promise<string>;
}
