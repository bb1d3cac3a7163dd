import type { Observable } from 'rxjs';
import { concat, defer, EMPTY, firstValueFrom, lastValueFrom, throwError } from 'rxjs';
import { catchError, ignoreElements, map } from 'rxjs/operators';
import { toFileUri } from '../wire/file-uri';
import type { ExecSession } from '../session/exec-session';
import type { FsDirectoryEntry, FsGetMetadataResponse, FsOpenMode, FsWalkResponse } from '../wire/fs';
import { READ_BLOCK_MAX_BYTES, SAFE_CHUNK_BYTES, WRITE_BLOCK_MAX_BYTES } from '../wire/limits';
import { writeBlocks } from './block-io';
import type { ReadPlan } from './read-pipeline';
import { readPipelined, readPulled } from './read-pipeline';
import type { WriteSource } from './write-stream';
import { writeFrom } from './write-stream';
import type { BytesInput } from '../wire/bytes';
import { toBuffer, toBytes } from '../wire/bytes';
import type {
  CanonicalizeOptions,
  CopyOptions,
  CreateDirectoryOptions,
  GetMetadataOptions,
  OpenOptions,
  ReadDirectoryOptions,
  ReadFileOptions,
  ReadStreamOptions,
  RemoteFileSystemOptions,
  RemoveOptions,
  WalkOptions,
  WriteFileOptions,
  WriteStreamOptions,
} from './fs-options';
import { defaultHandleId, defaultWatchId, splitCallOptions } from './fs-options';
import { HandleBinding } from './handle-binding';
import { RemoteFileHandle } from './remote-file-handle';
import { watchMissingOn } from './watch-missing';

/**
 * The executor's filesystem (docs/protocol.md#filesystem-methods), from {@link Environment.getFilesystem}.
 * Paths are native absolute paths or `file://` URIs; bytes go in as `Uint8Array` or string (UTF-8) and come out as
 * `Buffer`.
 *
 * Every Promise method is one call that waits while the client recovers. A call whose socket dies before
 * its reply rejects with TransportClosedError and is not sent again (fs calls are not replayable,
 * docs/protocol.md#sending-again-after-a-disconnect). Rejections are the rpc layer's typed errors:
 * NotFoundError (-32004: a missing path or an unknown handle), RpcError (other JSON-RPC errors),
 * RequestTimeoutError, the `reason` of an aborted `signal`, FrameTooLargeError, DecodeError, and the client's failure once it
 * failed.
 */
export class RemoteFileSystem {
  private readonly newHandleId: () => string;
  private readonly newWatchId: () => number;
  private readonly writeFileMaxBytes: number;
  private readonly writeBlockBytes: number;

  /** @internal Built by its Environment (the session is internal). */
  constructor(
    private readonly client: ExecSession,
    options: RemoteFileSystemOptions = {},
  ) {
    this.newHandleId = options.newHandleId ?? defaultHandleId;
    this.newWatchId = options.newWatchId ?? defaultWatchId;
    this.writeFileMaxBytes = options.writeFileMaxBytes ?? SAFE_CHUNK_BYTES;
    this.writeBlockBytes = options.writeBlockBytes ?? WRITE_BLOCK_MAX_BYTES;
    if (!isBlockSize(this.writeBlockBytes, WRITE_BLOCK_MAX_BYTES)) throw new RangeError(`writeBlockBytes must be an integer from 1 to ${WRITE_BLOCK_MAX_BYTES}`);
  }

  /** `fs/readFile`: the whole file (the executor caps it at 512 MiB; use {@link readStream} for big files). */
  readFile(path: string, options: ReadFileOptions = {}): Promise<Buffer> {
    const [wire, call] = splitCallOptions(options);
    return firstValueFrom(this.client.call('fs/readFile', { ...wire, path: toFileUri(path) }, call).pipe(map((r) => toBuffer(r.dataBase64))));
  }

  /**
   * Creates or truncates `path` with `data` (its parent must exist, else NotFoundError). Data up to
   * `writeFileMaxBytes` (4 MiB) goes in one `fs/writeFile`; larger data goes through `fs/open` (mode
   * `replace`), `fs/writeBlock`s of at most 1 MiB in order, and `fs/close`. If a block fails the handle is
   * closed (best effort) and the file is left partly written; calling again rewrites it from the start.
   */
  writeFile(path: string, data: BytesInput, options: WriteFileOptions = {}): Promise<void> {
    const bytes = toBytes(data);
    const [wire, call] = splitCallOptions(options);
    if (bytes.byteLength <= this.writeFileMaxBytes) {
      return lastValueFrom(this.client.call('fs/writeFile', { ...wire, path: toFileUri(path), dataBase64: bytes }, call).pipe(ignoreElements()), { defaultValue: undefined });
    }
    const binding = this.bind(path, 'replace', wire.sandbox);
    const written$ = concat(binding.open(call), writeBlocks(binding, 0, bytes, this.writeBlockBytes, call), binding.release(call)).pipe(
      ignoreElements(),
      catchError((error: unknown) => {
        binding.release().subscribe({ error: () => undefined });
        return throwError(() => error);
      }),
    );
    return lastValueFrom(written$, { defaultValue: undefined });
  }

