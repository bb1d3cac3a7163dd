import { firstValueFrom, lastValueFrom } from 'rxjs';
import { map } from 'rxjs/operators';
import type { CallOptions } from '../rpc/rpc-connection';
import type { FsOpenMode } from '../wire/fs';
import { WRITE_BLOCK_MAX_BYTES } from '../wire/limits';
import { writeBlocks } from './block-io';
import type { BytesInput } from '../wire/bytes';
import { toBuffer, toBytes } from '../wire/bytes';
import type { HandleBinding } from './handle-binding';

/** One block read through a {@link RemoteFileHandle}. */
export interface ReadBlockResult {
  /** The bytes read (empty past the end of the file). */
  readonly chunk: Buffer;
  /** Whether the end of the file was reached. */
  readonly eof: boolean;
}

/**
 * A file opened on the executor with `fs/open` (from {@link RemoteFileSystem.open}), read or written at
 * explicit offsets. Handles belong to a connection (docs/protocol.md#file-handles); across a reconnect:
 *
 * - a `read` handle is opened again on the new connection, with the same `handleId`, before its next
 *   call; a `readBlock` cut by the drop is sent again there (reading an explicit offset is repeatable);
 * - a `replace` handle is not (reopening would truncate the file): every later `readBlock` /
 *   `writeBlock` rejects with {@link HandleLostError}; a `writeBlock` cut by the drop rejects with
 *   TransportClosedError (it may or may not have been written).
 *
 * The caller owns the handle and calls `close()` when done; after it every call rejects with ClosedError.
 */
export class RemoteFileHandle {
  /** @internal Built by RemoteFileSystem.open. */
  constructor(
    private readonly binding: HandleBinding,
    private readonly blockBytes: number = WRITE_BLOCK_MAX_BYTES,
  ) {}

  /** The client-chosen id sent as `handleId`. */
  get handleId(): string {
    return this.binding.params.handleId;
  }

  /** The `file://` URI that was opened. */
  get path(): string {
    return this.binding.params.path;
  }

  /** `read`, or `replace` (created or truncated for writing). */
  get mode(): FsOpenMode {
    return this.binding.params.mode;
  }

  /**
   * Reads up to `len` bytes (1 … 1 048 576) at `offset` with `fs/readBlock`. Resolves with the bytes and
   * `eof`; rejects with NotFoundError (unknown handle), RpcError (-32603 `Bad file descriptor` on a
   * `replace` handle), HandleLostError, ClosedError, or the call's transport/timeout errors.
   */
  readBlock(offset: number, len: number, options: CallOptions = {}): Promise<ReadBlockResult> {
    return firstValueFrom(this.binding.read(offset, len, options).pipe(map((r) => ({ chunk: toBuffer(r.chunk), eof: r.eof }))));
  }

  /**
   * Writes `data` (a string as UTF-8) at `offset` with `fs/writeBlock`; data over 1 MiB goes as several
   * consecutive blocks. Resolves when all were written; rejects with RpcError (-32603 on a `read`
   * handle), HandleLostError, ClosedError, or the call's transport/timeout errors.
   */
  writeBlock(offset: number, data: BytesInput, options: CallOptions = {}): Promise<void> {
    return lastValueFrom(writeBlocks(this.binding, offset, toBytes(data), this.blockBytes, options), { defaultValue: undefined });
  }

  /**
   * Closes the handle with `fs/close` on its connection. Resolves without sending anything when that
   * connection is gone (the executor released the handle with it) or the handle was already closed.
   * Rejects only with an RpcError or timeout of `fs/close` itself.
   */
  close(options: CallOptions = {}): Promise<void> {
    return firstValueFrom(this.binding.release(options));
  }
}
