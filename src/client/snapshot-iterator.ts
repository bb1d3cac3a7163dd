/**
 * An Observable of snapshots (each value the whole state: the overview, a process list) as an async
 * iterator for `for await`, with a bounded buffer: a consumer slower than the changes skips the older
 * snapshots it has not read, never the newest, and memory stays bounded.
 */
import type { Observable, Subscription } from 'rxjs';

/** Default {@link SnapshotIteratorOptions.bufferSize}. */
export const DEFAULT_SNAPSHOT_BUFFER = 16;

/** Options of the snapshot iterators (`HostClient.environments`, `HostClient.processes`). */
export interface SnapshotIteratorOptions {
  /**
   * How many snapshots may wait unread. Past it the oldest waiting one is dropped: each snapshot is the
   * whole state, so the consumer skips intermediate states, never the latest. A whole number ≥ 1, else a
   * RangeError. @default 16
   */
  readonly bufferSize?: number;
  /** Aborting ends the iteration: the `next()` waiting or to come rejects with `signal.reason`, and the stream closes. */
  readonly signal?: AbortSignal;
}

type End = { readonly kind: 'done' } | { readonly kind: 'error'; readonly error: unknown };

/**
 * Subscribes to `source$` when the first `next()` is called; each `next()` resolves with the oldest
 * waiting snapshot, or the next to come. The source's error rejects the `next()` that reaches it (after
 * every snapshot before); its completion ends the iteration. `return()` (a `break` out of the loop) and
 * `onClose` unsubscribe, which closes the HTTP stream. `onClose` is told when the iterator ends, however.
 */
export function snapshotIterator<T>(
  source$: Observable<T>,
  options: SnapshotIteratorOptions = {},
  onClose: () => void = () => undefined,
): AsyncIterableIterator<T> & { close(reason: unknown): void } {
  const bufferSize = options.bufferSize ?? DEFAULT_SNAPSHOT_BUFFER;
  if (!Number.isSafeInteger(bufferSize) || bufferSize < 1) throw new RangeError(`bufferSize must be a whole number >= 1 (got ${bufferSize})`);
  const waiting: T[] = [];
  let end: End | undefined;
  let subscription: Subscription | undefined;
  let wake: (() => void) | undefined;
  const { signal } = options;
  const finish = (why: End): void => {
    end ??= why;
    subscription?.unsubscribe();
    signal?.removeEventListener('abort', onAbort);
    onClose();
    wake?.();
  };
  const onAbort = (): void => finish({ kind: 'error', error: signal?.reason });
  const open = (): void => {
    if (subscription !== undefined || end !== undefined) return;
    if (signal?.aborted === true) return onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    subscription = source$.subscribe({
      next: (value) => {
        waiting.push(value);
        if (waiting.length > bufferSize) waiting.shift();
        wake?.();
      },
      error: (error: unknown) => finish({ kind: 'error', error }),
      complete: () => finish({ kind: 'done' }),
    });
    // A source that ended while subscribing leaves nothing open.
    if (end !== undefined) subscription.unsubscribe();
  };
  const iterator = {
    async next(): Promise<IteratorResult<T, undefined>> {
      open();
      for (;;) {
        // An abort wins over what waits: the caller asked to stop.
        if (end?.kind === 'error' && signal?.aborted === true) throw end.error;
        const value = waiting.shift();
        if (value !== undefined) return { done: false, value };
        if (end !== undefined) {
          if (end.kind === 'error') throw end.error;
          return { done: true, value: undefined };
        }
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
      }
    },
    return(): Promise<IteratorResult<T, undefined>> {
      waiting.length = 0;
      finish({ kind: 'done' });
      return Promise.resolve({ done: true, value: undefined });
    },
    /** Ends the iteration from outside (the client is disposed): the `next()` waiting rejects with `reason`. */
    close(reason: unknown): void {
      waiting.length = 0;
      finish({ kind: 'error', error: reason });
    },
    [Symbol.asyncIterator]() {
      return iterator;
    },
  };
  return iterator;
}
