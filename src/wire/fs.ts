import * as t from 'io-ts';
import { Base64Bytes } from './base64';
import { Integer, NonNegativeInteger } from './integer';
import { SandboxContext } from './sandbox';
import { struct } from './struct';

// docs/protocol.md#filesystem-methods. Every path is a `file://` URI. Every method but the handle ones and
// `fs/watchMissing` accepts an optional `sandbox` (null or absent: direct access). The fields of the
// params `RemoteFileSystem` takes as options, and of the results it returns, are documented for the API
// docs; codecs whose types the main entry exports are `@hidden` (see the note in `./environment`).
const sandbox = t.union([SandboxContext, t.null]);

/** The `{}` result of `fs/writeFile`, `fs/createDirectory`, `fs/remove`, `fs/copy`, `fs/writeBlock`, `fs/close`. */
export const FsEmptyResponse = struct('FsEmptyResponse', {});
/** The `{}` result. */
export type FsEmptyResponse = t.TypeOf<typeof FsEmptyResponse>;

/** `fs/readFile` params (missing → -32004; a directory → -32600). */
export const FsReadFileParams = struct('FsReadFileParams', { path: t.string }, {
  /** Follow a symbolic link at `path` (`false`: a link fails the read). @default true */
  followSymlinks: t.boolean,
  /** The sandbox to access the path through. @default none: direct access */
  sandbox,
});
/** `fs/readFile` params. */
export type FsReadFileParams = t.TypeOf<typeof FsReadFileParams>;

/** `fs/readFile` result: the whole file as bytes (the executor caps files at 512 MiB). */
export const FsReadFileResponse = struct('FsReadFileResponse', { dataBase64: Base64Bytes });
/** `fs/readFile` result. */
export type FsReadFileResponse = t.TypeOf<typeof FsReadFileResponse>;

/** `fs/writeFile` params: creates or truncates `path` (its parent must exist). Result {@link FsEmptyResponse}. */
export const FsWriteFileParams = struct('FsWriteFileParams', { path: t.string, dataBase64: Base64Bytes }, {
  /** Whether a symbolic link at `path` is followed. @default the executor's */
  followSymlinks: t.boolean,
  /** The sandbox to access the path through. @default none: direct access */
  sandbox,
});
/** `fs/writeFile` params. */
export type FsWriteFileParams = t.TypeOf<typeof FsWriteFileParams>;

/** `fs/createDirectory` params (`recursive` omitted behaves as `true`). Result {@link FsEmptyResponse}. */
export const FsCreateDirectoryParams = struct(
  'FsCreateDirectoryParams',
  { path: t.string },
  {
    /** Create missing parents too; `false` fails on an existing directory. @default true */
    recursive: t.boolean,
    /** Whether a symbolic link at `path` is followed. @default the executor's */
    followSymlinks: t.boolean,
    /** The sandbox to access the path through. @default none: direct access */
    sandbox,
  },
);
/** `fs/createDirectory` params. */
export type FsCreateDirectoryParams = t.TypeOf<typeof FsCreateDirectoryParams>;

/** `fs/getMetadata` params (by default follows a symlink for type and size). */
export const FsGetMetadataParams = struct('FsGetMetadataParams', { path: t.string }, {
  /** Report a symbolic link's target's type and size (`isSymlink` still tells); `false` refuses links. @default true */
  followSymlinks: t.boolean,
  /** The sandbox to access the path through. @default none: direct access */
  sandbox,
});
/** `fs/getMetadata` params. */
export type FsGetMetadataParams = t.TypeOf<typeof FsGetMetadataParams>;

/** `fs/getMetadata` result; `createdAtMs` is 0 where the platform does not record it. @hidden */
export const FsGetMetadataResponse = struct('FsGetMetadataResponse', {
  /** Whether it is a directory (a followed link: its target). */
  isDirectory: t.boolean,
  /** Whether it is a regular file (a followed link: its target). */
  isFile: t.boolean,
  /** Whether the path itself is a symbolic link. */
  isSymlink: t.boolean,
  /** Size in bytes. */
  size: NonNegativeInteger,
  /** Creation time, ms since the epoch; 0 where the platform does not record it. */
  createdAtMs: Integer,
  /** Last modification time, ms since the epoch. */
  modifiedAtMs: Integer,
});
/**
 * What `RemoteFileSystem.getMetadata` resolves with (`fs/getMetadata`).
 * @interface
 */
export type FsGetMetadataResponse = t.TypeOf<typeof FsGetMetadataResponse>;

/** `fs/canonicalize` params. */
export const FsCanonicalizeParams = struct('FsCanonicalizeParams', { path: t.string }, {
  /** The sandbox to access the path through. @default none: direct access */
  sandbox,
});
/** `fs/canonicalize` params. */
export type FsCanonicalizeParams = t.TypeOf<typeof FsCanonicalizeParams>;

/** `fs/canonicalize` result: the canonical `file://` URI. */
export const FsCanonicalizeResponse = struct('FsCanonicalizeResponse', { path: t.string });
/** `fs/canonicalize` result. */
export type FsCanonicalizeResponse = t.TypeOf<typeof FsCanonicalizeResponse>;

/** `fs/readDirectory` params. */
export const FsReadDirectoryParams = struct('FsReadDirectoryParams', { path: t.string }, {
  /** The sandbox to access the path through. @default none: direct access */
  sandbox,
});
/** `fs/readDirectory` params. */
export type FsReadDirectoryParams = t.TypeOf<typeof FsReadDirectoryParams>;