  /** `fs/createDirectory` (`recursive` omitted behaves as `true`). */
  createDirectory(path: string, options: CreateDirectoryOptions = {}): Promise<void> {
    const [wire, call] = splitCallOptions(options);
    return this.done(this.client.call('fs/createDirectory', { ...wire, path: toFileUri(path) }, call));
  }

  /** `fs/getMetadata`: type, size and times (by default follows a symlink but reports `isSymlink`). */
  getMetadata(path: string, options: GetMetadataOptions = {}): Promise<FsGetMetadataResponse> {
    const [wire, call] = splitCallOptions(options);
    return firstValueFrom(this.client.call('fs/getMetadata', { ...wire, path: toFileUri(path) }, call));
  }

  /** `fs/canonicalize`: resolves with the canonical `file://` URI. */
  canonicalize(path: string, options: CanonicalizeOptions = {}): Promise<string> {
    const [wire, call] = splitCallOptions(options);
    return firstValueFrom(this.client.call('fs/canonicalize', { ...wire, path: toFileUri(path) }, call).pipe(map((r) => r.path)));
  }

  /** `fs/readDirectory`: the entries, unsorted (a symlink reports its target's type). */
  readDirectory(path: string, options: ReadDirectoryOptions = {}): Promise<FsDirectoryEntry[]> {
    const [wire, call] = splitCallOptions(options);
    return firstValueFrom(this.client.call('fs/readDirectory', { ...wire, path: toFileUri(path) }, call).pipe(map((r) => r.entries)));
  }

  /** `fs/walk` with the given limits (all required on the wire); `truncated` when a limit was hit. */
  walk(path: string, options: WalkOptions): Promise<FsWalkResponse> {
    const [wire, call] = splitCallOptions(options);
    return firstValueFrom(this.client.call('fs/walk', { ...wire, path: toFileUri(path) }, call));
  }

  /** `fs/remove` (omitted flags behave as recursive + force: a missing path succeeds). */
  remove(path: string, options: RemoveOptions = {}): Promise<void> {
    const [wire, call] = splitCallOptions(options);
    return this.done(this.client.call('fs/remove', { ...wire, path: toFileUri(path) }, call));
  }

  /** `fs/copy`; `recursive` defaults to `false` (copying a directory needs `true`, else RpcError -32600). */
  copy(sourcePath: string, destinationPath: string, options: CopyOptions = {}): Promise<void> {
    const [wire, call] = splitCallOptions(options);
    const params = { ...wire, sourcePath: toFileUri(sourcePath), destinationPath: toFileUri(destinationPath), recursive: wire.recursive ?? false };
    return this.done(this.client.call('fs/copy', params, call));
  }

  /**
   * `fs/open` with a fresh client-chosen `handleId`. Resolves with the handle once the executor opened it
   * (`replace` creates or truncates); rejects with NotFoundError, RpcError or the call's errors. The
   * caller owns the handle and closes it; see {@link RemoteFileHandle} for what a reconnect does to it.
   */
  async open(path: string, mode: FsOpenMode, options: OpenOptions = {}): Promise<RemoteFileHandle> {
    const [wire, call] = splitCallOptions(options);
    const binding = this.bind(path, mode, wire.sandbox);
    await lastValueFrom(binding.open(call), { defaultValue: undefined });
    return new RemoteFileHandle(binding, this.writeBlockBytes);
  }

  /**
   * Streams a file of any size, or a range of it: `fs/open` (read), then `fs/readBlock`s of `blockSize`
   * bytes from `start`, up to `inFlight` in flight (the first alone), until `end` or the end of the file.
   * Cold: each subscription opens its own handle. Emits each non-empty block, strictly in file order;
   * completes at `end` or the end of the file (an empty range completes at once, with no call); errors with
   * NotFoundError (missing file), RpcError, the signal's reason, or the client's failure (a drop in the
   * middle reopens the handle on the new connection and reads the cut blocks again). The subscriber owns
   * the handle: it is closed on completion, on error and on unsubscribe. An Observable cannot slow the
   * reads down: for a slow consumer use {@link readIterable}.
   *
   * The positional form `readStream(path, blockSize)` reads one block at a time from offset 0, as it
   * always did (`{ blockSize, inFlight: 1 }`).
   *
   * @throws RangeError (when called) for a block size, range or `inFlight` out of bounds.
   */
  readStream(path: string, options?: number | ReadStreamOptions): Observable<Buffer> {
    const plan = readPlan(typeof options === 'number' ? { blockSize: options, inFlight: 1 } : (options ?? {}));
    const sandbox = typeof options === 'number' ? undefined : options?.sandbox;
    return defer(() => readPipelined(this.bind(path, 'read', sandbox), plan));
  }

