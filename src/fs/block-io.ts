import type { Observable } from 'rxjs';
import { defer, EMPTY, range } from 'rxjs';
import { concatMap, expand, filter, finalize, ignoreElements, map } from 'rxjs/operators';
import type { CallOptions } from '../rpc/rpc-connection';
import { toBuffer } from '../wire/bytes';
import type { HandleBinding } from './handle-binding';

interface Block {
  readonly chunk: Uint8Array;
  readonly nextOffset: number;
  readonly last: boolean;
}

/**
 * Reads a `read` handle from offset 0 to the end, `blockSize` bytes per `fs/readBlock`, one block at a
 * time (the next read is sent after the previous block was emitted). Emits each non-empty block as a
 * Buffer; completes after the block that reports `eof` (or an empty block). Errors with the handle's
 * errors (NotFoundError when the file is gone, RpcError, TransportClosedError only when the client
 * failed: a read cut by a drop is sent again after the reconnect). Releases the handle (`fs/close`) on
 * completion, error and unsubscribe: this Observable owns the binding.
 */
export function readBlocks(binding: HandleBinding, blockSize: number): Observable<Buffer> {
  const readAt = (offset: number): Observable<Block> =>
    binding
      .read(offset, blockSize)
      .pipe(map((r) => ({ chunk: r.chunk, nextOffset: offset + r.chunk.byteLength, last: r.eof || r.chunk.byteLength === 0 })));
  return defer(() => readAt(0)).pipe(
    expand((block) => (block.last ? EMPTY : readAt(block.nextOffset))),
    filter((block) => block.chunk.byteLength > 0),
    map((block) => toBuffer(block.chunk)),
    finalize(() => binding.release().subscribe({ error: () => undefined })),
  );
}

/**
 * Writes `bytes` at `offset` through a `replace` handle as consecutive `fs/writeBlock`s of at most
 * `blockBytes` each, one after the other. Completes when the last block was written (nothing is sent for
 * empty `bytes`); errors with the first failing block's error (HandleLostError after a reconnect,
 * TransportClosedError when the socket died under a block: that block may or may not have been written).
 * Does not release the handle: the caller owns it.
 */
export function writeBlocks(binding: HandleBinding, offset: number, bytes: Uint8Array, blockBytes: number, options: CallOptions = {}): Observable<never> {
  const count = Math.ceil(bytes.byteLength / blockBytes);
  return range(0, count).pipe(
    concatMap((i) => binding.write(offset + i * blockBytes, bytes.subarray(i * blockBytes, (i + 1) * blockBytes), options)),
    ignoreElements(),
  );
}
