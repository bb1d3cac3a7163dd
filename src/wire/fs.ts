import * as t from 'io-ts';
import { Base64Bytes } from './base64';
import { Integer, NonNegativeInteger } from './integer';
import { SandboxContext } from './sandbox';
import { struct } from './struct';

// docs/protocol.md#filesystem-methods. Every path is a `file://` URI. Every method but the handle ones
// and `fs/watchMissing` accepts an optional `sandbox` (null or absent: direct access).
const sandbox = t.union([SandboxContext, t.null]);

/** The `{}` result of `fs/writeFile`, `fs/createDirectory`, `fs/remove`, `fs/copy`, `fs/writeBlock`, `fs/close`. */
export const FsEmptyResponse = struct('FsEmptyResponse', {});
/** The `{}` result. */
export type FsEmptyResponse = t.TypeOf<typeof FsEmptyResponse>;

/** `fs/readFile` params (missing → -32004; a directory → -32600). */
export const FsReadFileParams = struct('FsReadFileParams', { path: t.string }, { followSymlinks: t.boolean, sandbox });
/** `fs/readFile` params. */
export type FsReadFileParams = t.TypeOf<typeof FsReadFileParams>;

/** `fs/readFile` result: the whole file as bytes (the executor caps files at 512 MiB). */
export const FsReadFileResponse = struct('FsReadFileResponse', { dataBase64: Base64Bytes });
/** `fs/readFile` result. */
export type FsReadFileResponse = t.TypeOf<typeof FsReadFileResponse>;

/** `fs/writeFile` params: creates or truncates `path` (its parent must exist). Result {@link FsEmptyResponse}. */
export const FsWriteFileParams = struct('FsWriteFileParams', { path: t.string, dataBase64: Base64Bytes }, { followSymlinks: t.boolean, sandbox });
/** `fs/writeFile` params. */
export type FsWriteFileParams = t.TypeOf<typeof FsWriteFileParams>;

/** `fs/createDirectory` params (`recursive` omitted behaves as `true`). Result {@link FsEmptyResponse}. */
export const FsCreateDirectoryParams = struct(
  'FsCreateDirectoryParams',
  { path: t.string },
  { recursive: t.boolean, followSymlinks: t.boolean, sandbox },
);
/** `fs/createDirectory` params. */
export type FsCreateDirectoryParams = t.TypeOf<typeof FsCreateDirectoryParams>;

/** `fs/getMetadata` params (by default follows a symlink for type and size). */
export const FsGetMetadataParams = struct('FsGetMetadataParams', { path: t.string }, { followSymlinks: t.boolean, sandbox });
/** `fs/getMetadata` params. */
export type FsGetMetadataParams = t.TypeOf<typeof FsGetMetadataParams>;

/** `fs/getMetadata` result; `createdAtMs` is 0 where the platform does not record it. */
export const FsGetMetadataResponse = struct('FsGetMetadataResponse', {
  isDirectory: t.boolean,
  isFile: t.boolean,
  isSymlink: t.boolean,
  size: NonNegativeInteger,
  createdAtMs: Integer,
  modifiedAtMs: Integer,
});
/** `fs/getMetadata` result. */
export type FsGetMetadataResponse = t.TypeOf<typeof FsGetMetadataResponse>;

/** `fs/canonicalize` params. */
export const FsCanonicalizeParams = struct('FsCanonicalizeParams', { path: t.string }, { sandbox });
/** `fs/canonicalize` params. */
export type FsCanonicalizeParams = t.TypeOf<typeof FsCanonicalizeParams>;

/** `fs/canonicalize` result: the canonical `file://` URI. */
export const FsCanonicalizeResponse = struct('FsCanonicalizeResponse', { path: t.string });
/** `fs/canonicalize` result. */
export type FsCanonicalizeResponse = t.TypeOf<typeof FsCanonicalizeResponse>;

/** `fs/readDirectory` params. */
export const FsReadDirectoryParams = struct('FsReadDirectoryParams', { path: t.string }, { sandbox });
/** `fs/readDirectory` params. */
export type FsReadDirectoryParams = t.TypeOf<typeof FsReadDirectoryParams>;

/** One `fs/readDirectory` entry (a symlink reports its target's type). */
export const FsDirectoryEntry = struct('FsDirectoryEntry', { fileName: t.string, isDirectory: t.boolean, isFile: t.boolean });
/** One `fs/readDirectory` entry. */
export type FsDirectoryEntry = t.TypeOf<typeof FsDirectoryEntry>;

/** `fs/readDirectory` result (unsorted). */
export const FsReadDirectoryResponse = struct('FsReadDirectoryResponse', { entries: t.array(FsDirectoryEntry) });
/** `fs/readDirectory` result. */
export type FsReadDirectoryResponse = t.TypeOf<typeof FsReadDirectoryResponse>;

/** `fs/walk` limits, all required (`maxDirectories`/`maxEntries` 0 → -32600; `maxDepth` 0 lists direct children). */
export const FsWalkOptions = struct('FsWalkOptions', {
  maxDepth: NonNegativeInteger,
  maxDirectories: NonNegativeInteger,
  maxEntries: NonNegativeInteger,
  followDirectorySymlinks: t.boolean,
  pruneHiddenDirectories: t.boolean,
});
/** `fs/walk` limits. */
export type FsWalkOptions = t.TypeOf<typeof FsWalkOptions>;

