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

/**
 * Runs `run()` unless `signal` has already aborted (then rejects at once with `signal.reason`, and
 * `run` is never called); rejects with `signal.reason` when it aborts before `run()`'s promise settles,
 * else settles as that promise does. It does not stop what `run` started: pass the signal down to the
 * calls `run` makes so they stop too.
 */
export function whileNotAborted<T>(signal: AbortSignal | undefined, run: () => Promise<T>): Promise<T> {
  if (signal === undefined) return run();
  if (signal.aborted) return Promise.reject(signal.reason as unknown);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason as unknown);
    signal.addEventListener('abort', onAbort, { once: true });
    run().then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

export type { AbortOptions } from '../wire/shared-types';

/** Whether `error` is the reason of `signal`'s abort (the call failed because it was cancelled). */
export const isAbortOf = (signal: AbortSignal | undefined, error: unknown): boolean => signal !== undefined && signal.aborted && error === signal.reason;
