/**
 * The calls a Redis adapter has under way (the state store's, the ticket store's): each kept until it
 * settles, so that a flush or a close waits for them; Redis's own failures as StoreUnavailableError; none
 * once closed (ClosedError).
 */
import { ClosedError } from '../../errors';
import { asStoreError } from './redis-records';

/** One adapter's calls under way (see the module's doc). Holds no timer or connection. */
export class RedisCalls {
  private readonly pending = new Set<Promise<unknown>>();
  private closed = false;

  /** `closedMessage`: what a call after {@link close} rejects with (ClosedError). */
  constructor(private readonly closedMessage: string) {}

  /** `task`'s promise, kept until it settles; ClosedError once closed; Redis's own failures as StoreUnavailableError. */
  run<T>(task: () => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new ClosedError(this.closedMessage));
    const promise = task().catch((error: unknown) => Promise.reject(asStoreError(error)));
    this.pending.add(promise);
    const settled = (): void => void this.pending.delete(promise);
    promise.then(settled, settled);
    return promise;
  }

  /** Resolves once every call made so far settled. Never rejects. */
  settled(): Promise<void> {
    return Promise.allSettled([...this.pending]).then(() => undefined);
  }

  /** Refuses every later call; resolves once the calls made so far settled. Never rejects. */
  close(): Promise<void> {
    this.closed = true;
    return this.settled();
  }
}
