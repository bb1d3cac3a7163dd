/**
 * Cancellation with an `AbortSignal`, as Node's own APIs do it: an aborted call rejects with
 * `signal.reason` itself (a DOMException named `AbortError` after `controller.abort()`, the value `x`
 * after `controller.abort(x)`), never with a wrapper, so `error === controller.signal.reason` holds.
 */
import type { MonoTypeOperatorFunction } from 'rxjs';
import { Observable } from 'rxjs';

/**
 * Mirrors the source until `signal` aborts, then errors with `signal.reason` and unsubscribes from the
 * source (which tears down whatever it was waiting on). With a signal already aborted it errors at once
 * without subscribing to the source (so nothing is sent). Without a signal it is the source unchanged.
 * The abort listener is removed when the result completes, errors or is unsubscribed.
 */
export function abortable<T>(signal: AbortSignal | undefined): MonoTypeOperatorFunction<T> {
  if (signal === undefined) return (source) => source;
  return (source) =>
    new Observable<T>((subscriber) => {
      if (signal.aborted) {
        subscriber.error(signal.reason);
        return undefined;
      }
      const onAbort = (): void => subscriber.error(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
      const inner = source.subscribe(subscriber);
      return () => {
        signal.removeEventListener('abort', onAbort);
        inner.unsubscribe();
      };
    });
}

/** Promise-level cancellation: see `wire/while-not-aborted` (the client shares it). */
export { whileNotAborted } from '../wire/while-not-aborted';

export type { AbortOptions } from '../wire/shared-types';

/** Whether `error` is the reason of `signal`'s abort (the call failed because it was cancelled). */
export const isAbortOf = (signal: AbortSignal | undefined, error: unknown): boolean => signal !== undefined && signal.aborted && error === signal.reason;
