/**
 * What `HostFiles` hands its users, as documented interfaces: the file routes' answers, checked against
 * the wire codecs of `wire/files-api` when they arrive (each codec's type is assignable to its interface
 * here: `FileTypesFit` fails to compile when they part).
 */
import type * as wire from '../wire/files-api';

/** What a path is: a file, a directory, or anything else (a socket, a device, a dangling link). */
export type FileType = 'file' | 'directory' | 'other';

/** One file or directory as the host shows it. */
export interface FileEntry {
  /** Its absolute path on the executor. */
  readonly path: string;
  /** Its last segment. */
  readonly name: string;
  /** What it is (a symlink is what it points to; see `isSymlink`). */
  readonly type: FileType;
  /** Its size in bytes (a symlink's target's). */
  readonly size: number;
  /** When it was last modified (ISO-8601 with milliseconds); null when the executor gives none. */
  readonly modifiedAt: string | null;
  /** Whether the path itself is a symbolic link. */
  readonly isSymlink: boolean;
  /** A file's weak validator `W/"<size>-<mtimeMs>"` (for `ifMatch`); null for a directory. */
  readonly etag: string | null;
}

/** A directory's entries (`list`), sorted by name. */
export interface FileListing {
  /** The directory. */
  readonly path: string;
  /** Its entries. */
  readonly entries: readonly FileEntry[];
  /** Whether the host's cap on a listing cut it. */
  readonly truncated: boolean;
}

/** One path a `find` found. */
export interface FoundPath {
  /** Its absolute path. */
  readonly path: string;
  /** What it is. */
  readonly type: FileType;
}

/** What a `find` answers. */
export interface FindResult {
  /** The directory walked. */
  readonly path: string;
  /** The paths that matched. */
  readonly entries: readonly FoundPath[];
  /** Whether a limit of the walk was hit (there may be more). */
  readonly truncated: boolean;
}

/** The kinds of change `changes$` reports. */
export type FileChangeKind = 'created' | 'changed' | 'removed';

/** One change under a watched directory. */
export interface FileChange {
  /** Created, changed (size or time) or removed. */
  readonly kind: FileChangeKind;
  /** The entry now; for `removed`, as it was last seen. */
  readonly entry: FileEntry;
}

/** Accepts `true` only. */
type Holds<T extends true> = T;

/** Compiles only while every codec's type fits its interface. @internal */
export type FileTypesFit = [
  Holds<wire.FileEntry extends FileEntry ? true : false>,
  Holds<wire.FileListing extends FileListing ? true : false>,
  Holds<wire.FindResult extends FindResult ? true : false>,
  Holds<wire.FileChange extends FileChange ? true : false>,
  Holds<FileType extends wire.FileType ? true : false>,
];
