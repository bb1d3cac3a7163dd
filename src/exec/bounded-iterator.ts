import type { Observable, Subscription } from 'rxjs';
import { ConsumerOverflowError } from '../errors';
import { RingDeque } from './ring-deque';

interface Waiter<T> {
  readonly resolve: (result: IteratorResult<T, undefined>) => void;
  readonly reject: (error: unknown) => void;
}

type Ending = { readonly kind: 'complete' } | { readonly kind: 'error'; readonly error: unknown };

const DONE: IteratorReturnResult<undefined> = Object.freeze({ done: true, value: undefined });

/**
 * Adapts an Observable to `for await`, with a bounded buffer between a fast source and a slow consumer.
 *
 * - Subscribes **eagerly**, when called, so values emitted before the first `next()` (a replay, a hot
 *   source) are buffered, not lost. Hold on to it only to iterate it: release it with `return()` (a
 *   `break` out of `for await` does this), or it stays subscribed until the source ends.
 * - Buffers up to `capacity` values. When a value arrives with the buffer full and no consumer waiting,
 *   the iterator overflows: that value and every later one are counted, never buffered (a silent gap
 *   would be worse). It yields what was buffered before the overflow point, then rejects with
 *   ConsumerOverflowError(missedEvents, capacity) and unsubscribes.
 * - A source error rejects after the buffered values; completion ends the iteration (`done`).
 * - `return()` unsubscribes, drops the buffer and resolves every waiting `next()` as done. After the end
 *   every `next()` resolves done at once: no promise is ever left pending.
 *
 * @throws RangeError when `capacity` is not a non-negative integer.
 */
export function toBoundedAsyncIterable<T>(source: Observable<T>, capacity: number): AsyncIterableIterator<T> {
  if (!Number.isInteger(capacity) || capacity < 0) {
    throw new RangeError(`capacity must be a non-negative integer, got ${capacity}`);
  }
  return new BoundedIterator(source, capacity);
}

class BoundedIterator<T> implements AsyncIterableIterator<T> {
  private readonly buffer = new RingDeque<T>();
  private readonly waiters = new RingDeque<Waiter<T>>();
  private readonly subscription: Subscription;
  private missed = 0;
  private ending: Ending | undefined;
  private finished = false;

  constructor(
    source: Observable<T>,
    private readonly capacity: number,
  ) {
    this.subscription = source.subscribe({
      next: (value) => this.onValue(value),
      error: (error: unknown) => this.onEnd({ kind: 'error', error }),
      complete: () => this.onEnd({ kind: 'complete' }),
    });
    // A source that ended synchronously, or an overflow during a synchronous replay, is settled on next().
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<T> {
    return this;
  }

  next(): Promise<IteratorResult<T, undefined>> {
    // Length checked first: the front slot holds a T (and T itself may include undefined).
    if (this.buffer.length > 0) return Promise.resolve({ value: this.buffer.shift() as T, done: false });
    if (this.finished) return Promise.resolve(DONE);
    if (this.missed > 0) return this.settle(new ConsumerOverflowError(this.missed, this.capacity));
    if (this.ending !== undefined) {
      return this.ending.kind === 'error' ? this.settle(this.ending.error) : this.settle(undefined);
    }
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  return(): Promise<IteratorResult<T, undefined>> {
    this.finish();
    this.buffer.clear();
    return Promise.resolve(DONE);
  }

  private onValue(value: T): void {
    if (this.missed > 0) {
      this.missed += 1;
      return;
    }
    const waiter = this.waiters.shift(); // consumers only wait on an empty buffer
    if (waiter !== undefined) waiter.resolve({ value, done: false });
    else if (this.buffer.length < this.capacity) this.buffer.push(value);
    else this.missed = 1;
  }

  private onEnd(ending: Ending): void {
    if (this.missed > 0) return; // the overflow happened first and is what the consumer will hear about
    this.ending = ending;
    const waiter = this.waiters.shift();
    if (waiter === undefined) return;
    if (ending.kind === 'error') waiter.reject(ending.error);
    else waiter.resolve(DONE);
    this.finish();
  }

  /** Ends the iteration with `error` (or done when undefined), after everything buffered was taken. */
  private settle(error: unknown): Promise<IteratorResult<T, undefined>> {
    this.finish();
    return error === undefined ? Promise.resolve(DONE) : Promise.reject(error);
  }

  private finish(): void {
    this.finished = true;
    this.subscription.unsubscribe();
    for (let waiter = this.waiters.shift(); waiter !== undefined; waiter = this.waiters.shift()) waiter.resolve(DONE);
  }
}
