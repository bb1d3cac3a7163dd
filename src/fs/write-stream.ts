import type { Observable } from 'rxjs';
import { isObservable, lastValueFrom } from 'rxjs';
import { takeWhile } from 'rxjs/operators';
import { ConsumerOverflowError, HandleLostError, TransportClosedError } from '../errors';
import type { CallOptions } from '../rpc/rpc-connection';
import type { HandleBinding } from './handle-binding';

/** What to write, checked by the caller. */
export interface WritePlan {
  readonly blockSize: number;
  readonly inFlight: number;
  readonly maxBufferedChunks: number;
  readonly onProgress: ((bytesWritten: number) => void) | undefined;
  readonly call: CallOptions;
}

/** The sources `writeStream` takes. */
export type WriteSource = AsyncIterable<Uint8Array> | Observable<Uint8Array>;

/**
 * Writes `source` through a `replace` handle: opens it, pulls the source only while fewer than
 * `inFlight` `fs/writeBlock`s are outstanding, re-chunks what it pulls into blocks of at most `blockSize`
 * at consecutive offsets, then waits for every block and sends `fs/close`. Resolves with the bytes
 * written. On any failure it releases the handle, ends the source (`return()`) and rejects: a drop
 * (TransportClosedError) becomes {@link HandleLostError} (a write handle is never reopened), an abort
 * rejects with the signal's reason, otherwise the first error (the open's, a block's, the source's).
 */
export async function writeFrom(binding: HandleBinding, source: WriteSource, plan: WritePlan): Promise<number> {
  const iterator = (isObservable(source) ? bufferedSource(source, plan.maxBufferedChunks) : source)[Symbol.asyncIterator]();
  const blocks = new Rechunker(iterator, plan.blockSize);
  const { signal } = plan.call;
  const writes = new Set<Promise<void>>();
  let failure: { readonly error: unknown } | undefined;
  let offset = 0;
  let acknowledged = 0;
  const check = (): void => {
    if (failure !== undefined) throw failure.error;
    signal?.throwIfAborted();
  };
  try {
    await abortable(lastValueFrom(binding.open(plan.call), { defaultValue: undefined }), signal);
    for (;;) {
      while (writes.size >= plan.inFlight && failure === undefined) await Promise.race(writes);
      check();
      const block = await abortable(blocks.next(), signal);
      check();
      if (block === undefined) break;
      const at = offset;
      offset += block.byteLength;
      const write: Promise<void> = lastValueFrom(binding.write(at, block, plan.call), { defaultValue: undefined })
        .then(
          () => {
            acknowledged += block.byteLength;
            plan.onProgress?.(acknowledged);
          },
          (error: unknown) => {
            failure ??= { error };
          },
        )
        .finally(() => writes.delete(write));
      writes.add(write);
    }
    await Promise.all(writes);
    check();
    await lastValueFrom(binding.release(plan.call), { defaultValue: undefined });
    return offset;
  } catch (error: unknown) {
    binding.release().subscribe({ error: () => undefined });
    iterator.return?.().catch(() => undefined);
    throw error instanceof TransportClosedError ? new HandleLostError(binding.params.handleId, { cause: error }) : error;
  }
}

/** Re-chunks a source into blocks of at most `size` bytes, pulling only when it has less than a block. */
class Rechunker {
  private parts: Uint8Array[] = [];
  private held = 0;
  private ended = false;

  constructor(
    private readonly source: AsyncIterator<Uint8Array>,
    private readonly size: number,
  ) {}

  /** The next block, or undefined after the source ended and everything was handed out. */
  async next(): Promise<Uint8Array | undefined> {
    while (this.held < this.size && !this.ended) {
      const pulled = await this.source.next();
      if (pulled.done === true) this.ended = true;
      else if (pulled.value.byteLength > 0) {
        this.parts.push(pulled.value);
        this.held += pulled.value.byteLength;
      }
    }
    if (this.held === 0) return undefined;
    const joined = this.parts.length === 1 ? (this.parts[0] ?? new Uint8Array(0)) : Buffer.concat(this.parts);
    const block = joined.subarray(0, this.size);
    const rest = joined.subarray(block.byteLength);
    this.parts = rest.byteLength > 0 ? [rest] : [];
    this.held = rest.byteLength;
    return block;
  }
}

/** Rejects with the signal's reason when it aborts first. */
function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/**
 * An Observable cannot be paced: its chunks are buffered until pulled, at most `capacity` of them. One
 * more, with none taken, overflows: the iteration rejects with ConsumerOverflowError and unsubscribes.
 * Subscribes when the iterator is made (by `writeFrom`, synchronously), so a hot source's first chunks
 * are kept while the file opens; `return()` unsubscribes.
 */
function bufferedSource(source: Observable<Uint8Array>, capacity: number): AsyncIterable<Uint8Array> {
  return {
    [Symbol.asyncIterator]: (): AsyncIterator<Uint8Array> => {
      const queue: Uint8Array[] = [];
      let ending: { readonly error: unknown } | 'done' | undefined;
      let wake: (() => void) | undefined;
      const settle = (end: { readonly error: unknown } | 'done'): void => {
        ending ??= end;
        wake?.();
      };
      let subscription: { unsubscribe(): void } | undefined;
      const start = (): void => {
        // takeWhile: a synchronous source that overflowed is unsubscribed at its next value.
        subscription ??= source.pipe(takeWhile(() => ending === undefined)).subscribe({
          next: (chunk) => {
            if (queue.length >= capacity) {
              settle({ error: new ConsumerOverflowError(1, capacity) });
              subscription?.unsubscribe();
              return;
            } else queue.push(chunk);
            wake?.();
          },
          error: (error: unknown) => settle({ error }),
          complete: () => settle('done'),
        });
      };
      start();
      const next = async (): Promise<IteratorResult<Uint8Array, undefined>> => {
        for (;;) {
          const overflowed = ending !== undefined && ending !== 'done' && ending.error instanceof ConsumerOverflowError;
          const chunk = overflowed ? undefined : queue.shift();
          if (chunk !== undefined) return { value: chunk, done: false };
          if (ending === 'done') return { value: undefined, done: true };
          if (ending !== undefined) throw ending.error;
          await new Promise<void>((resolve) => (wake = resolve));
          wake = undefined;
        }
      };
      return {
        next,
        return: (): Promise<IteratorResult<Uint8Array, undefined>> => {
          subscription?.unsubscribe();
          ending ??= 'done';
          return Promise.resolve({ value: undefined, done: true });
        },
      };
    },
  };
}
