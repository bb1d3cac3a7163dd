/**
 * The operator API's file routes' wire shapes (issue 41, `/api/v1/environments/{id}/files`): the entries
 * the host answers, the change stream's data, and the JSON bodies of the directory, copy and move
 * routes. Pure data, shared by the host and its clients.
 */
import * as t from 'io-ts';
import { NonNegativeInteger } from './integer';
import { struct } from './struct';

/** What an entry is: a regular file, a directory, or anything else (a socket, a device, a dangling link). */
export const FileType = t.keyof({ file: null, directory: null, other: null }, 'FileType');
/** What an entry is. */
export type FileType = t.TypeOf<typeof FileType>;

/**
 * One file or directory of an environment: its absolute path and name, what it is, its size in bytes,
 * when it was last modified (ISO-8601 with milliseconds; `null` when the executor did not say), whether
 * the path itself is a symlink (the rest describes its target), and its weak ETag (`W/"<size>-<mtimeMs>"`,
 * `null` for a directory or without an mtime).
 */
export const FileEntry = struct('FileEntry', {
  path: t.string,
  name: t.string,
  type: FileType,
  size: NonNegativeInteger,
  modifiedAt: t.union([t.string, t.null]),
  isSymlink: t.boolean,
  etag: t.union([t.string, t.null]),
});
/** One file or directory of an environment. */
export type FileEntry = t.TypeOf<typeof FileEntry>;

/** `GET …/files/entries`: a directory's entries, sorted by name; `truncated` when the host listed only part of it. */
export const FileListing = struct('FileListing', { path: t.string, entries: t.array(FileEntry), truncated: t.boolean });
/** A directory's entries. */
export type FileListing = t.TypeOf<typeof FileListing>;

/** One path a walk found. */
export const FoundEntry = struct('FoundEntry', { path: t.string, type: FileType });
/** One path a walk found. */
export type FoundEntry = t.TypeOf<typeof FoundEntry>;

/** `GET …/files/find`: the paths under `path` (matching the glob when one was given); `truncated` when a limit was reached. */
export const FindResult = struct('FindResult', { path: t.string, entries: t.array(FoundEntry), truncated: t.boolean });
/** A walk's answer. */
export type FindResult = t.TypeOf<typeof FindResult>;

/** What happened to an entry under a watched directory. */
export const FileChangeKind = t.keyof({ created: null, changed: null, removed: null }, 'FileChangeKind');
/** What happened to an entry. */
export type FileChangeKind = t.TypeOf<typeof FileChangeKind>;

/** `event: change` data of `GET …/files/changes`: the entry (for `removed`, the last one seen). */
export const FileChange = struct('FileChange', { kind: FileChangeKind, entry: FileEntry });
/** One change under a watched directory. */
export type FileChange = t.TypeOf<typeof FileChange>;

/** `POST …/files/directories`: make `path` (and its missing parents with `parents`). */
export const MakeDirectoryRequest = struct('MakeDirectoryRequest', { path: t.string }, { parents: t.boolean });
/** A mkdir's body. */
export type MakeDirectoryRequest = t.TypeOf<typeof MakeDirectoryRequest>;

/** `POST …/files/copy` and `…/files/move`: from `source` to `destination`, replacing what is there only with `overwrite`. */
export const TransferRequest = struct('TransferRequest', { source: t.string, destination: t.string }, { overwrite: t.boolean });
/** A copy's or move's body. */
export type TransferRequest = t.TypeOf<typeof TransferRequest>;

/** The SSE event type of the change stream. */
export const FILE_CHANGE_EVENT = 'change';

/** The host's name for {@link FoundEntry} (one path a walk found). */
export const FoundPath = FoundEntry;
/** One path a walk found. */
export type FoundPath = FoundEntry;

/** The host's name for {@link MakeDirectoryRequest} (`POST …/files/directories`). */
export const CreateDirectoryRequest = MakeDirectoryRequest;
/** The body of a mkdir. */
export type CreateDirectoryRequest = MakeDirectoryRequest;
