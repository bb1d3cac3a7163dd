import type { Observable } from 'rxjs';
import { range } from 'rxjs';
import { concatMap, ignoreElements } from 'rxjs/operators';
import type { CallOptions } from '../rpc/rpc-connection';
import type { HandleBinding } from './handle-binding';

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
