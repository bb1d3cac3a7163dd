import { Observable, throwError } from 'rxjs';
import * as E from 'fp-ts/lib/Either';
import { AbortedError } from '../errors';
import type { MethodName, ResultOf } from '../wire/methods';
import { decodeResult } from '../wire/methods';

/** Emits `result` decoded with the method's result codec, or errors with the DecodeError naming the path. */
export const decoded = <M extends MethodName>(method: M, result: unknown): Observable<ResultOf<M>> => {
  const outcome = decodeResult(method, result);
  if (E.isLeft(outcome)) return throwError(() => outcome.left);
  return new Observable<ResultOf<M>>((subscriber) => {
    subscriber.next(outcome.right);
    subscriber.complete();
  });
};

/** Mirrors `source`, but errors with AbortedError when `signal` aborts; removes its listener on teardown. */
export const abortable = <T>(source: Observable<T>, signal: AbortSignal, method: string): Observable<T> =>
  new Observable<T>((subscriber) => {
    const onAbort = (): void => subscriber.error(new AbortedError(method));
    signal.addEventListener('abort', onAbort, { once: true });
    const inner = source.subscribe(subscriber);
    return () => {
      signal.removeEventListener('abort', onAbort);
      inner.unsubscribe();
    };
  });