/** `fs/walk` params. */
export const FsWalkParams = struct('FsWalkParams', { path: t.string, options: FsWalkOptions }, { sandbox });
/** `fs/walk` params. */
export type FsWalkParams = t.TypeOf<typeof FsWalkParams>;

/** One `fs/walk` entry: a `file://` URI and its `kind` (`file`, `directory`, ...). */
export const FsWalkEntry = struct('FsWalkEntry', { path: t.string, kind: t.string });
/** One `fs/walk` entry. */
export type FsWalkEntry = t.TypeOf<typeof FsWalkEntry>;

/** `fs/walk` result; `truncated` when a limit was hit; `errors` are passed through loosely. */
export const FsWalkResponse = struct('FsWalkResponse', { entries: t.array(FsWalkEntry), errors: t.array(t.unknown), truncated: t.boolean });
/** `fs/walk` result. */
export type FsWalkResponse = t.TypeOf<typeof FsWalkResponse>;

/** `fs/remove` params (omitted flags behave as recursive + force). Result {@link FsEmptyResponse}. */
export const FsRemoveParams = struct(
  'FsRemoveParams',
  { path: t.string },
  { recursive: t.boolean, force: t.boolean, followSymlinks: t.boolean, sandbox },
);
/** `fs/remove` params. */
export type FsRemoveParams = t.TypeOf<typeof FsRemoveParams>;

/** `fs/copy` params (`recursive` is required; a directory needs `true`). Result {@link FsEmptyResponse}. */
export const FsCopyParams = struct('FsCopyParams', { sourcePath: t.string, destinationPath: t.string, recursive: t.boolean }, { sandbox });
/** `fs/copy` params. */
export type FsCopyParams = t.TypeOf<typeof FsCopyParams>;

/** `fs/open` mode: `read` (the default) or `replace` (create or truncate, for `fs/writeBlock`). */
export const FsOpenMode = t.keyof({ read: null, replace: null }, 'FsOpenMode');
/** `fs/open` mode. */
export type FsOpenMode = t.TypeOf<typeof FsOpenMode>;

/** `fs/open` params: `handleId` is ours to choose. Handles belong to the connection: reopen after a reconnect. */
export const FsOpenParams = struct('FsOpenParams', { handleId: t.string, path: t.string }, { mode: FsOpenMode, sandbox });
/** `fs/open` params. */
export type FsOpenParams = t.TypeOf<typeof FsOpenParams>;

/** `fs/open` result. */
export const FsOpenResponse = struct('FsOpenResponse', { handleId: t.string });
/** `fs/open` result. */
export type FsOpenResponse = t.TypeOf<typeof FsOpenResponse>;

/** `fs/readBlock` params: `len` between 1 and 1 048 576. */
export const FsReadBlockParams = struct('FsReadBlockParams', { handleId: t.string, offset: NonNegativeInteger, len: NonNegativeInteger });
/** `fs/readBlock` params. */
export type FsReadBlockParams = t.TypeOf<typeof FsReadBlockParams>;

/** `fs/readBlock` result; past the end `chunk` is empty and `eof` true. */
export const FsReadBlockResponse = struct('FsReadBlockResponse', { chunk: Base64Bytes, eof: t.boolean });
/** `fs/readBlock` result. */
export type FsReadBlockResponse = t.TypeOf<typeof FsReadBlockResponse>;

/** `fs/writeBlock` params: an explicit-offset write on a `replace` handle (≤ 1 MiB per block). Result {@link FsEmptyResponse}. */
export const FsWriteBlockParams = struct('FsWriteBlockParams', { handleId: t.string, offset: NonNegativeInteger, chunk: Base64Bytes });
/** `fs/writeBlock` params. */
export type FsWriteBlockParams = t.TypeOf<typeof FsWriteBlockParams>;

/** `fs/close` params (unknown or closed handles answer `{}` too). Result {@link FsEmptyResponse}. */
export const FsCloseParams = struct('FsCloseParams', { handleId: t.string });
/** `fs/close` params. */
export type FsCloseParams = t.TypeOf<typeof FsCloseParams>;

/** `fs/watchMissing` params: watch `missing` URIs until one appears; an empty list unwatches. */
export const FsWatchMissingParams = struct('FsWatchMissingParams', { watchId: NonNegativeInteger, missing: t.array(t.string) });
/** `fs/watchMissing` params. */
export type FsWatchMissingParams = t.TypeOf<typeof FsWatchMissingParams>;

/** `fs/watchMissing` result: `watching` is `false` for an empty list. */
export const FsWatchMissingResponse = struct('FsWatchMissingResponse', { watching: t.boolean });
/** `fs/watchMissing` result. */
export type FsWatchMissingResponse = t.TypeOf<typeof FsWatchMissingResponse>;

/** `fs/missingChanged` params: a path watched by `watchId` appeared. */
export const FsMissingChangedNotification = struct('FsMissingChangedNotification', { watchId: NonNegativeInteger });
/** `fs/missingChanged` params. */
export type FsMissingChangedNotification = t.TypeOf<typeof FsMissingChangedNotification>;