/** One `fs/readDirectory` entry (a symlink reports its target's type). @hidden */
export const FsDirectoryEntry = struct('FsDirectoryEntry', {
  /** The entry's name (not a path). */
  fileName: t.string,
  /** Whether it is a directory (a symbolic link: its target). */
  isDirectory: t.boolean,
  /** Whether it is a regular file (a symbolic link: its target). */
  isFile: t.boolean,
});
/**
 * One entry of `RemoteFileSystem.readDirectory` (`fs/readDirectory`); a symbolic link reports its
 * target's type.
 * @interface
 */
export type FsDirectoryEntry = t.TypeOf<typeof FsDirectoryEntry>;

/** `fs/readDirectory` result (unsorted). */
export const FsReadDirectoryResponse = struct('FsReadDirectoryResponse', { entries: t.array(FsDirectoryEntry) });
/** `fs/readDirectory` result. */
export type FsReadDirectoryResponse = t.TypeOf<typeof FsReadDirectoryResponse>;

/** `fs/walk` limits, all required. @hidden */
export const FsWalkOptions = struct('FsWalkOptions', {
  /** How deep to descend: 0 lists the direct children only. */
  maxDepth: NonNegativeInteger,
  /** At most this many directories are read (at least 1). */
  maxDirectories: NonNegativeInteger,
  /** At most this many entries are returned (at least 1). */
  maxEntries: NonNegativeInteger,
  /** Descend into symbolic links to directories. */
  followDirectorySymlinks: t.boolean,
  /** Skip directories whose name starts with a dot. */
  pruneHiddenDirectories: t.boolean,
});
/**
 * The limits of `RemoteFileSystem.walk` (`fs/walk`), all required: `maxDirectories` or `maxEntries` 0 is
 * refused (-32600); a limit reached sets `truncated` in the result.
 * @interface
 */
export type FsWalkOptions = t.TypeOf<typeof FsWalkOptions>;

/** `fs/walk` params. */
export const FsWalkParams = struct(
  'FsWalkParams',
  {
    path: t.string,
    /** The walk's limits. */
    options: FsWalkOptions,
  },
  {
    /** The sandbox to access the path through. @default none: direct access */
    sandbox,
  },
);
/** `fs/walk` params. */
export type FsWalkParams = t.TypeOf<typeof FsWalkParams>;

/** One `fs/walk` entry: a `file://` URI and its `kind` (`file`, `directory`, ...). @hidden */
export const FsWalkEntry = struct('FsWalkEntry', {
  /** The entry, as a `file://` URI. */
  path: t.string,
  /** What it is: `file`, `directory`, ... */
  kind: t.string,
});
/**
 * One entry found by `RemoteFileSystem.walk`.
 * @interface
 */
export type FsWalkEntry = t.TypeOf<typeof FsWalkEntry>;

/** `fs/walk` result; `truncated` when a limit was hit; `errors` are passed through loosely. @hidden */
export const FsWalkResponse = struct('FsWalkResponse', {
  /** What was found (a walked file yields none). */
  entries: t.array(FsWalkEntry),
  /** What could not be read, as the executor reports it (passed through unchecked). */
  errors: t.array(t.unknown),
  /** Whether a limit was hit: more entries exist. */
  truncated: t.boolean,
});
/**
 * What `RemoteFileSystem.walk` resolves with (`fs/walk`).
 * @interface
 */
export type FsWalkResponse = t.TypeOf<typeof FsWalkResponse>;

/** `fs/remove` params (omitted flags behave as recursive + force). Result {@link FsEmptyResponse}. */
export const FsRemoveParams = struct(
  'FsRemoveParams',
  { path: t.string },
  {
    /** Remove a directory with its contents. @default true */
    recursive: t.boolean,
    /** Succeed when the path does not exist. @default true */
    force: t.boolean,
    /** Whether a symbolic link at `path` is followed. @default the executor's */
    followSymlinks: t.boolean,
    /** The sandbox to access the path through. @default none: direct access */
    sandbox,
  },
);
/** `fs/remove` params. */
export type FsRemoveParams = t.TypeOf<typeof FsRemoveParams>;

/** `fs/copy` params (`recursive` is required; a directory needs `true`). Result {@link FsEmptyResponse}. */
export const FsCopyParams = struct(
  'FsCopyParams',
  {
    sourcePath: t.string,
    destinationPath: t.string,
    /** Copy a directory with its contents (a directory needs `true`; into itself is refused). */
    recursive: t.boolean,
  },
  {
    /** The sandbox to access the path through. @default none: direct access */
    sandbox,
  },
);
/** `fs/copy` params. */
export type FsCopyParams = t.TypeOf<typeof FsCopyParams>;

/** `fs/open` mode: `read` (the default) or `replace` (create or truncate, for `fs/writeBlock`). @hidden */
export const FsOpenMode = t.keyof({ read: null, replace: null }, 'FsOpenMode');
/**
 * How `RemoteFileSystem.open` opens a file: `read`, or `replace` (create or truncate, then write blocks;
 * needs the executor's `capabilities.fileWriteStreaming`).
 * @useDeclaredType
 */
export type FsOpenMode = t.TypeOf<typeof FsOpenMode>;

/** `fs/open` params: `handleId` is ours to choose. Handles belong to the connection: reopen after a reconnect. */
export const FsOpenParams = struct(
  'FsOpenParams',
  { handleId: t.string, path: t.string },
  {
    mode: FsOpenMode,
    /** The sandbox to access the path through. @default none: direct access */
    sandbox,
  },
);
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
