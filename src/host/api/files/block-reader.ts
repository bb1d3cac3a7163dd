/**
 * Reads a byte range of a file open for reading as blocks, pipelined: up to `window` `fs/readBlock`
 * requests ahead of the consumer, each in the request's lane of the fair queue, and no more (bounded memory:
 * `window` blocks of at most 1 MiB). The next reads are asked for only as the consumer pulls.
 *
 * The one place the file routes read a file. The library's pipelined `RemoteFileSystem.readIterable` /
 * `readStream({ start, end, inFlight })` (issue 41, branch wt/lib) does the same with a read handle that
 * re-opens across a reconnect; once it is merged this module becomes a call of it through the queue.
 */
import type { RemoteFileHandle, ReadBlockResult } from '../../../fs/remote-file-handle';
import { READ_BLOCK_MAX_BYTES } from '../../../wire/limits';
import { ApiProblem } from '../problem';
import type { FileCalls } from './file-calls';
import type { FilePath } from './file-path';

/** How a range is read. */
export interface BlockReadOptions {
  /** Bytes per `fs/readBlock`. @default 1048576 (the executor's maximum) */
  readonly blockBytes?: number;
  /** Reads in flight ahead of the consumer. @default 4 */
  readonly window?: number;
}

/**
 * The bytes `start` to `end` (exclusive) of `handle`, in order, as blocks. Throws ApiProblem 409
 * `FILE_CHANGED` when the file ends before `end` (it shrank while read), or the read's problem. A consumer
 * that stops early (return/throw) stops the reads; those in flight settle unheard.
 */
export async function* readRange(calls: FileCalls, path: FilePath, handle: RemoteFileHandle, start: number, end: number, options: BlockReadOptions = {}): AsyncGenerator<Buffer> {
  const blockBytes = options.blockBytes ?? READ_BLOCK_MAX_BYTES;
  const window = options.window ?? 4;
  const pending: { readonly at: number; readonly len: number; readonly read: Promise<ReadBlockResult> }[] = [];
  let next = start;
  const fill = (): void => {
    while (pending.length < window && next < end) {
      const len = Math.min(blockBytes, end - next);
      const read = calls.readBlock(path, handle, next, len);
      // Heard below when its turn comes; a read left behind by an early stop must not go unhandled.
      read.catch(() => undefined);
      pending.push({ at: next, len, read });
      next += len;
    }
  };
  fill();
  for (let ahead = pending.shift(); ahead !== undefined; ahead = pending.shift()) {
    let block = await ahead.read;
    let got = block.chunk.byteLength;
    // A short block that is not the end: the rest of it is read before anything later is given.
    while (got < ahead.len && !block.eof && block.chunk.byteLength > 0) {
      yield block.chunk;
      block = await calls.readBlock(path, handle, ahead.at + got, ahead.len - got);
      got += block.chunk.byteLength;
    }
    if (got !== ahead.len) throw new ApiProblem(409, 'FILE_CHANGED', `${path.native} ended at ${ahead.at + got} bytes while it was read (expected ${end})`);
    fill();
    yield block.chunk;
  }
}
