/**
 * The shapes of the operator API's file routes (`/api/v1/environments/{environmentId}/files…`):
 * what they answer (`FileEntry`, listings, the change stream's `FileChange`) and the JSON bodies they
 * take (a directory to make, a copy or a move). Paths are native absolute paths of the executor.
 */
import * as t from 'io-ts';
import { struct } from './struct';

/** What a path is: a file, a directory, or anything else (a socket, a device, a dangling link). */
export const FileType = t.keyof({ file: null, directory: null, other: null }, 'FileType');
/** What a path is. */
export type FileType = t.TypeOf<typeof FileType>;

/**
 * One file or directory as the API shows it. `size` and `modifiedAt` follow a symlink (as `fs/getMetadata`
 * does); `isSymlink` says the path itself is one. `modifiedAt` is ISO-8601 with milliseconds, `null` when the
 * executor gives none. `etag` is the weak validator `W/"<size>-<mtimeMs>"` of a file (`null` for a directory).
 */
export const FileEntry = struct('FileEntry', {
  path: t.string,
  name: t.string,
  type: FileType,
  size: t.number,
  modifiedAt: t.union([t.string, t.null]),
  isSymlink: t.boolean,
  etag: t.union([t.string, t.null]),
});
/** One file or directory. */
export type FileEntry = t.TypeOf<typeof FileEntry>;

/** `GET …/files/entries`: a directory's entries, sorted by name; `truncated` when the host's cap cut the list. */
export const FileListing = struct('FileListing', { path: t.string, entries: t.array(FileEntry), truncated: t.boolean });
/** A directory's entries. */
export type FileListing = t.TypeOf<typeof FileListing>;

/** One path a walk found (`GET …/files/find`). */
export const FoundPath = struct('FoundPath', { path: t.string, type: FileType });
/** One path a walk found. */
export type FoundPath = t.TypeOf<typeof FoundPath>;

/** `GET …/files/find`: the paths under a directory that match, `truncated` when a limit was hit. */
export const FindResult = struct('FindResult', { path: t.string, entries: t.array(FoundPath), truncated: t.boolean });
/** What a find answers. */
export type FindResult = t.TypeOf<typeof FindResult>;

/** The kinds of change the change stream reports. */
export const FileChangeKind = t.keyof({ created: null, changed: null, removed: null }, 'FileChangeKind');
/** A kind of change. */
export type FileChangeKind = t.TypeOf<typeof FileChangeKind>;

/** One `change` event of `GET …/files/changes`: for `removed`, the entry as last seen. */
export const FileChange = struct('FileChange', { kind: FileChangeKind, entry: FileEntry });
/** One change under a watched directory. */
export type FileChange = t.TypeOf<typeof FileChange>;

/** `POST …/files/directories`: the directory to make; `parents` makes the missing ones above it too. */
export const CreateDirectoryRequest = struct('CreateDirectoryRequest', { path: t.string }, { parents: t.boolean });
/** The body of a mkdir. */
export type CreateDirectoryRequest = t.TypeOf<typeof CreateDirectoryRequest>;

/** `POST …/files/copy` and `…/files/move`: from `source` to `destination`; `overwrite` replaces a destination that exists. */
export const TransferRequest = struct('TransferRequest', { source: t.string, destination: t.string }, { overwrite: t.boolean });
/** The body of a copy or a move. */
export type TransferRequest = t.TypeOf<typeof TransferRequest>;
