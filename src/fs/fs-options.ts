import type { Observable } from 'rxjs';
import type { CallOptions } from '../rpc/rpc-connection';
import type {
  FsCanonicalizeParams,
  FsCopyParams,
  FsCreateDirectoryParams,
  FsGetMetadataParams,
  FsOpenParams,
  FsReadDirectoryParams,
  FsReadFileParams,
  FsRemoveParams,
  FsWalkParams,
  FsWriteFileParams,
} from '../wire/fs';

/** Options of {@link RemoteFileSystem}. */
export interface RemoteFileSystemOptions {
  /**
   * Makes the `handleId` of each `fs/open`; ids must be unique on a connection.
   * @default `fs-handle-1`, `fs-handle-2`, … (one counter per Node process)
   */
  readonly newHandleId?: () => string;
  /**
   * Makes the `watchId` of each `watchMissing` (an unsigned integer, unique on a connection).
   * @default 1, 2, … (one counter per Node process)
   */
  readonly newWatchId?: () => number;
  /**
   * `writeFile` sends data larger than this through `fs/open` + `fs/writeBlock` + `fs/close` instead of
   * one `fs/writeFile` frame.
   * @default 4194304 (SAFE_CHUNK_BYTES: about 5.6 MiB of frame, well below the executor's 16 MiB)
   */
  readonly writeFileMaxBytes?: number;
  /** Bytes per `fs/writeBlock`, from 1 to WRITE_BLOCK_MAX_BYTES. @default 1048576 */
  readonly writeBlockBytes?: number;
}

/** `readFile` options: the wire's optional fields plus the per-call timeout and abort signal. @interface */
export type ReadFileOptions = Omit<FsReadFileParams, 'path'> & CallOptions;
/** `writeFile` options (`followSymlinks` is not sent on the block path: `fs/open` has no such field). @interface */
export type WriteFileOptions = Omit<FsWriteFileParams, 'path' | 'dataBase64'> & CallOptions;
/** `createDirectory` options (`recursive` omitted behaves as `true` on the executor). @interface */
export type CreateDirectoryOptions = Omit<FsCreateDirectoryParams, 'path'> & CallOptions;
/** `getMetadata` options. @interface */
export type GetMetadataOptions = Omit<FsGetMetadataParams, 'path'> & CallOptions;
/** `canonicalize` options. @interface */
export type CanonicalizeOptions = Omit<FsCanonicalizeParams, 'path'> & CallOptions;
/** `readDirectory` options. @interface */
export type ReadDirectoryOptions = Omit<FsReadDirectoryParams, 'path'> & CallOptions;
/** `walk` options: the limits are all required on the wire. @interface */
export type WalkOptions = Omit<FsWalkParams, 'path'> & CallOptions;
/** `remove` options (omitted flags behave as recursive + force on the executor). @interface */
export type RemoveOptions = Omit<FsRemoveParams, 'path'> & CallOptions;
/** `copy` options; `recursive` defaults to `false` (a directory needs `true`). @interface */
export type CopyOptions = Partial<Omit<FsCopyParams, 'sourcePath' | 'destinationPath'>> & CallOptions;
/** `open` options (`sandbox`). The mode is `open`'s second argument. @interface */
export type OpenOptions = Omit<FsOpenParams, 'handleId' | 'path' | 'mode'> & CallOptions;

/**
 * `readStream` / `readIterable` options: the range, the block size, how many `fs/readBlock`s go ahead,
 * the sandbox of the `fs/open`; `timeoutMs` and `signal` govern each read (an abort ends the stream with
 * the signal's reason).
 */
export interface ReadStreamOptions extends CallOptions {
  /** Bytes per `fs/readBlock`, from 1 to READ_BLOCK_MAX_BYTES. @default 1048576 */
  readonly blockSize?: number;
  /** The offset of the first byte read. @default 0 */
  readonly start?: number;
  /** The offset after the last byte read (exclusive); past the end of the file reads to the end. @default the end of the file */
  readonly end?: number;
  /**
   * `fs/readBlock`s sent ahead, from 1 to 16 (the executor answers a connection's requests one at a time,
   * so this hides the round trips). The first read goes alone; the window opens once it answered.
   * @default 4
   */
  readonly inFlight?: number;
  /** The sandbox to open the file through (as `fs/open`'s). @default none: direct access */
  readonly sandbox?: FsOpenParams['sandbox'];
  /**
   * Where each `fs/readBlock` waits for its turn: called once per read with the cold request (the first
   * also carries the handle's `fs/open`, and a read sent again after a reconnect its re-open), it returns
   * what the pipeline subscribes to instead. It must subscribe to `request` at most once, pass its value
   * and error through unchanged, and unsubscribe from it when unsubscribed (the pipeline drops reads past
   * a short block or the consumer's stop that way). A host uses it to put every read of a download through
   * a per-environment fair queue. @default none: each read is sent at once
   */
  readonly schedule?: ReadScheduler;
}

/**
 * The hook of {@link ReadStreamOptions.schedule}: delays the subscription to one `fs/readBlock` request
 * (for example until a queue gives it a slot) and gives back its outcome unchanged.
 */
export type ReadScheduler = <T>(request: Observable<T>) => Observable<T>;

/**
 * `writeStream` options. `timeoutMs` governs each call; an aborted `signal` rejects the write with its
 * reason (the file is left partly written).
 */
export interface WriteStreamOptions extends CallOptions {
  /** Bytes per `fs/writeBlock`, from 1 to WRITE_BLOCK_MAX_BYTES. @default the file system's `writeBlockBytes` (1048576) */
  readonly blockSize?: number;
  /** `fs/writeBlock`s outstanding at most, from 1 to 16; the source is pulled only when one is free. @default 2 */
  readonly inFlight?: number;
  /**
   * For an Observable source only (it cannot be paced): the chunks held until the writer takes them; one
   * more overflows and the write rejects with ConsumerOverflowError. @default 16
   */
  readonly maxBufferedChunks?: number;
  /** Called with the bytes acknowledged so far after each `fs/writeBlock` answered. */
  readonly onProgress?: (bytesWritten: number) => void;
  /** The sandbox to open the file through (as `fs/open`'s). @default none: direct access */
  readonly sandbox?: FsOpenParams['sandbox'];
}

/** Splits caller options into the wire's fields and the per-call {@link CallOptions}. */
export function splitCallOptions<T extends CallOptions>(options: T): readonly [Omit<T, keyof CallOptions>, CallOptions] {
  const { timeoutMs, signal, ...wire } = options;
  return [wire, { ...(timeoutMs === undefined ? {} : { timeoutMs }), ...(signal === undefined ? {} : { signal }) }];
}

let handleCounter = 0;
let watchCounter = 0;

/** The default handle id maker: unique in this Node process, so unique on every connection. */
export const defaultHandleId = (): string => {
  handleCounter += 1;
  return `fs-handle-${handleCounter}`;
};

/** The default watch id maker: unique in this Node process. */
export const defaultWatchId = (): number => {
  watchCounter += 1;
  return watchCounter;
};