  /**
   * The same blocks as {@link readStream}, pulled: at most `inFlight` blocks are requested or held ahead of
   * what the consumer has taken, so a consumer that waits (an HTTP response honouring `drain`) slows the
   * reads down. Opens its handle at the first `next()`. Yields each non-empty block in order; ends at
   * `end` or the end of the file; rejects with the errors of {@link readStream}, after the blocks before
   * the failure. The consumer owns the handle: it is closed at the end, on error, and by `return()` (a
   * `break` out of `for await`), which also ends a pending `next()` as done.
   *
   * @throws RangeError (when called) for a block size, range or `inFlight` out of bounds.
   */
  readIterable(path: string, options: ReadStreamOptions = {}): AsyncIterableIterator<Buffer> {
    return readPulled(this.bind(path, 'read', options.sandbox), readPlan(options));
  }

  /**
   * Writes `path` from a stream of bytes with bounded memory: `fs/open` (mode `replace`: creates or
   * truncates), `fs/writeBlock`s of at most `blockSize` at consecutive offsets with at most `inFlight`
   * outstanding, then `fs/close`. An AsyncIterable (a Node Readable, a web ReadableStream) is pulled only
   * when a block slot is free, so the memory held is about `inFlight + 1` blocks plus one source chunk;
   * the source must not reuse a chunk it yielded. An Observable cannot be paced: it is subscribed at
   * once, up to `maxBufferedChunks` of its chunks wait, one more rejects with ConsumerOverflowError.
   *
   * Resolves with the bytes written once every block was acknowledged and the handle closed. Rejects,
   * after releasing the handle and ending the source (`return()`), with: NotFoundError (missing parent),
   * RpcError, HandleLostError when the connection dropped under it (a write handle is never reopened,
   * since `replace` truncates: start again), the signal's reason when aborted, the source's own error, or
   * the call's timeout. The file is then left partly written.
   *
   * @throws RangeError (when called) for a block size, `inFlight` or `maxBufferedChunks` out of bounds.
   */
  writeStream(path: string, source: WriteSource, options: WriteStreamOptions = {}): Promise<number> {
    const { blockSize = this.writeBlockBytes, inFlight = 2, maxBufferedChunks = 16, onProgress, sandbox, ...rest } = options;
    if (!isBlockSize(blockSize, WRITE_BLOCK_MAX_BYTES)) throw new RangeError(`blockSize must be an integer from 1 to ${WRITE_BLOCK_MAX_BYTES}`);
    if (!isBlockSize(inFlight, MAX_IN_FLIGHT)) throw new RangeError(`inFlight must be an integer from 1 to ${MAX_IN_FLIGHT}`);
    if (!isBlockSize(maxBufferedChunks, Number.MAX_SAFE_INTEGER)) throw new RangeError('maxBufferedChunks must be a positive integer');
    const [, call] = splitCallOptions(rest);
    return writeFrom(this.bind(path, 'replace', sandbox), source, { blockSize, inFlight, maxBufferedChunks, onProgress, call });
  }

  /**
   * Watches paths that do not exist yet (`fs/watchMissing` with a fresh numeric `watchId`). Emits each
   * time `fs/missingChanged` arrives for that watch: check the paths again then. Cold: each subscription
   * is its own watch. Never completes on its own (an empty `paths` completes at once, since an empty list
   * means unwatch); errors with the registration's RpcError or the client's failure. Across a reconnect
   * it registers again on the new connection and emits once (a path may have appeared in between).
   * Unsubscribing unwatches (`fs/watchMissing` with an empty list).
   */
  watchMissing(paths: readonly string[]): Observable<void> {
    return defer(() => (paths.length === 0 ? EMPTY : watchMissingOn(this.client, this.newWatchId(), paths.map(toFileUri))));
  }

  private bind(path: string, mode: FsOpenMode, sandbox: OpenOptions['sandbox']): HandleBinding {
    const params = { handleId: this.newHandleId(), path: toFileUri(path), mode };
    return new HandleBinding(this.client, sandbox === undefined ? params : { ...params, sandbox });
  }

  private done(call$: Observable<unknown>): Promise<void> {
    return lastValueFrom(call$.pipe(ignoreElements()), { defaultValue: undefined });
  }
}

const isBlockSize = (n: number, max: number): boolean => Number.isInteger(n) && n >= 1 && n <= max;

/** The most `fs/readBlock`s or `fs/writeBlock`s one stream keeps in flight. */
const MAX_IN_FLIGHT = 16;

/** Checks `options` and fills in the defaults. */
function readPlan(options: ReadStreamOptions): ReadPlan {
  const { blockSize = READ_BLOCK_MAX_BYTES, start = 0, end, inFlight = 4, schedule, ...rest } = options;
  if (!isBlockSize(blockSize, READ_BLOCK_MAX_BYTES)) throw new RangeError(`blockSize must be an integer from 1 to ${READ_BLOCK_MAX_BYTES}`);
  if (!isBlockSize(inFlight, MAX_IN_FLIGHT)) throw new RangeError(`inFlight must be an integer from 1 to ${MAX_IN_FLIGHT}`);
  if (!Number.isSafeInteger(start) || start < 0) throw new RangeError('start must be a non-negative integer');
  if (end !== undefined && (!Number.isSafeInteger(end) || end < start)) throw new RangeError('end must be an integer not below start');
  const [, call] = splitCallOptions(rest);
  return { blockSize, start, end, inFlight, call, schedule };
}
